"""The repository holds only itself: no tracked symbolic link leads out of the tree (or to
itself), and no tracked text names a path of the machine it was written on. A clone alone
runs every test."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str, found_nothing: int | None = None) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode not in (0, found_nothing):
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _tracked_links() -> dict[str, str]:
    """Tracked symbolic links (mode 120000): path -> the target as committed."""
    links = {}
    for line in _git("ls-files", "-s", "-z").split("\0"):
        if line.startswith("120000 "):
            meta, path = line.split("\t", 1)
            blob = meta.split()[1]
            links[path] = _git("cat-file", "blob", blob)
    return links


def link_problem(path: str, target: str) -> str | None:
    """Why a tracked link at ``path`` (relative to the root) to ``target`` may not be kept,
    or None when it stays inside the tree and leads somewhere else."""
    if target.startswith("/") or (len(target) > 1 and target[1] == ":"):
        return f"{path} -> {target}: an absolute path"
    here = PurePosixPath(path).parent
    parts: list[str] = []
    for part in (here / target).parts:
        if part == "..":
            if not parts:
                return f"{path} -> {target}: leads out of the repository"
            parts.pop()
        elif part != ".":
            parts.append(part)
    if "/".join(parts) == path:
        return f"{path} -> {target}: points at itself"
    return None


@pytest.mark.parametrize(
    ("path", "target", "refused"),
    [
        (".venv-main", "/home/dev/headway/.venv", True),
        (".venv-pywb", "/srv/x/.venv-pywb", True),
        ("a/b", "../../outside", True),
        ("a/b", "b", True),
        ("a", "a", True),
        ("a/b", "../c/d", False),
        ("docs/x.png", "../examples/x.png", False),
    ],
)
def test_link_rule(path: str, target: str, refused: bool) -> None:
    assert (link_problem(path, target) is not None) is refused


def test_no_tracked_link_leads_out_of_the_tree() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing tracked to read")
    problems = [p for path, t in _tracked_links().items() if (p := link_problem(path, t))]
    assert problems == []


def test_no_tracked_file_names_this_machines_paths() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing tracked to read")
    found = _git("grep", "-l", "-F", "-e", f"{ROOT}/", "--", ".", found_nothing=1).split()
    assert found == []
