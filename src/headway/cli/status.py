"""``headway status``: what a crawl holds, read without disturbing a running node. The
frontier's totals are read through the backend the ``store`` setting names (for the
embedded store: the crawl directory's file). When the last statistics record is of a
recrawl run (it scheduled or made revisits), ``last_metrics`` carries its ``recrawl``
counts too."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

from headway.errors import CrawlDirError, StoreError
from headway.frontier.backends import SharedOptions, StoreTarget, backend_for
from headway.runtime.crawldir import MARKER, CrawlPaths, format_note, identity_of, read_marker
from headway.runtime.stats import Decoded, from_json


def read_status(root: Path, store: str = "", crawl_id: str | None = None) -> dict[str, object]:
    paths = CrawlPaths(root)
    if not root.exists():
        raise CrawlDirError(f"{root} does not exist")
    if not (root / MARKER).exists():
        raise CrawlDirError(f"{root} is not a headway crawl directory (no {MARKER})")
    info = read_marker(root / MARKER)
    out: dict[str, object] = {
        "directory": str(root),
        "format": info["format"],
        "node_id": info.get("node_id"),
        "running": _running(root / "lock"),
    }
    identity = identity_of(info)
    out["belongs_to"] = (
        identity.describe() if identity is not None else "not recorded (an earlier version)"
    )
    note = format_note(info["format"])
    if note is not None:
        out["format_note"] = note
    backend = backend_for(store)
    target = StoreTarget(
        store, root, str(info.get("node_id") or ""), shared=SharedOptions(crawl_id=crawl_id)
    )
    try:
        counts = backend.read_counts(target)
    except StoreError as exc:
        raise CrawlDirError(str(exc)) from None
    if counts is not None:
        out["frontier"] = dataclasses.asdict(counts)
    out["paused"] = _paused_by_control(root, str(info.get("node_id") or ""), store)
    if not str(out["running"]).startswith("yes"):
        from headway.store.cdxjsort import looks_sorted

        unsorted = [p.name for p in sorted(root.glob("index*.cdxj")) if not looks_sorted(p)]
        if unsorted:
            out["index"] = (
                f"{', '.join(unsorted)} not sorted: the crawl stopped without closing its "
                "store (kill -9, a crash, power loss); the next run sorts it (the same "
                "headway crawl command)"
            )
    warcs = [p.stat().st_size for p in paths.warc_dir.glob("*.warc.gz")]
    out["warc_files"] = len(warcs)
    out["warc_bytes"] = sum(warcs)
    last = _last_line(paths.metrics)
    if last:
        decoded = decode_record(last)
        st = decoded.stats
        last_metrics: dict[str, object] = {
            "time": st.time,
            # a record is written every --metrics-interval: at a crawl's start the last one
            # is the start-up reading, which its age makes plain
            "age_seconds": round(max(0.0, time.time() - st.time), 1),
            "fetches": st.fetch.fetches,
            "pages_per_second": round(st.fetch.pages_per_second, 2),
            "errors": st.fetch.errors,
            "retry_ratio": round(st.fetch.retry_ratio, 4),
        }
        rc = st.recrawl
        if rc.revisits or rc.scheduled:
            last_metrics["recrawl"] = {
                "revisits": rc.revisits,
                "changed": rc.changed,
                "unchanged": rc.unchanged,
                "not_modified": rc.not_modified,
            }
        out["last_metrics"] = last_metrics
        if "quota" in st.scheduler.paused_for:
            out["paused_for_quota"] = True
        if decoded.missing:
            out["last_metrics_note"] = record_note(decoded)
    return out


def _paused_by_control(root: Path, node: str, store: str) -> bool:
    """Whether the control log leaves this crawl directory's node paused (``headway
    pause``); False when it cannot be read here (a shared crawl's log is in its store)."""
    if store:
        return False
    from headway.control.log import read_all
    from headway.control.state import ControlState, fold
    from headway.control.target import CrawlRef, open_control_log
    from headway.errors import HeadwayError

    try:
        log = open_control_log(CrawlRef(root), read_only=True)
        try:
            controls = read_all(log)
        finally:
            log.close()
    except HeadwayError:
        return False
    return fold(ControlState(), controls, node=node or None).paused


def _running(lock: Path, proc_locks: Path = Path("/proc/locks")) -> str:
    """Whether a node holds the crawl directory's lock: "yes (pid N)", "no", or "unknown"
    where the kernel's lock table cannot be read. Read from the table, not by taking the
    lock, so that a node starting at that moment is never refused because of a status."""
    try:
        st = lock.stat()
    except OSError:
        return "no"
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        table = proc_locks.read_text()
    except OSError:
        return "unknown"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:123456 0 EOF" (blocked waiters: "-> ...")
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
            return f"yes (pid {fields[4]})"
    return "no"


def decode_record(text: str | None) -> Decoded:
    """A statistics record (``NodeStats`` JSON of any version) read back; text that is
    not JSON reads as a record with every field missing."""
    try:
        obj = json.loads(text) if text else None
    except ValueError:
        obj = None
    return from_json(obj)


def record_note(decoded: Decoded) -> str:
    """What a reader should know about a record another version (or nothing) wrote."""
    if decoded.missing == ("(top level)",):
        return "no statistics record"
    shown = ", ".join(decoded.missing[:5])
    more = f" and {len(decoded.missing) - 5} more" if len(decoded.missing) > 5 else ""
    return f"written by another version: {shown}{more} missing"


def _last_line(path: Path, tail: int = 65536) -> str | None:
    """The last complete line of a file, reading only its end."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - tail))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    return lines[-1] if lines else None


def shared_status(store: str, crawl_id: str) -> dict[str, Any]:
    """The shared crawl ``crawl_id`` as a whole and per live node (password masked)."""
    from headway.frontier.redis.status import read_crawl_status

    st = read_crawl_status(store, crawl_id)
    now = time.time()
    nodes = []
    for n in st.nodes:
        decoded = decode_record(n.record)
        f = decoded.stats.fetch
        nodes.append(
            {
                "node": n.node,
                "pages": f.fetches,
                "pages_per_second": round(f.pages_per_second, 2),
                "errors": f.errors,
                "shards_held": n.shards_held,
                "last_heartbeat_age": round(now - n.last_heartbeat, 1),
                "leases_held": decoded.stats.leases.held,
                "software": decoded.stats.software,
                "paused_for": list(decoded.stats.scheduler.paused_for)
                if decoded.stats.scheduler.paused
                else [],
                "note": _node_note(n.record, decoded),
            }
        )
    return {
        "store": st.store,
        "crawl_id": st.crawl_id,
        "shards": st.shards,
        "unowned_shards": st.unowned_shards,
        "frontier": dataclasses.asdict(st.frontier),
        "nodes": nodes,
    }


def _frontier_line(f: dict[str, Any]) -> str:
    parked = f.get("revisits_parked") or 0
    # leased, not "in flight": a leased URL may be fetching, or waiting in a node's
    # pipeline for its host's turn, a parser or the store
    return (
        f"queued {f['queued']:,}, leased {f['leased']:,}, done {f['done']:,}, "
        f"failed {f['failed']:,}, seen {f['seen']:,}, hosts with URLs queued "
        f"{f['hosts_queued']:,}" + (f", waiting for a revisit {parked:,}" if parked else "")
    )


def _shed_text(f: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(f.get("shed", {}).items()) if v) or "none"


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def shared_state(status: dict[str, Any]) -> str:
    """The shared crawl's state in words: running (on how many nodes), finished, or
    stopped with work left and no node to do it."""
    f = status["frontier"]
    nodes = len(status["nodes"])
    left = f["queued"] + f["leased"]
    if nodes:
        shards = status["unowned_shards"]
        orphan = f", {shards} of {status['shards']} shards without a node" if shards else ""
        return f"running on {nodes} node{'' if nodes == 1 else 's'}{orphan}"
    if left == 0:
        return "finished: nothing queued or in flight, and no node running"
    return (
        f"stopped: no node running, {left:,} URLs left (headway node --store ... "
        "--crawl-id ... continues it)"
    )


def shared_status_lines(status: dict[str, Any]) -> list[str]:
    """``headway status --store ... --crawl-id ...`` as text: the state, the frontier,
    and a row per live node."""
    f = status["frontier"]
    lines = [
        f"crawl {status['crawl_id']} in {status['store']}",
        f"  state     {shared_state(status)}",
        f"  frontier  {_frontier_line(f)}",
        f"  shed      {_shed_text(f)}",
    ]
    if not status["nodes"]:
        return lines
    head = ("node", "pages", "pages/s", "errors", "shards", "heartbeat")
    lines.append("  {:<28} {:>9} {:>8} {:>7} {:>6} {:>10}".format(*head))
    for n in status["nodes"]:
        lines.append(
            f"  {n['node']:<28} {n['pages']:>9,} {n['pages_per_second']:>8.1f} {n['errors']:>7,}"
            f" {n['shards_held']:>6} {n['last_heartbeat_age']:>8.1f}s ago"
        )
        if n.get("paused_for"):
            reasons = n["paused_for"]
            how = {"control": "headway resume", "quota": "SIGUSR1 to the node"}
            then = " and ".join(how[r] for r in reasons if r in how) or "its resume"
            lines.append(f"    {n['node']}: paused ({', '.join(reasons)}); {then} continues it")
        if n["note"]:
            lines.append(f"    {n['node']}: {n['note']}")
    return lines


#: What a node that has not yet published statistics shows (a node publishes nothing,
#: or an empty record in earlier versions, before its first reading, about a second).
STARTING = "starting: no statistics published yet"


def _node_note(record: str | None, decoded: Decoded) -> str:
    if record is None or record.strip() == "{}":
        return STARTING
    return record_note(decoded) if decoded.missing else ""


def print_shared_status(store: str, crawl_id: str, as_json: bool = False) -> int:
    status = shared_status(store, crawl_id)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    print("\n".join(shared_status_lines(status)))
    return 0


def local_state(status: dict[str, Any]) -> str:
    """A crawl directory's state in words."""
    running = str(status["running"])
    f = status.get("frontier")
    if running.startswith("yes"):
        pid = running.removeprefix("yes")
        if status.get("paused"):
            return f"paused (headway pause; headway resume continues it), running{pid}"
        if status.get("paused_for_quota"):
            return f"paused (quota; SIGUSR1 continues it), running{pid}"
        return "running" + pid
    if f is None:
        return f"not running ({running}); frontier not readable here"
    left = f["queued"] + f["leased"]
    if left == 0:
        parked = f.get("revisits_parked") or 0
        more = f"; {parked:,} pages wait for a revisit (--recrawl)" if parked else ""
        return f"finished: nothing queued{more}" if running == "no" else f"unknown ({running})"
    paused = " (paused by a control: it starts paused, headway resume continues it)"
    return f"stopped with {left:,} URLs left: the same headway crawl command continues it" + (
        paused if status.get("paused") else ""
    )


def status_lines(status: dict[str, Any]) -> list[str]:
    """``headway status DIR`` as text."""
    lines = [
        f"crawl directory {status['directory']} (format {status['format']}, node "
        f"{status['node_id']})",
        f"  state         {local_state(status)}",
    ]
    if "format_note" in status:
        lines.append(f"  format        {status['format_note']}")
    f = status.get("frontier")
    if f is not None:
        lines.append(f"  frontier      {_frontier_line(f)}")
        lines.append(f"  shed          {_shed_text(f)}")
    if "index" in status:
        lines.append(f"  index         {status['index']}")
    files = status["warc_files"]
    lines.append(
        f"  WARC          {files} file{'' if files == 1 else 's'}, {_size(status['warc_bytes'])}"
    )
    m = status.get("last_metrics")
    if m is not None:
        text = (
            f"{m['fetches']:,} pages this run, {m['pages_per_second']:.1f} pages/s, "
            f"errors {m['errors']:,}, retries {m['retry_ratio']:.0%} (recorded "
            f"{m['age_seconds']:.0f} s ago)"
        )
        rc = m.get("recrawl")
        if rc:
            text += (
                f"; revisits {rc['revisits']:,} (changed {rc['changed']:,}, unchanged "
                f"{rc['unchanged']:,}, 304 {rc['not_modified']:,})"
            )
        lines.append(f"  last record   {text}")
    if "last_metrics_note" in status:
        lines.append(f"  record note   {status['last_metrics_note']}")
    return lines


def print_status(
    root: Path, as_json: bool = False, store: str = "", crawl_id: str | None = None
) -> int:
    status = read_status(root, store, crawl_id)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    print("\n".join(status_lines(status)))
    return 0
