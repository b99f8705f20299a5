"""Loaded at start-up by a crawl run with this folder first on ``PYTHONPATH``: the
crawl's fetch stage takes the lean prototype path of ``benchmarks/fetch_prototypes.py``
(asyncio protocols and llhttp). A benchmark's A/B switch, never part of headway:

    .venv/bin/python -m headway.cli bench \
        --before-src "$PWD/benchmarks/fetch_ab:$PWD/src" --gaps 0 1 --repeat 3

runs each case first with the prototype ("before") and then with headway's own client.
(The libcurl prototype became the crawler's libcurl client: ``headway bench
--http-client aiohttp curl`` compares it with aiohttp.)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fetch_prototypes

fetch_prototypes.install_lean_fetch()
