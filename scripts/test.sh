#!/usr/bin/env bash
# Installs everything the tests need into .venv and runs lint, types and the test suite.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
# pywb, for the test that replays a crawl from headway's own index, in a venv of its own
# (its dependencies are not headway's). A failed install is reported; that test then
# skips and names the log.
if [ ! -x .venv-pywb/bin/wayback ]; then
    echo "== pywb (for the replay test)"
    rm -rf .venv-pywb
    if ! { "$PY" -m venv .venv-pywb \
        && .venv-pywb/bin/python -m pip install --quiet "pywb>=2.8,<3"; } >.pywb-install.log 2>&1; then
        echo "pywb could not be installed (see .pywb-install.log): its replay test will skip"
    fi
fi
# The Redis backend's tests start their own redis-server processes (Debian's package).
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "== installing redis-server (apt)"
        SUDO=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            redis-server >/dev/null
    else
        echo "redis-server is not installed and apt-get is unavailable: install Redis 6+" >&2
    fi
fi
# The console's browser tests drive Debian's chromium (headless); without it they skip
# and say why.
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "== installing chromium (apt, for the console's browser tests)"
        SUDO=""
        if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
        $SUDO apt-get update -qq
        if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
            chromium >/dev/null; then
            echo "chromium could not be installed: the console's browser tests will skip"
        fi
    else
        echo "chromium is not installed and apt-get is unavailable: the browser tests skip"
    fi
fi
echo "== ruff"
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/ruff format --check src tests benchmarks scripts
echo "== mypy (strict, src)"
.venv/bin/mypy src
# Most tests wait (politeness gaps, time-outs, servers going away) far more than they
# compute, so they run in parallel workers; the few that measure time or memory (marked
# "serial") run alone afterwards. HEADWAY_TEST_WORKERS=1 runs everything in one process.
WORKERS="${HEADWAY_TEST_WORKERS:-3}"
status=0
if [ "$WORKERS" -gt 1 ]; then
    echo "== pytest ($WORKERS workers; the timing- and memory-sensitive tests after, alone)"
    .venv/bin/python -m pytest -q -n "$WORKERS" --dist worksteal -m "not serial" "$@" || status=$?
    serial=0
    .venv/bin/python -m pytest -q -m serial "$@" || serial=$?
else
    echo "== pytest"
    .venv/bin/python -m pytest -q "$@" || status=$?
    serial=0
fi
# exit status 5: no test selected in that phase (e.g. -k matched none of its tests)
[ "$status" -eq 5 ] && status=0
[ "$serial" -eq 5 ] && serial=0
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$serial"
