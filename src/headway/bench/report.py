"""The report of ``headway bench``: one line a case (pages, wall time, crawl CPU per
page, steady CPU per page, start-up CPU, connections, frontier CPU per URL), the
processes and peak memory of each, and the ratios between cases that differ in one
thing (before / after, gap / no gap, https / http, no resumption / resumption, size)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from headway.bench.harness import BenchResult
from headway.bench.proctree import ProcessPeak


def _peaks_text(peaks: tuple[ProcessPeak, ...]) -> str:
    by_role: dict[str, list[float]] = {}
    for p in peaks:
        by_role.setdefault(p.role, []).append(p.peak_rss_mib)
    return ", ".join(
        f"{role} {' / '.join(f'{v:.0f}' for v in values)}" for role, values in by_role.items()
    )


def report_lines(results: list[BenchResult]) -> list[str]:
    """The benchmark's output, one string a line."""
    out: list[str] = []
    if results:
        c = results[0].case
        shape = f"{c.page_kb} KiB, {c.links} links a page"
        if all(r.case.mix == "real" for r in results):
            shape = "the real mix"
        out.append(
            f"simulated web: {c.hosts // c.size} hosts (x size) x {c.pages} pages of "
            f"{shape}; parsers {c.parsers or 'default'}"
        )
        if any(r.case.mix == "real" for r in results):
            out.append(
                "real page mix (cases marked real): sizes log-normal, median 138 KB, mean "
                "242 KB, pages over the crawler's max_body cut by it; links round(8 x "
                "KiB^0.6) (testing/pagemix.py)"
            )
    out.append(
        "CPU: whole process tree of the crawler (main process and threads, forkserver, "
        "parser processes), from /proc and wait4; start-up apart; server not counted"
    )
    repeated = len({r.case.round for r in results}) > 1
    w = max([22, *(len(_name(r, repeated)) + 1 for r in results)])  # 22: the usual names
    head = (
        f"{'case':<{w}}{'pages':>7}{'wall s':>8}{'pages/s':>9}{'crawl CPU s':>12}"
        f"{'ms/page':>9}{'steady':>8}{'start-up s':>11}{'conns':>7}{'frontier us/URL':>16}"
    )
    out += [head, "-" * len(head)]
    for r in results:
        if r.error:
            out.append(f"{_name(r, repeated):<{w}} failed: {r.error}")
            continue
        rate = r.pages / r.crawl_seconds if r.crawl_seconds else 0.0
        steady = r.steady_ms_per_page
        out.append(
            f"{_name(r, repeated):<{w}}{r.pages:>7}{r.crawl_seconds:>8.1f}{rate:>9.1f}"
            f"{r.crawl_cpu:>12.2f}{r.ms_per_page:>9.2f}"
            f"{'-' if steady is None else f'{steady:.2f}':>8}{r.startup_cpu:>11.2f}"
            f"{r.connections:>7}{r.frontier_us_per_url:>16.1f}"
        )
    out.append("")
    for r in results:
        if not r.error:
            out.append(
                f"{_name(r, repeated)}: {r.processes} processes ({r.orphans} orphaned, reaped by "
                f"the bench); peak RSS MiB: {_peaks_text(r.peaks)}; stopped by "
                f"{r.stopped_by}; outcomes {dict(sorted(r.outcomes.items()))}"
            )
            if r.case.scheme == "https":
                out.append(
                    f"{_name(r, repeated)}: {r.connections} connections for {r.requests} requests: "
                    f"TLS handshakes {r.full} full, {r.resumed} resumed (server's count)"
                )
    out += _ratios(results)
    return out


@dataclass(frozen=True, slots=True)
class Ratio:
    """One ratio between two cases that differ in one thing: ``label`` names them,
    ``value`` is all-in CPU per page, ``steady`` the steady-state one (None when either
    run is too short), ``extra`` what the line adds after it (connections, handshakes)."""

    label: str
    value: float
    steady: float | None = None
    extra: str = ""

    def line(self) -> str:
        steady = f" (steady {self.steady:.2f}x)" if self.steady is not None else ""
        return f"{self.label}: CPU per page {self.value:.2f}x{steady}{self.extra}"


def _name(r: BenchResult, repeated: bool) -> str:
    return f"{r.case.name} #{r.case.round + 1}" if repeated else r.case.name


