"""Inputs for a fuzz target with hypothesis: random bytes, and sequences of the
target's format fragments (its tokens) mixed with random bytes."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.fuzz.targets import Target


def inputs_for(target: Target) -> st.SearchStrategy[bytes]:
    piece = st.one_of(
        st.sampled_from(target.tokens),
        st.binary(min_size=1, max_size=16),
        st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass")),
    )
    cap = min(target.max_input, 4096)
    return st.one_of(
        st.binary(max_size=cap),
        st.lists(piece, max_size=96).map(b"".join),
    )
