"""``headway status`` as text: readable lines, never Python dicts, and the crawl's state
(running, finished, stopped with work left) said in words."""

from __future__ import annotations

from typing import Any

from headway.cli.status import shared_status_lines, status_lines


def _frontier(queued: int = 0, leased: int = 0, done: int = 510) -> dict[str, Any]:
    return {
        "queued": queued,
        "leased": leased,
        "done": done,
        "failed": 3,
        "seen": 520,
        "hosts_queued": 1 if queued else 0,
        "shed": {"host-budget": 4, "frontier-full": 0},
        "fetched": done,
        "revisits_parked": 0,
    }


def _shared(nodes: int, queued: int = 0) -> dict[str, Any]:
    return {
        "store": "redis://127.0.0.1:6379/0",
        "crawl_id": "news",
        "shards": 64,
        "unowned_shards": 64 if nodes == 0 else 0,
        "frontier": _frontier(queued),
        "nodes": [
            {
                "node": f"vm-{i}",
                "pages": 100,
                "pages_per_second": 3.3,
                "errors": 0,
                "shards_held": 64 // nodes,
                "last_heartbeat_age": 0.4,
                "leases_held": 2,
                "software": "headway/x",
                "note": "",
            }
            for i in range(nodes)
        ],
    }


def test_a_finished_shared_crawl_says_finished_without_an_empty_table() -> None:
    text = "\n".join(shared_status_lines(_shared(0)))
    assert "finished" in text
    assert "shards without a node" not in text and "heartbeat" not in text
    assert "{" not in text and "'" not in text
    assert "host-budget 4" in text and "frontier-full" not in text


def test_a_shared_crawl_without_nodes_and_work_left_says_stopped() -> None:
    text = "\n".join(shared_status_lines(_shared(0, queued=7)))
    assert "stopped: no node running, 7 URLs left" in text
    assert "finished" not in text


def test_a_running_shared_crawl_has_a_row_per_node() -> None:
    lines = shared_status_lines(_shared(2, queued=7))
    assert "running on 2 nodes" in lines[1]
    assert sum(line.lstrip().startswith("vm-") for line in lines) == 2


def _local(running: str, queued: int) -> dict[str, Any]:
    return {
        "directory": "mycrawl",
        "format": 2,
        "node_id": "vm-1",
        "running": running,
        "frontier": _frontier(queued),
        "warc_files": 1,
        "warc_bytes": 240_331,
        "last_metrics": {
            "time": 0.0,
            "age_seconds": 2.0,
            "fetches": 105,
            "pages_per_second": 3.25,
            "errors": 1,
            "retry_ratio": 0.02,
        },
    }


def test_a_crawl_directory_reads_as_text() -> None:
    text = "\n".join(status_lines(_local("no", 0)))
    assert "finished: nothing queued" in text
    assert "queued 0, leased 0, done 510, failed 3" in text
    assert "1 file, 234.7 KiB" in text
    assert "105 pages this run, 3.2 pages/s, errors 1, retries 2%" in text
    assert "{" not in text and "'" not in text
    stopped = "\n".join(status_lines(_local("no", 12)))
    assert "stopped with 12 URLs left" in stopped and "finished" not in stopped
    running = "\n".join(status_lines(_local("yes (pid 42)", 12)))
    assert "running (pid 42)" in running


def test_a_paused_crawl_says_paused_and_what_continues_it() -> None:
    paused = "\n".join(status_lines({**_local("yes (pid 42)", 12), "paused": True}))
    assert "paused (headway pause; headway resume continues it), running (pid 42)" in paused
    quota = "\n".join(status_lines({**_local("yes (pid 42)", 12), "paused_for_quota": True}))
    assert "paused (quota; SIGUSR1 continues it)" in quota
    assert "paused" not in "\n".join(status_lines(_local("yes (pid 42)", 12)))


def test_a_paused_node_of_a_shared_crawl_says_so() -> None:
    status = _shared(2, queued=7)
    status["nodes"][1]["paused_for"] = ["control"]
    lines = shared_status_lines(status)
    assert "    vm-1: paused (control); headway resume continues it" in lines
    assert not any("vm-0: paused" in line for line in lines)
