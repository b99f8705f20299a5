"""The language of a page's text (pure; runs in parser processes).

Contract of ``identify(text)``: ISO 639-3 codes of the languages the text is most
likely in, most likely first, at most ``MAX_LANGUAGES``; empty when the text has fewer
than ``MIN_LETTERS`` letters or no language profile is near enough. The identifier is
resiliparse's ``detect_fast`` (byte n-gram profiles of 101 languages, shipped inside the
package: nothing is downloaded). It reads the first ``MAX_CHARS`` characters, so its
cost is bounded whatever the page. A second or third code is given only when its
profile is within ``RUNNER_UP_MARGIN`` of the best one (the text is then ambiguous
between them, as between Bosnian, Croatian and Serbian in Latin script).
"""

from __future__ import annotations

import unicodedata
from typing import cast

__all__ = ["ISO_639_3", "MAX_CHARS", "MAX_LANGUAGES", "identify"]

#: Characters of text read.
MAX_CHARS = 20_000
MAX_LANGUAGES = 3
#: Fewer letters than this: no language given.
MIN_LETTERS = 20
#: Out-of-place rank above which resiliparse's own documentation calls a result false.
CUTOFF = 1200
#: How far (in rank) a runner-up may be from the best profile and still be named.
RUNNER_UP_MARGIN = 40

#: resiliparse's ISO 639-1 codes -> ISO 639-3 (macrolanguage codes where 639-1 names
#: one: ``zho``, ``fas``, ``ara``, ``nor``, ...).
ISO_639_3 = {
    "af": "afr", "ar": "ara", "as": "asm", "az": "aze", "ba": "bak", "be": "bel",
    "bg": "bul", "bn": "ben", "bo": "bod", "br": "bre", "ca": "cat", "ce": "che",
    "cs": "ces", "cv": "chv", "cy": "cym", "da": "dan", "de": "deu", "dv": "div",
    "el": "ell", "en": "eng", "eo": "epo", "es": "spa", "et": "est", "eu": "eus",
    "fa": "fas", "fi": "fin", "fo": "fao", "fr": "fra", "fy": "fry", "ga": "gle",
    "gd": "gla", "gl": "glg", "gu": "guj", "ha": "hau", "he": "heb", "hi": "hin",
    "hr": "hrv", "hu": "hun", "hy": "hye", "id": "ind", "io": "ido", "is": "isl",
    "it": "ita", "ja": "jpn", "jv": "jav", "ka": "kat", "kk": "kaz", "km": "khm",
    "kn": "kan", "ko": "kor", "ku": "kur", "ky": "kir", "la": "lat", "lb": "ltz",
    "lt": "lit", "lv": "lav", "mg": "mlg", "mk": "mkd", "ml": "mal", "mn": "mon",
    "mr": "mar", "mt": "mlt", "my": "mya", "ne": "nep", "nl": "nld", "no": "nor",
    "or": "ori", "pa": "pan", "pl": "pol", "ps": "pus", "pt": "por", "rm": "roh",
    "ro": "ron", "ru": "rus", "sa": "san", "sc": "srd", "sd": "snd", "si": "sin",
    "sk": "slk", "sl": "slv", "so": "som", "sq": "sqi", "sr": "srp", "sv": "swe",
    "sw": "swa", "ta": "tam", "te": "tel", "tg": "tgk", "th": "tha", "tk": "tuk",
    "tl": "tgl", "tr": "tur", "tt": "tat", "ug": "uig", "uk": "ukr", "ur": "urd",
    "uz": "uzb", "vi": "vie", "vo": "vol", "yi": "yid", "zh": "zho",
}  # fmt: skip


def _letters(text: str, at_least: int) -> bool:
    n = 0
    for ch in text:
        if ch.isalpha():
            n += 1
            if n >= at_least:
                return True
    return False


def identify(text: str) -> tuple[str, ...]:
    """ISO 639-3 codes, most likely first (see the module contract)."""
    from resiliparse.parse.lang import detect_fast

    sample = text[:MAX_CHARS]
    if not _letters(sample, MIN_LETTERS):
        return ()
    sample = unicodedata.normalize("NFC", sample)
    # with n_results > 1 it returns a list of (code, rank)
    found = cast(list[tuple[str, int]], detect_fast(sample, cutoff=CUTOFF, n_results=MAX_LANGUAGES))
    if not found:
        return ()
    best = found[0][1]
    return tuple(
        ISO_639_3.get(code, code) for code, rank in found if rank <= best + RUNNER_UP_MARGIN
    )
