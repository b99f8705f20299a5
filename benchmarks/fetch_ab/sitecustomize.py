"""Loaded at start-up by a crawl run with this folder first on ``PYTHONPATH``: the
crawl's fetch stage takes a prototype path of ``benchmarks/fetch_prototypes.py``,
``FETCH_PROTOTYPE=lean`` (the default: asyncio protocols and llhttp) or ``curl``
(libcurl's multi interface). A benchmark's A/B switch, never part of headway:

    FETCH_PROTOTYPE=curl .venv/bin/python -m headway.cli bench \\
        --before-src "$PWD/benchmarks/fetch_ab:$PWD/src" --gaps 0 1 --repeat 3

runs each case first with the prototype ("before") and then with headway's own client.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import fetch_prototypes

if os.environ.get("FETCH_PROTOTYPE", "lean") == "curl":
    fetch_prototypes.install_curl_fetch()
else:
    fetch_prototypes.install_lean_fetch()
