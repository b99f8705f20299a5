"""Puts the root of the checkout on ``sys.path``, so that a benchmark run as a script
(``python benchmarks/bench_x.py``) can import the test helpers in ``tests/support``
(a throwaway redis-server, the hostile web, a crawl's command line), which are not
part of the installed package. Import it before them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
