#!/usr/bin/env bash
# Moves the test environment's pins (constraints/) to the newest releases that
# pyproject.toml's ranges allow: installs them into fresh virtualenvs, writes their exact
# versions into constraints/test.txt, constraints/build.txt and constraints/pywb.txt, and
# prints what moved. Run the suite (bash scripts/test.sh) before committing the new pins,
# with whatever fix they need.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp constraints/test.txt constraints/build.txt constraints/pywb.txt "$work/"
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet ".[test,fuzz]"
pip_version="$("$work/venv/bin/python" -m pip --version | cut -d' ' -f2)"
setuptools_version="$("$work/venv/bin/python" -m pip index versions setuptools 2>/dev/null \
    | sed -n 's/^setuptools (\(.*\))$/\1/p')"
{
    sed -n '1,/^pip==/p' "$work/test.txt" | sed '$d'
    echo "pip==$pip_version"
    "$work/venv/bin/python" -m pip freeze --exclude-editable | grep -v -E '^(pip|headway)[= ]'
} >constraints/test.txt
{
    sed -n '/^#/p' "$work/build.txt"
    echo "setuptools==${setuptools_version:?cannot read the newest setuptools}"
} >constraints/build.txt
"$PY" -m venv "$work/pywb"
"$work/pywb/bin/python" -m pip install --quiet "pywb>=2.8,<3"
{
    sed -n '/^#/p' "$work/pywb.txt"
    "$work/pywb/bin/python" -m pip freeze | grep -v -E '^pip=='
} >constraints/pywb.txt
for f in test build pywb; do
    diff -u "$work/$f.txt" "constraints/$f.txt" || true
done
echo "pins written; now: bash scripts/test.sh, then commit constraints/ with any fix"
