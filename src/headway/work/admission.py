"""Admission: the gate every discovered link, redirect target and seed passes before the
frontier. Links arrive already canonical (canonicalized in the parser processes); here
scope, opt-out, depth, length and redirect-chain rules apply, then fingerprints and
priorities are attached. The seen filter and host budgets are applied by the frontier
in the same batch call."""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from headway.frontier.store import UrlEntry
from headway.policy.priority import (
    MAX_PATH_DEPTH,
    MAX_SEGMENT_REPEATS,
    MAX_URL_LENGTH,
    lastmod_bonus,
    looks_like_trap,
    priority_for,
    quality_priority,
)
from headway.policy.quality import QualityBook
from headway.urls.canonical import host_key
from headway.urls.fingerprint import fingerprint
from headway.urls.scope import Scope

#: Documents naming documents (a sitemap index naming sitemaps naming ...) are read at
#: most this many levels deep (the sitemap protocol itself allows 2: index, sitemap).
MAX_DOCUMENT_NESTING = 4

_YEARISH = re.compile(r"(?<!\d)(1[89]\d\d|2\d{3})[/-]")


def _maybe_trap(url: str) -> bool:
    """Cheap pre-filter for ``looks_like_trap`` (which costs ~15 us): true for every URL
    that check can flag (too long, too deep, a path segment repeated more than
    ``MAX_SEGMENT_REPEATS`` times, a year-like number), and for few others."""
    slashes = url.count("/")
    if len(url) > MAX_URL_LENGTH or slashes > MAX_PATH_DEPTH + 2 or _YEARISH.search(url):
        return True
    if slashes < 3 + MAX_SEGMENT_REPEATS:  # "scheme://host" and too few segments to repeat
        return False
    segments = url.split("?", 1)[0].split("/")[3:]
    return len(segments) - len(set(segments)) >= MAX_SEGMENT_REPEATS


@dataclass(frozen=True, slots=True)
class AdmissionStats:
    """Refusals at admission by reason, and links skipped as recently admitted."""

    rejected: Mapping[str, int] = field(default_factory=dict)
    known: int = 0


