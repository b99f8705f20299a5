"""The statistics of a node: one frozen value per component, combined into ``NodeStats``.

Each component returns its own value from ``statistics()`` (fetch counters, stages,
scheduler, admission, store writer, held leases, the event loop's lag; the frontier's
counts are read by the node). The node combines them about four times a second. The
values are turned into JSON (``to_json``) or Prometheus text (``runtime/metrics.py``)
only where they leave the process: ``metrics.jsonl``, the Redis heartbeat record, the
bench output and the metrics endpoint. ``from_json`` reads the JSON back (``headway
status``), whichever version of headway wrote it: missing or mistyped fields take their
empty value and are named in ``Decoded.missing``, unknown ones are ignored; it never
raises. The JSON keys are documented in docs/metrics.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from headway.control.applier import ControlStats
from headway.frontier.store import SHED_REASONS, FrontierCounts
from headway.policy.overrides import HostOverride
from headway.runtime.looplag import LoopLagStats
from headway.runtime.stage import StageStats
from headway.work.admission import AdmissionStats

#: Outcomes that are not errors (``FetchStats.errors`` counts the others).
OK_OUTCOMES = frozenset({"ok", "redirect", "not_modified", "client_error"})


@dataclass(frozen=True, slots=True)
class FetchStats:
    """Fetching in this run: totals, outcomes, rates over the last interval of >= 1 s."""

    fetches: int = 0  # page fetches finished (any outcome; robots.txt not included)
    requests: int = 0  # HTTP requests, robots.txt included
    bytes: int = 0  # raw body bytes received
    retries: int = 0  # requests that were retries of a URL
    robots_fetches: int = 0
    robots_errors: int = 0  # robots.txt fetches that got no HTTP answer (host unreachable)
    outcomes: Mapping[str, int] = field(default_factory=dict)
    hostile: Mapping[str, int] = field(default_factory=dict)  # cut or refused, by reason
    in_flight: int = 0  # HTTP exchanges in flight
    pages_per_second: float = 0.0
    bytes_per_second: float = 0.0

    @property
    def errors(self) -> int:
        """Page fetches that failed, and robots.txt fetches that got no answer."""
        failed = sum(n for k, n in self.outcomes.items() if k not in OK_OUTCOMES)
        return failed + self.robots_errors

    @property
    def retry_ratio(self) -> float:
        return self.retries / self.requests if self.requests else 0.0


@dataclass(frozen=True, slots=True)
class HostRow:
    """One throttled host's politeness state."""

    host: str
    in_flight: int
    limit: float
    gap: float
    retry_ratio: float
    health: float


