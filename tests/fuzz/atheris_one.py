"""One target under atheris (run by ``python -m tests.fuzz``): headway's modules are
imported instrumented, so libFuzzer sees the coverage of their Python code."""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["headway"]):
    from tests.fuzz.targets import TARGETS

from tests.fuzz.engine import atheris_main

if __name__ == "__main__":
    atheris_main(TARGETS[sys.argv[1]], sys.argv[2:])