class Admission:
    def __init__(
        self,
        scope: Scope,
        *,
        max_redirects: int = 5,
        redirect_memory: int = 100_000,
        trap_check: bool = True,
        current_year: int | None = None,
        recent_urls: int = 50_000,
        quality: QualityBook | None = None,
    ) -> None:
        self.scope = scope
        #: None: depth-only priority; else the quality priority of
        #: ``headway.policy.priority``, fed by this book.
        self.quality = quality
        self.trap_check = trap_check
        self.current_year = current_year
        self.max_redirects = max_redirects
        self.rejected: Counter[str] = Counter()
        # URLs recently sent to the frontier, in two rotating generations (memory fixed by
        # ``recent_urls``): a link seen again (site navigation repeats on every page) is a
        # known duplicate, skipped before any hashing, scope check or frontier look-up.
        # Only URLs that passed scope enter, so skipping one gives exactly the frontier's
        # own answer (duplicate).
        self._recent: set[str] = set()
        self._recent_old: set[str] = set()
        self._recent_half = max(1, recent_urls // 2)
        self._recent_on = recent_urls > 0
        self.known = 0
        #: Deepest link depth admitted right now; lowered while memory is over its target.
        self.shed_depth: int | None = None
        self.deepest = 0  # deepest depth admitted so far
        # redirect hops per target fingerprint: bounded, in memory (a chain cut short by a
        # restart only gets a fresh count, and the seen filter still stops loops).
        self._hops: OrderedDict[int, int] = OrderedDict()
        # nesting level per admitted document fingerprint (bounded like the hops)
        self._doc_levels: OrderedDict[int, int] = OrderedDict()
        # links beyond the scope a page admitted outside it may still lead (extra hops),
        # and to what depth, per fingerprint, bounded like the hops: a page forgotten (or
        # admitted before a restart) leads none, so the allowance never grows past the
        # rules'
        self._extra_left: OrderedDict[int, tuple[int, int]] = OrderedDict()
        self.extra_hops_admitted = 0
        self._hops_max = redirect_memory

    def admit(
        self,
        urls: Iterable[str],
        depth: int,
        via: str | None,
        *,
        near_dup: bool = False,
        lastmod_age: Mapping[str, float] | None = None,
        validators: Mapping[str, str] | None = None,
        handler: str | None = None,
    ) -> list[UrlEntry]:
        """Entries for the URLs that pass scope; rejections are counted by reason.
        ``near_dup``: the linking page is a near-duplicate (lowers the links' priority
        under the quality priority). ``lastmod_age``: seconds since a sitemap or feed
        says a URL changed (raises its priority under the quality priority,
        ``policy.priority.lastmod_bonus``). ``validators``: what a URL is admitted with
        as its stored validators (a sitemap's revisit hint, ``policy.revisit``).
        ``handler``: the content handler the URLs are admitted to be read with (documents,
        ``UrlEntry.handler``); None for links."""
        out: list[UrlEntry] = []
        check = self.scope.check
        prio = priority_for(depth)
        book = self.quality
        source_host = host_key(via) if book is not None and via else None
        per_host: dict[str, int] = {}
        rejected = self.rejected
        # over the memory target: links deeper than shed_depth are dropped (not marked
        # seen, so a shallower page can still bring them in later)
        shedding = self.shed_depth is not None and depth > self.shed_depth
        year = self.current_year
        recent, recent_old = self._recent, self._recent_old
        known = 0
        # links to other hosts count as in-links whether their URL is new or not (a
        # popular host's pages are mostly known already); a link under the linking
        # page's own origin needs no parse to tell it is not one
        own = _origin(via) if via else ""
        note = book.note_link if book is not None and source_host is not None else None
        source = source_host or ""
        hops_on = via is not None and self.scope.hops_possible
        page_left: tuple[int, int] | None = None  # the linking page's (hops left, depth)
        for url in urls:
            if note is not None and not url.startswith(own):
                note(source, host_key(url))
            if url in recent or url in recent_old:
                known += 1
                continue
            if shedding:
                rejected["memory"] += 1
                continue
            host = host_key(url)
            reason = check(url, depth, host)
            extra: int | None = None  # hops this URL may still lead, when one itself
            if reason == "out-of-scope" and hops_on:
                if page_left is None:
                    page_left = self._hops_left(via or "")
                if page_left[0] > 0 and depth <= page_left[1]:
                    reason, extra = self.scope.url_refusal(url), page_left[0] - 1
            if reason is not None:
                rejected[reason] += 1
                continue
            if self.trap_check and _maybe_trap(url) and looks_like_trap(url, current_year=year):
                rejected["trap-suspect"] += 1
                continue
            hint = validators.get(url) if validators else None
            priority = prio
            if book is not None:
                ranked = per_host.get(host)
                if ranked is None:
                    ranked = per_host[host] = self._rank(book, host, source_host, depth, near_dup)
                if lastmod_age and url in lastmod_age:
                    ranked = max(0, ranked - lastmod_bonus(lastmod_age[url]))
                priority = ranked
            fp = fingerprint(url)
            out.append(UrlEntry(url, host, depth, priority, fp, via, 0, 0.0, hint, handler))
            if extra is not None:
                self.extra_hops_admitted += 1
                assert page_left is not None
                self._extra_left[fp] = (extra, page_left[1])
                if len(self._extra_left) > self._hops_max:
                    self._extra_left.popitem(last=False)
            if not self._recent_on:
                continue
            recent.add(url)
            if len(recent) >= self._recent_half:
                self._recent_old = recent_old = recent
                self._recent = recent = set()
        self.known += known
        if out and depth > self.deepest:
            self.deepest = depth
        return out

    def _hops_left(self, page: str) -> tuple[int, int]:
        """Links beyond the scope the page ``page`` may lead, and to what depth: its
        rules' extra hops and depth when it is in scope, else what is left of the hops
        that admitted it (none when forgotten)."""
        own = self.scope.extra_hops(page)
        if own is not None:
            return own
        return self._extra_left.get(fingerprint(page), (0, 0))

    def statistics(self) -> AdmissionStats:
        """Refusals by reason and recently admitted links skipped, in this run."""
        return AdmissionStats(rejected=dict(self.rejected), known=self.known)

    def forget_recent(self) -> None:
        """Forget the recently admitted URLs, so that every link is offered to the frontier
        again (after the frontier lost its latest admissions, e.g. a Redis restart)."""
        self._recent = set()
        self._recent_old = set()

    def _rank(
        self, book: QualityBook, host: str, source: str | None, depth: int, near_dup: bool
    ) -> int:
        """Priority of a link to ``host`` (``policy.priority.quality_priority``)."""
        q = book.quality(host)
        if source is not None:
            q = min(q, book.quality(source))
        return quality_priority(
            depth, near_dup=near_dup, quality=q, inlink_hosts=book.inlink_hosts(host)
        )

    def adjust_for_memory(self, over_target: bool, max_depth: int) -> None:
        """Called about once a second: over the memory target the admitted depth shrinks
        by one level a call (the deepest, lowest-priority links are shed first); under
        it, it grows back one level a call until no limit is left."""
        if over_target:
            current = min(self.deepest, max_depth) if self.shed_depth is None else self.shed_depth
            self.shed_depth = max(0, current - 1)
        elif self.shed_depth is not None:
            self.shed_depth += 1
            if self.shed_depth >= max_depth:
                self.shed_depth = None

    def admit_documents(
        self,
        urls: Iterable[str],
        depth: int,
        via: str | None,
        via_fp: int | None,
        handler: str | None,
    ) -> list[UrlEntry]:
        """Admit documents to read with the content handler ``handler`` (sitemaps a
        robots.txt lists and child sitemaps of an index: ``sitemap``; feeds a page
        announces: ``feed``): the frontier keeps the handler with each URL, so that its
        response is read as that kind of document whatever its media type says (None:
        the one its media type selects). Each is one nesting level below the document
        that named it (``via_fp``; None or an ordinary page: level 1); past
        ``MAX_DOCUMENT_NESTING`` levels they are refused as ``document-nesting``."""
        level = self._doc_levels.get(via_fp, 0) + 1 if via_fp is not None else 1
        if level > MAX_DOCUMENT_NESTING:
            self.rejected["document-nesting"] += sum(1 for _ in urls)
            return []
        entries = self.admit(urls, depth, via, handler=handler)
        for e in entries:
            self._remember_level(e.fp, level)
        return entries

    def _remember_level(self, fp: int, level: int) -> None:
        self._doc_levels[fp] = level
        if len(self._doc_levels) > self._hops_max:
            self._doc_levels.popitem(last=False)

    def admit_redirect(
        self, target: str, source: str, depth: int, *, handler: str | None = None
    ) -> list[UrlEntry]:
        """Admit a redirect target; a chain longer than ``max_redirects`` is cut. The
        target of a document (``handler`` set: the source was admitted as one) is the
        same document at its new place: admitted with the same handler, at the same
        nesting level."""
        source_fp = fingerprint(source)
        hops = self._hops.pop(source_fp, 0) + 1
        if hops > self.max_redirects:
            self.rejected["redirect-chain"] += 1
            return []
        entries = self.admit([target], depth, source, handler=handler)
        level = self._doc_levels.get(source_fp) if handler is not None else None
        for e in entries:
            self._hops[e.fp] = hops
            if len(self._hops) > self._hops_max:
                self._hops.popitem(last=False)
            if level is not None:
                self._remember_level(e.fp, level)
        return entries


def _origin(url: str) -> str:
    """``scheme://host/`` of a canonical URL: every URL of its host starts with it."""
    start = url.find("//")
    end = url.find("/", start + 2) if start >= 0 else -1
    return url if end < 0 else url[: end + 1]