@dataclass(frozen=True, slots=True)
class SchedulerStats:
    """The scheduler's pressure: hosts known, active (a request in flight), ready (may
    start now), waiting (for their gap or a backoff) and parked, the most throttled
    hosts, and whether fetching is paused (quota). ``active`` and ``ready`` are
    instants: near 0 when fetches take milliseconds and hosts wait seconds."""

    known: int = 0
    active: int = 0
    ready: int = 0
    waiting: int = 0
    parked: int = 0
    paused: bool = False
    throttled: tuple[HostRow, ...] = ()
    #: why fetching is paused: "control" (headway pause, the console), "quota"
    paused_for: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What the store writer wrote in this run."""

    warc_files: int = 0
    records: int = 0
    bytes: int = 0
    revisits: int = 0


@dataclass(frozen=True, slots=True)
class LeaseStats:
    """The leases this node holds and what the lease heartbeat did in this run."""

    held: int = 0
    beats: int = 0  # heartbeats that extended leases
    extended: int = 0  # lease extensions they made


@dataclass(frozen=True, slots=True)
class RecrawlStats:
    """Recrawl in this run (zeros without ``--recrawl``): ``revisits`` page fetches of
    URLs fetched before, of which ``changed`` found new content and ``unchanged`` the
    same (``not_modified`` of those by a 304); ``scheduled`` settlements that set a next
    due time."""

    revisits: int = 0
    changed: int = 0
    unchanged: int = 0
    not_modified: int = 0
    scheduled: int = 0


@dataclass(frozen=True, slots=True)
class NodeStats:
    """One node's statistics at ``time``. ``frontier`` is None before the frontier was
    first read (and in JSON from a writer that had not read it)."""

    time: float = 0.0
    elapsed: float = 0.0
    pipeline: int = 0  # leased URLs between the scheduler and their settlement
    fetch: FetchStats = FetchStats()
    stages: tuple[StageStats, ...] = ()
    admission: AdmissionStats = field(default_factory=AdmissionStats)
    frontier: FrontierCounts | None = None
    scheduler: SchedulerStats = SchedulerStats()
    store: StoreStats = StoreStats()
    leases: LeaseStats = LeaseStats()
    recrawl: RecrawlStats = RecrawlStats()
    loop_lag: LoopLagStats = field(default_factory=LoopLagStats)
    software: str = ""
    control: ControlStats = field(default_factory=ControlStats)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of docs/metrics.md (``metrics.jsonl``, heartbeat, bench)."""
        f = self.fetch
        fr = self.frontier
        sch = self.scheduler
        return {
            "time": self.time,
            "elapsed": self.elapsed,
            "fetches": f.fetches,
            "requests": f.requests,
            "bytes": f.bytes,
            "retries": f.retries,
            "robots_fetches": f.robots_fetches,
            "robots_errors": f.robots_errors,
            "retry_ratio": f.retry_ratio,
            "errors": f.errors,
            "outcomes": dict(f.outcomes),
            "pages_per_second": f.pages_per_second,
            "bytes_per_second": f.bytes_per_second,
            "in_flight": f.in_flight,
            "pipeline": self.pipeline,
            "stages": [
                {
                    "name": st.name,
                    "depth": st.depth,
                    "capacity": st.capacity,
                    "oldest_age": round(st.oldest_age, 3),
                    "puts": st.puts,
                    "blocked_puts": st.blocked_puts,
                    "bytes": st.bytes,
                    "max_bytes": st.max_bytes,
                }
                for st in self.stages
            ],
            "admission_rejected": dict(self.admission.rejected),
            "hostile": dict(f.hostile),
            "admission_known": self.admission.known,
            "shed": dict(fr.shed) if fr is not None else {},
            "frontier": {
                "queued": fr.queued,
                "leased": fr.leased,
                "done": fr.done,
                "failed": fr.failed,
                "seen": fr.seen,
                "hosts_queued": fr.hosts_queued,
                "fetched": fr.fetched,
                "revisits_parked": fr.revisits_parked,
            }
            if fr is not None
            else {},
            "hosts": {
                "known": sch.known,
                "active": sch.active,
                "ready": sch.ready,
                "waiting": sch.waiting,
                "parked": sch.parked,
            },
            "throttled_hosts": [
                {
                    "host": h.host,
                    "in_flight": h.in_flight,
                    "limit": round(h.limit, 3),
                    "gap": round(h.gap, 3),
                    "retry_ratio": round(h.retry_ratio, 3),
                    "health": round(h.health, 3),
                }
                for h in sch.throttled
            ],
            "paused": sch.paused,
            "paused_for": list(sch.paused_for),
            "store": {
                "warc_files": self.store.warc_files,
                "records": self.store.records,
                "bytes": self.store.bytes,
                "revisits": self.store.revisits,
            },
            "leases": {
                "held": self.leases.held,
                "beats": self.leases.beats,
                "extended": self.leases.extended,
            },
            "recrawl": {
                "revisits": self.recrawl.revisits,
                "changed": self.recrawl.changed,
                "unchanged": self.recrawl.unchanged,
                "not_modified": self.recrawl.not_modified,
                "scheduled": self.recrawl.scheduled,
            },
            "loop_lag": {
                "worst": round(self.loop_lag.worst, 4),
                "recent": round(self.loop_lag.recent, 4),
                "last": round(self.loop_lag.last, 4),
                "samples": self.loop_lag.samples,
                "over_bound": self.loop_lag.over_bound,
            },
            "software": self.software,
            "control": {
                "seq": self.control.seq,
                "paused": self.control.paused,
                "seeds_added": self.control.seeds_added,
                "optout_domains": self.control.optout_domains,
                "optout_dropped": self.control.optout_dropped,
                "overrides": {
                    host: {
                        "delay": o.delay,
                        "budget": o.budget,
                        "concurrency": o.concurrency,
                        "exclude": o.exclude,
                    }
                    for host, o in self.control.overrides.items()
                },
            },
        }


@dataclass(frozen=True, slots=True)
class Decoded:
    """``from_json``'s result: the value, and the fields (dotted paths) that were missing
    or of the wrong type and so hold their empty value."""

    stats: NodeStats
    missing: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.missing


class _Fields:
    """Typed reads from one JSON object; what is absent or mistyped is noted."""

    def __init__(self, obj: object, path: str, missing: list[str]) -> None:
        self._obj: Mapping[str, Any] = obj if isinstance(obj, Mapping) else {}
        self._path = path
        self._missing = missing
        if not isinstance(obj, Mapping):
            missing.append(path or "(top level)")

    def _get(self, key: str, kinds: tuple[type, ...]) -> Any:
        value = self._obj.get(key)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            self._missing.append(self._path + key)
            return None
        return value

    def int_(self, key: str) -> int:
        v = self._get(key, (int,))
        return v if v is not None else 0

    def float_(self, key: str) -> float:
        v = self._get(key, (int, float))
        return float(v) if v is not None and math.isfinite(v) else 0.0

    def str_(self, key: str) -> str:
        v = self._get(key, (str,))
        return v if v is not None else ""

    def bool_(self, key: str) -> bool:
        return self._get(key, (bool,)) is True

    def optional_strs(self, key: str) -> tuple[str, ...]:
        """A list of strings that records of earlier versions lack (not missing then)."""
        v = self._obj.get(key)
        return tuple(x for x in v if isinstance(x, str)) if isinstance(v, list) else ()

    def counts(self, key: str) -> dict[str, int]:
        v = self._get(key, (dict,))
        if v is None:
            return {}
        return {str(k): n for k, n in v.items() if isinstance(n, int) and not isinstance(n, bool)}

    def sub(self, key: str) -> _Fields:
        return _Fields(self._obj.get(key), f"{self._path}{key}.", self._missing)

    def items(self, key: str) -> list[_Fields]:
        v = self._get(key, (list,))
        return [
            _Fields(x, f"{self._path}{key}[{i}].", self._missing) for i, x in enumerate(v or [])
        ]

    def raw(self) -> Mapping[str, Any]:
        """The object itself (for maps keyed by data, e.g. host names)."""
        return self._obj

    def has(self, key: str) -> bool:
        return isinstance(self._obj.get(key), Mapping) and bool(self._obj.get(key))


