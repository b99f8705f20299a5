#!/usr/bin/env bash
# Installs everything the tests need into .venv and runs lint, types and the test suite.
# Usage: bash scripts/test.sh [extra pytest args]
#
# The test environment comes from the versions pinned in constraints/ (test.txt, build.txt,
# pywb.txt), so that a release elsewhere cannot break a build; users of the package get
# the ranges of pyproject.toml. HEADWAY_TEST_NEWEST=1 runs the same suite against the
# newest releases the ranges allow instead, in virtualenvs of its own (.venv-newest,
# .venv-newest-pywb), to see what moving the pins would need (scripts/lock.sh moves them).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ "${HEADWAY_TEST_NEWEST:-0}" = "1" ]; then
    VENV=.venv-newest
    PYWB_VENV=.venv-newest-pywb
    PINS=()
    PYWB_PINS=()
    UPGRADE=(--upgrade --upgrade-strategy eager)
    echo "== the newest releases the ranges allow (not the pins of constraints/)"
else
    VENV=.venv
    PYWB_VENV=.venv-pywb
    PINS=(-c constraints/test.txt --build-constraint constraints/build.txt)
    PYWB_PINS=(-c constraints/pywb.txt)
    UPGRADE=()
fi
PIP_PIN="$(grep -E '^pip==' constraints/test.txt)"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
if [ "${#PINS[@]}" -gt 0 ]; then
    "$VENV/bin/python" -m pip install --quiet "$PIP_PIN"
else
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
"$VENV/bin/python" -m pip install --quiet "${PINS[@]}" "${UPGRADE[@]}" -e ".[test]"
# pywb, for the test that replays a crawl from headway's own index, in a venv of its own
# (its dependencies are not headway's: it pins redis 2.10). A failed install is reported;
# that test then skips and names the log.
if [ ! -x "$PYWB_VENV/bin/wayback" ]; then
    echo "== pywb (for the replay test)"
    rm -rf "$PYWB_VENV"
    if ! { "$PY" -m venv "$PYWB_VENV" \
        && "$PYWB_VENV/bin/python" -m pip install --quiet "${PYWB_PINS[@]}" "pywb>=2.8,<3"; } \
        >.pywb-install.log 2>&1; then
        echo "pywb could not be installed (see .pywb-install.log): its replay test will skip"
    fi
fi
export PYWB_WAYBACK="$PWD/$PYWB_VENV/bin/wayback"
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
"$VENV/bin/ruff" check src tests benchmarks scripts
"$VENV/bin/ruff" format --check src tests benchmarks scripts
echo "== mypy (strict, src)"
"$VENV/bin/mypy" src
# Most tests wait (politeness gaps, time-outs, servers going away) far more than they
# compute, so they run in parallel workers; the few that measure time or memory (marked
# "serial") run alone afterwards. HEADWAY_TEST_WORKERS=1 runs everything in one process.
WORKERS="${HEADWAY_TEST_WORKERS:-3}"
status=0
if [ "$WORKERS" -gt 1 ]; then
    echo "== pytest ($WORKERS workers; the timing- and memory-sensitive tests after, alone)"
    "$VENV/bin/python" -m pytest -q -n "$WORKERS" --dist worksteal -m "not serial" "$@" || status=$?
    serial=0
    "$VENV/bin/python" -m pytest -q -m serial "$@" || serial=$?
else
    echo "== pytest"
    "$VENV/bin/python" -m pytest -q "$@" || status=$?
    serial=0
fi
# exit status 5: no test selected in that phase (e.g. -k matched none of its tests)
[ "$status" -eq 5 ] && status=0
[ "$serial" -eq 5 ] && serial=0
if [ "$status" -ne 0 ]; then exit "$status"; fi
exit "$serial"
