"""What a finished run of a node reports."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from enum import StrEnum

from headway.frontier.store import FrontierCounts
from headway.runtime.reach import Unreachable
from headway.runtime.stats import RecrawlStats


class StopReason(StrEnum):
    """Why a node stopped (the summary's "stopped by")."""

    FINISHED = "finished"  # nothing queued or leased is left
    MAX_PAGES = "max-pages"
    MAX_DURATION = "max-duration"
    MAX_BYTES = "max-bytes"
    INTERRUPTED = "interrupted"  # a signal, or the command's own stop
    CRAWL_LOST = "crawl lost"  # the shared store lost the crawl's keys
    STOP_CONTROL = "stop-control"  # a stop control (headway stop, the console)
    UNANSWERED = "no host answered"  # only hosts that never answered are queued


@dataclass(frozen=True, slots=True)
class CrawlSummary:
    stopped_by: StopReason
    resumed: bool
    seconds: float
    cpu_seconds: float  # this process (all threads) plus its parser processes, this run
    fetches: int
    requests: int
    bytes: int
    outcomes: dict[str, int]
    frontier: FrontierCounts
    seeds_added: int
    revisits: int
    warc_files: int
    admission_rejected: dict[str, int]
    peak_rss_mib: float
    recrawl: RecrawlStats | None = None  # with --recrawl
    requeued_at_stop: int = 0  # fetched pages a stop put back unparsed (fetched again later)
    robots_disallowed: int = 0  # URLs not fetched this run: robots.txt disallows them
    unreachable: tuple[Unreachable, ...] = ()  # hosts with no answer in this run, and why
    seeds_unreached: bool = False  # every host of the seeds was tried, none answered
    optout_dropped: int = 0  # queued URLs dropped by opt-out controls (this run)
    excluded_dropped: int = 0  # queued URLs dropped unfetched: an exclusion matches them


def process_cpu_seconds() -> float:
    """CPU seconds of this process and of its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mib() -> float:
    """Resident set size now (Linux /proc; the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return peak_rss_mib()
    return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