def from_json(obj: object) -> Decoded:
    """Read ``NodeStats.to_json`` output of any version back; never raises."""
    if not isinstance(obj, Mapping):
        return Decoded(NodeStats(), ("(top level)",))
    missing: list[str] = []
    top = _Fields(obj, "", missing)
    fetch = FetchStats(
        fetches=top.int_("fetches"),
        requests=top.int_("requests"),
        bytes=top.int_("bytes"),
        retries=top.int_("retries"),
        robots_fetches=top.int_("robots_fetches"),
        robots_errors=top.int_("robots_errors"),
        outcomes=top.counts("outcomes"),
        hostile=top.counts("hostile"),
        in_flight=top.int_("in_flight"),
        pages_per_second=top.float_("pages_per_second"),
        bytes_per_second=top.float_("bytes_per_second"),
    )
    stages = tuple(
        StageStats(
            s.str_("name"),
            s.int_("depth"),
            s.int_("capacity"),
            s.float_("oldest_age"),
            s.int_("puts"),
            s.int_("blocked_puts"),
            s.int_("bytes"),
            s.int_("max_bytes"),
        )
        for s in top.items("stages")
    )
    frontier: FrontierCounts | None = None
    if top.has("frontier"):  # {} before the writer first read its frontier
        fr = top.sub("frontier")
        shed = top.counts("shed")
        frontier = FrontierCounts(
            queued=fr.int_("queued"),
            leased=fr.int_("leased"),
            done=fr.int_("done"),
            failed=fr.int_("failed"),
            seen=fr.int_("seen"),
            hosts_queued=fr.int_("hosts_queued"),
            shed={r: shed.get(r, 0) for r in (*SHED_REASONS, *shed)},
            fetched=fr.int_("fetched"),
            revisits_parked=fr.int_("revisits_parked"),
        )
    hosts = top.sub("hosts")
    scheduler = SchedulerStats(
        known=hosts.int_("known"),
        active=hosts.int_("active"),
        ready=hosts.int_("ready"),
        waiting=hosts.int_("waiting"),
        parked=hosts.int_("parked"),
        paused=top.bool_("paused"),
        paused_for=top.optional_strs("paused_for"),
        throttled=tuple(
            HostRow(
                h.str_("host"),
                h.int_("in_flight"),
                h.float_("limit"),
                h.float_("gap"),
                h.float_("retry_ratio"),
                h.float_("health"),
            )
            for h in top.items("throttled_hosts")
        ),
    )
    st = top.sub("store")
    le = top.sub("leases")
    rc = top.sub("recrawl")
    lag = top.sub("loop_lag")
    co = top.sub("control")
    stats = NodeStats(
        time=top.float_("time"),
        elapsed=top.float_("elapsed"),
        pipeline=top.int_("pipeline"),
        fetch=fetch,
        stages=stages,
        admission=AdmissionStats(top.counts("admission_rejected"), top.int_("admission_known")),
        frontier=frontier,
        scheduler=scheduler,
        store=StoreStats(
            st.int_("warc_files"), st.int_("records"), st.int_("bytes"), st.int_("revisits")
        ),
        leases=LeaseStats(le.int_("held"), le.int_("beats"), le.int_("extended")),
        recrawl=RecrawlStats(
            rc.int_("revisits"),
            rc.int_("changed"),
            rc.int_("unchanged"),
            rc.int_("not_modified"),
            rc.int_("scheduled"),
        ),
        loop_lag=LoopLagStats(
            lag.float_("worst"),
            lag.float_("recent"),
            lag.float_("last"),
            lag.int_("samples"),
            lag.int_("over_bound"),
        ),
        software=top.str_("software"),
        control=ControlStats(
            seq=co.int_("seq"),
            paused=co.bool_("paused"),
            seeds_added=co.int_("seeds_added"),
            optout_domains=co.int_("optout_domains"),
            optout_dropped=co.int_("optout_dropped"),
            overrides=_overrides(co.sub("overrides")),
        ),
    )
    return Decoded(stats, tuple(missing))


def _overrides(f: _Fields) -> dict[str, HostOverride]:
    """The host overrides of a record; a malformed one is left out (never a crash)."""
    out: dict[str, HostOverride] = {}
    for host, v in f.raw().items():
        if not isinstance(v, Mapping):
            continue
        try:
            out[str(host)] = HostOverride(
                delay=v.get("delay"),
                budget=v.get("budget"),
                concurrency=v.get("concurrency"),
                exclude=v.get("exclude") is True,
            )
        except (TypeError, ValueError):
            continue
    return out
