"""The report of ``headway bench``: one line a case (pages, wall time, crawl CPU per
page, steady CPU per page, start-up CPU, connections, frontier CPU per URL), the
processes and peak memory of each, and the ratios between cases that differ in one
thing (before / after, gap / no gap, https / http, no resumption / resumption, size)."""

from __future__ import annotations

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
    w = max([22, *(len(r.case.name) + 1 for r in results)])  # 22: the usual names
    head = (
        f"{'case':<{w}}{'pages':>7}{'wall s':>8}{'pages/s':>9}{'crawl CPU s':>12}"
        f"{'ms/page':>9}{'steady':>8}{'start-up s':>11}{'conns':>7}{'frontier us/URL':>16}"
    )
    out += [head, "-" * len(head)]
    for r in results:
        if r.error:
            out.append(f"{r.case.name:<{w}} failed: {r.error}")
            continue
        rate = r.pages / r.crawl_seconds if r.crawl_seconds else 0.0
        steady = r.steady_ms_per_page
        out.append(
            f"{r.case.name:<{w}}{r.pages:>7}{r.crawl_seconds:>8.1f}{rate:>9.1f}"
            f"{r.crawl_cpu:>12.2f}{r.ms_per_page:>9.2f}"
            f"{'-' if steady is None else f'{steady:.2f}':>8}{r.startup_cpu:>11.2f}"
            f"{r.connections:>7}{r.frontier_us_per_url:>16.1f}"
        )
    out.append("")
    for r in results:
        if not r.error:
            out.append(
                f"{r.case.name}: {r.processes} processes ({r.orphans} orphaned, reaped by "
                f"the bench); peak RSS MiB: {_peaks_text(r.peaks)}; stopped by "
                f"{r.stopped_by}; outcomes {dict(sorted(r.outcomes.items()))}"
            )
            if r.case.scheme == "https":
                out.append(
                    f"{r.case.name}: {r.connections} connections for {r.requests} requests: "
                    f"TLS handshakes {r.full} full, {r.resumed} resumed (server's count)"
                )
    out += _ratios(results)
    return out


def _ratios(results: list[BenchResult]) -> list[str]:
    ok = {
        (r.case.scheme, r.case.gap, r.case.size, r.case.web): r
        for r in results
        if not r.error and r.pages and r.case.src is None
    }
    lines: list[str] = []
    for r in results:
        key = (r.case.scheme, r.case.gap, r.case.size, r.case.web)
        if r.case.src is not None and not r.error and r.pages and key in ok:
            lines.append(
                f"after / before ({r.case.name.removesuffix(' before')}): CPU per page "
                f"{ok[key].ms_per_page / r.ms_per_page:.2f}x{_steady_ratio(ok[key], r)}"
            )
    for (scheme, gap, size, web), r in sorted(ok.items()):
        mix, idle, resumption = web
        tag = "" if web == ("fixed", 0.0, True) else r.case.name.split(f"{size}x", 1)[1]
        base = ok.get((scheme, 0.0, size, web))
        if gap and base is not None:
            lines.append(
                f"gap {gap:g}s / no gap ({scheme} {size}x{tag}): CPU per page "
                f"{r.ms_per_page / base.ms_per_page:.2f}x{_steady_ratio(r, base)}"
            )
        plain = ok.get(("http", gap, size, (mix, idle, True)))
        if scheme == "https" and plain is not None:
            lines.append(
                f"https / http (gap {gap:g}s {size}x{tag}): CPU per page "
                f"{r.ms_per_page / plain.ms_per_page:.2f}x{_steady_ratio(r, plain)}; "
                f"connections {r.connections} ({r.resumed} resumed TLS sessions) "
                f"for {r.requests} requests"
            )
        resuming = ok.get((scheme, gap, size, (mix, idle, True)))
        if not resumption and resuming is not None:
            same = resuming.case.name.split(f"{size}x", 1)[1]
            lines.append(
                f"no resumption / resumption ({scheme} gap {gap:g}s {size}x{same}): CPU per "
                f"page {r.ms_per_page / resuming.ms_per_page:.2f}x"
                f"{_steady_ratio(r, resuming)}; full handshakes {r.full} / {resuming.full}"
            )
        small = ok.get((scheme, gap, 1, web))
        if size > 1 and small is not None:
            lines.append(
                f"{size}x / 1x ({scheme} gap {gap:g}s{tag}): CPU per page "
                f"{r.ms_per_page / small.ms_per_page:.2f}x; frontier CPU per URL "
                f"{r.frontier_us_per_url / max(small.frontier_us_per_url, 1e-9):.2f}x; "
                f"peak RSS {max((p.peak_rss_mib for p in r.peaks), default=0):.0f} vs "
                f"{max((p.peak_rss_mib for p in small.peaks), default=0):.0f} MiB"
            )
    return (["", *lines]) if lines else []


def _steady_ratio(r: BenchResult, base: BenchResult) -> str:
    a, b = r.steady_ms_per_page, base.steady_ms_per_page
    return f" (steady {a / b:.2f}x)" if a is not None and b else ""