def _ratios(results: list[BenchResult]) -> list[str]:
    """The ratio lines: of the one round, or the median of every round with each
    round's figure when the cases were repeated (``--repeat``)."""
    rounds = sorted({r.case.round for r in results})
    if len(rounds) == 1:
        lines = [x.line() for x in ratios(results)]
    else:
        lines = _median_lines([ratios([r for r in results if r.case.round == n]) for n in rounds])
    return (["", *lines]) if lines else []


def _median_lines(per_round: list[list[Ratio]]) -> list[str]:
    by_label: dict[str, list[Ratio]] = {}
    for found in per_round:
        for x in found:
            by_label.setdefault(x.label, []).append(x)
    lines = []
    for label, xs in by_label.items():
        values = " ".join(f"{x.value:.2f}" for x in xs)
        steadies = [x.steady for x in xs if x.steady is not None]
        steady = ""
        if len(steadies) == len(xs):
            each = " ".join(f"{v:.2f}" for v in steadies)
            steady = f"; steady median {statistics.median(steadies):.2f}x ({each})"
        lines.append(
            f"{label}: CPU per page median {statistics.median(x.value for x in xs):.2f}x "
            f"over {len(xs)} rounds ({values}){steady}"
        )
    return lines


def ratios(results: list[BenchResult]) -> list[Ratio]:
    """The ratios between the cases of one round that differ in one thing."""
    ok = {
        (r.case.scheme, r.case.gap, r.case.size, r.case.web, r.case.client): r
        for r in results
        if not r.error and r.pages and r.case.src is None
    }
    found: list[Ratio] = []
    for r in results:
        key = (r.case.scheme, r.case.gap, r.case.size, r.case.web, r.case.client)
        if r.case.src is not None and not r.error and r.pages and key in ok:
            name = r.case.name.removesuffix(" before")
            found.append(_ratio(f"after / before ({name})", ok[key], r))
    for (scheme, gap, size, web, client), r in sorted(ok.items()):
        mix, idle, resumption = web
        tag = "" if web == ("fixed", 0.0, True) else r.case.name.split(f"{size}x", 1)[1]
        if client != "aiohttp":
            other = ok.get((scheme, gap, size, web, "aiohttp"))
            if other is not None:
                tag = tag.removesuffix(f" {client}")
                extra = f"; connections {r.connections} / {other.connections}"
                label = f"aiohttp / {client} ({scheme} gap {gap:g}s {size}x{tag})"
                found.append(_ratio(label, other, r, extra))
            continue  # the other ratios: for the crawler's default client
        base = ok.get((scheme, 0.0, size, web, client))
        if gap and base is not None:
            found.append(_ratio(f"gap {gap:g}s / no gap ({scheme} {size}x{tag})", r, base))
        plain = ok.get(("http", gap, size, (mix, idle, True), client))
        if scheme == "https" and plain is not None:
            extra = (
                f"; connections {r.connections} ({r.resumed} resumed TLS sessions) "
                f"for {r.requests} requests"
            )
            found.append(_ratio(f"https / http (gap {gap:g}s {size}x{tag})", r, plain, extra))
        resuming = ok.get((scheme, gap, size, (mix, idle, True), client))
        if not resumption and resuming is not None:
            same = resuming.case.name.split(f"{size}x", 1)[1]
            label = f"no resumption / resumption ({scheme} gap {gap:g}s {size}x{same})"
            extra = f"; full handshakes {r.full} / {resuming.full}"
            found.append(_ratio(label, r, resuming, extra))
        small = ok.get((scheme, gap, 1, web, client))
        if size > 1 and small is not None:
            extra = (
                f"; frontier CPU per URL "
                f"{r.frontier_us_per_url / max(small.frontier_us_per_url, 1e-9):.2f}x; "
                f"peak RSS {max((p.peak_rss_mib for p in r.peaks), default=0):.0f} vs "
                f"{max((p.peak_rss_mib for p in small.peaks), default=0):.0f} MiB"
            )
            found.append(_ratio(f"{size}x / 1x ({scheme} gap {gap:g}s{tag})", r, small, extra))
    return found


def _ratio(label: str, r: BenchResult, base: BenchResult, extra: str = "") -> Ratio:
    a, b = r.steady_ms_per_page, base.steady_ms_per_page
    steady = a / b if a is not None and b else None
    return Ratio(label, r.ms_per_page / base.ms_per_page, steady, extra)
