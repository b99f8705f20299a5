"""SimHash: stable, near for small edits, far for different text."""

from __future__ import annotations

import hashlib
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from headway.parse import simhash as simhash_module
from headway.parse.page import parse_page
from headway.parse.simhash import K1, K2, MAX_FEATURES, NEAR_DUPLICATE_BITS, hamming, simhash

WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa")


def text(seed: int, n: int = 400) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) + str(rng.randrange(50)) for _ in range(n))


def reference_simhash(text: str) -> int:
    """Charikar's SimHash written out bit by bit, as the module contract states it."""
    for ch in string.punctuation:
        text = text.replace(ch, " ")
    words = text.lower().split()

    def h(w: str) -> int:
        return int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "big")

    if len(words) < 3:
        features = [h(w) for w in words]
    else:
        features = [
            (h(words[i]) * K1 + h(words[i + 1]) * K2 + h(words[i + 2])) % 2**64
            for i in range(len(words) - 2)
        ][:MAX_FEATURES]
    votes = [0] * 64
    for f in features:
        for bit in range(64):
            votes[bit] += 1 if f >> bit & 1 else -1
    return sum(1 << bit for bit in range(64) if votes[bit] > 0)


@pytest.mark.parametrize(
    "sample",
    [
        "",
        "!!! ...",
        "hello",
        "one two",
        "one two three four",
        "Ünïcode wörds ẞ 42",
        text(5),
        text(6, 7),
    ],
)
def test_matches_the_reference(sample: str) -> None:
    assert simhash(sample) == reference_simhash(sample)
    assert simhash(sample.upper()) == simhash(sample.lower())


@pytest.mark.parametrize(
    ("edit", "near"),
    [
        (lambda t: t, True),
        (lambda t: t.replace(t.split()[100], "2024-05-01", 1), True),
        (lambda t: t + " sponsored offer buy now limited deal click here", True),
        (lambda t: "Session abc123def " + t, True),
        (lambda t: text(99), False),
        (lambda t: " ".join(t.split()[:200]) + " " + text(98, 200), False),
    ],
)
def test_distances(edit: object, near: bool) -> None:
    base = text(1)
    other = edit(base)  # type: ignore[operator]
    distance = hamming(simhash(base), simhash(other))
    assert (distance <= NEAR_DUPLICATE_BITS) is near, distance


def test_hamming() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0, (1 << 64) - 1) == 64
    assert hamming(0b1010, 0b0110) == 2


def test_parse_page_simhash_ignores_markup_scripts_and_styles() -> None:
    body = "<p>" + text(3) + "</p>"
    plain = parse_page("http://a.test/", body.encode())
    decorated = parse_page(
        "http://a.test/",
        (
            "<html><head><style>p { color: red }</style><script>var x = 'lots of words "
            "that are not visible';</script></head><body><div>" + body + "</div>"
            "<template>hidden words here</template></body></html>"
        ).encode(),
    )
    assert plain.simhash is not None and plain.simhash == decorated.simhash
    assert parse_page("http://a.test/", b"").simhash is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([*WORDS, "x", "ünï", "ẞ", "42"]), max_size=MAX_FEATURES + 40))
def test_matches_the_reference_for_any_word_list(words: list[str]) -> None:
    sample = " ".join(words)
    assert simhash(sample) == reference_simhash(sample)


# every character class the word split treats apart: ASCII letters of both cases, digits,
# punctuation, the separators str.split cuts at (0x1C-0x1F among them), other control
# characters, and non-ASCII letters and spaces (which send a text down the other path)
_CHARS = string.ascii_letters + string.digits + string.punctuation + " \t\n\r\x0b\x0c"
_CHARS += "\x1c\x1d\x1e\x1f\x00\x07\x7f"


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_CHARS, max_size=400)
    | st.text(alphabet=_CHARS + "ÜïẞİΣ\u00a0\u2003\u0085", max_size=400)
)
@example("A^Σ")  # a final sigma only while "^" is not yet a space
def test_matches_the_reference_for_any_text(sample: str) -> None:
    assert simhash(sample) == reference_simhash(sample)


def test_word_cache_stays_bounded_and_changes_no_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a cache of 50 words over pages of up to 40 distinct words: emptied and refilled
    # every page or two, and never holding more than its bound, not even for a page
    # with more distinct words than that (hashed without the cache)
    monkeypatch.setattr(simhash_module, "MAX_CACHED_WORDS", 50)
    simhash_module._lanes.clear()
    for seed, words in [(0, 40), (1, 40), (2, 200), (3, 40), (4, 40), (5, 200), (6, 40)]:
        sample = text(seed, words)
        assert simhash(sample) == reference_simhash(sample)
        assert len(simhash_module._lanes) <= 50
        if words == 40:  # this page's words are now in the cache
            assert len(simhash_module._lanes) >= len(set(sample.split()))
    # the same page twice, the second time from the cache
    sample = text(7, 30)
    assert simhash(sample) == simhash(sample) == reference_simhash(sample)
