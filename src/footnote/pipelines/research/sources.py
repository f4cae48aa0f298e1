"""Where evidence comes from, under the sub-task's budget: the library (with the user's ACL),
web search + fetch → snapshot, scholarly search (abstracts, open-access PDFs where the licence
allows) and a licensed database. Each search and fetch is checked against the budget before it
is sent and charged after; every refusal is recorded, never hidden.

The web reader (`WebReader`) is the part that touches what comes from outside: it searches,
fetches through the egress policy and reads pages into snapshots, and it holds no handle on the
library, the workspace or any store — what it fetched is handed back for `Sources` (the
executor) to keep. A page behind a paywall or login wall is kept as a snapshot marked
`paywalled`, with when it was retrieved and what a person must check, and listed for the
checklist; nothing is cited from a page that refused access."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TypeVar

from footnote.config import IngestSettings, ResearchSettings
from footnote.errors import BudgetExceeded, FetchError, IngestError
from footnote.index import SearchFilters, SearchFn
from footnote.ingest.web.fetch import Fetcher, FetchResult, HttpError
from footnote.ingest.web.search import (
    LicensedDatabase,
    PaperResult,
    PaperSearch,
    WebResult,
    WebSearch,
)
from footnote.ingest.web.snapshot import make_snapshot, snapshot_id, text_snapshot
from footnote.models.budget import Budget
from footnote.pipelines.research.roles import Stage, refusal
from footnote.store.base import DocumentStore, ResearchStore
from footnote.types import Block, Snapshot
from footnote.types import sha256_hex as _sha256


@dataclass(frozen=True)
class Passage:
    """Text a card can quote: a snapshot's text or a library block's, with its provenance."""

    text: str
    source_id: str
    title: str
    url: str
    snapshot: Snapshot | None = None
    block: Block | None = None
    published_at: str | None = None
    labels: tuple[str, ...] = ()
    rank: int = 0


@dataclass
class SourceLog:
    """What a sub-task's sources did: counts, and every refusal or failure with its reason."""

    searches: int = 0
    fetches: int = 0
    refused: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    stop: BudgetExceeded | None = None
    """A limit that refused a fetch part-way through a search (the earlier results are kept)."""
    paywalled: list[dict[str, str]] = field(default_factory=list)
    """Pages behind a paywall or login wall: url, retrieved_at, status, why, check (by hand)."""

    def note_paywall(self, snap: Snapshot) -> None:
        """List a paywalled snapshot once for the checklist."""
        if snap.paywalled and all(p["url"] != snap.final_url for p in self.paywalled):
            self.paywalled.append({"url": snap.final_url, "retrieved_at": snap.fetched_at,
                                   "status": str(snap.status), "check": snap.manual_check})  # fmt: skip


_PAYWALL_TEXT = re.compile(
    r"subscribe (?:now )?to (?:continue|keep) reading|subscribe to read (?:the full|this|more)|"
    r"(?:this|the rest of this) (?:article|story|report|content) is (?:only )?(?:available )?"
    r"(?:for|to) (?:paying )?(?:subscribers|members)|(?:sign|log) in to (?:continue reading|"
    r"read (?:the full|this) (?:article|story|report))|to continue reading,? (?:please )?"
    r"(?:subscribe|sign in|log in)|unlock (?:this|the full) (?:article|story|report)|"
    r"付费阅读|订阅后(?:阅读|查看)|登录后(?:阅读|查看)全文|开通会员(?:后)?(?:阅读|查看)",
    re.I,
)
"""Words a paywall or login wall says to the reader (not a site's ordinary "subscribe" link)."""
_PAYWALL_MARKUP = re.compile(rb'"isAccessibleForFree"\s*:\s*"?false', re.I)
"""schema.org's own mark of a paywalled page."""
PAYWALL_STATUS = (401, 402, 403)


@dataclass(frozen=True)
class Fetched:
    """What the web reader fetched: the snapshot, and the raw bytes it was made from."""

    snapshot: Snapshot
    raw: bytes


class WebReader:
    """The web reader role: web and scholarly search and page fetches (through the egress
    policy), read into snapshots. It is given only its providers, the fetcher and the ingest
    settings — no library search, document store, research store or workspace — so a page it
    reads has nothing internal in reach; what it fetched goes back to the caller to keep."""

    def __init__(
        self,
        *,
        web: WebSearch | None,
        fetcher: Fetcher | None,
        papers: Sequence[PaperSearch],
        ingest: IngestSettings,
        results_per_search: int,
    ) -> None:
        self.web, self.fetcher, self.papers = web, fetcher, tuple(papers)
        self.ingest, self.results_per_search = ingest, results_per_search

    def search(self, query: str, budget: Budget, log: SourceLog) -> list[WebResult]:
        """Web results for `query` (the search is checked against the budget and charged)."""
        if self.web is None:
            return []
        return _charged_search(self.web.search, "web search", query, self.results_per_search,
                               budget, log)  # fmt: skip

    def search_papers(
        self, provider: PaperSearch, query: str, budget: Budget, log: SourceLog
    ) -> list[PaperResult]:
        """One scholarly provider's results for `query` (checked and charged)."""
        return _charged_search(provider.search, provider.name, query, self.results_per_search,
                               budget, log)  # fmt: skip

    def fetch(
        self, url: str, budget: Budget, log: SourceLog, labels: tuple[str, ...] = ()
    ) -> Fetched | None:
        """The snapshot of `url`, or None with the reason logged. A page that answers 401, 402
        or 403, or says it is behind a paywall, comes back `paywalled` with what to check."""
        if self.fetcher is None:
            log.refused.append(f"{url}: no fetcher configured (research.allowed_domains is empty)")
            return None
        budget.check_fetch()
        try:
            result = self.fetcher.fetch(url)
            walled = ""
            if _PAYWALL_MARKUP.search(result.body[:2_000_000]):
                walled = "marked isAccessibleForFree=false"
            snap, _doc = make_snapshot(result, self.ingest, labels)
            if not walled and (m := _PAYWALL_TEXT.search(snap.text)):
                walled = f"the page says “{m.group(0)}”"
            if walled:
                snap = replace(snap, paywalled=True, manual_check=(
                    f"paywall ({walled}): only the part before it was read; open the full text "
                    "with access and check every sentence cited from it and whether it says more "
                    "on this item"))  # fmt: skip
            return Fetched(snap, result.body)
        except HttpError as exc:
            if exc.result.status not in PAYWALL_STATUS:
                log.failed.append(str(exc))
                return None
            return Fetched(_walled(exc.result, labels), exc.result.body)
        except FetchError as exc:
            (log.refused if "refused" in type(exc).__name__.lower() else log.failed).append(
                str(exc)
            )
        except IngestError as exc:
            log.failed.append(f"{url}: {exc}")
        finally:
            budget.charge(fetches=1)
            log.fetches += 1
        return None


def _walled(result: FetchResult, labels: tuple[str, ...]) -> Snapshot:
    """The snapshot of a page that refused access: its status, when, and what to check by hand
    (its body, a login or payment form, is kept as bytes, never as text to cite)."""
    sha = _sha256(result.body)
    snap = text_snapshot(result.final_url, "", title=result.final_url, fetched_at=result.fetched_at,
                         origin="web", labels=labels)  # fmt: skip
    return replace(
        snap, id=snapshot_id(result.final_url, sha), url=result.url, sha256=sha,
        content_type=result.content_type, status=result.status, paywalled=True,
        manual_check=f"access refused (HTTP {result.status}: a paywall or login wall); open it "
        "with a subscription or login and check whether it holds evidence for this item — "
        "nothing from it is cited",
    )  # fmt: skip


SentenceCloseness = Callable[[str, Sequence[str], tuple[str, ...]], Sequence[float]]
"""`closeness(question, sentences, labels) -> a score per sentence`: how close in meaning each
sentence is to the question (the workspace's `embed` role, behind its licence gate, which the
sentences' `labels` reach; `research.rank_sentences`)."""


class Sources:
    """The research job's evidence sources; shared by the workers of one run (thread-safe).
    `closeness` ranks the sentences of what they return (None: by words alone)."""

    def __init__(
        self,
        *,
        store: DocumentStore,
        research: ResearchStore,
        settings: ResearchSettings,
        ingest: IngestSettings,
        library: SearchFn | None = None,
        web: WebSearch | None = None,
        fetcher: Fetcher | None = None,
        papers: Sequence[PaperSearch] = (),
        licensed: LicensedDatabase | None = None,
        user_groups: tuple[str, ...] | None = None,
        closeness: SentenceCloseness | None = None,
    ) -> None:
        self.store, self.research, self.settings, self.ingest = store, research, settings, ingest
        self.closeness = closeness
        self.library, self.web, self.fetcher = library, web, fetcher
        self.papers, self.licensed, self.user_groups = tuple(papers), licensed, user_groups
        self.web_reader = WebReader(web=web, fetcher=fetcher, papers=papers, ingest=ingest,
                                    results_per_search=settings.results_per_search)  # fmt: skip
        """The web reader: the only part that searches outside, fetches and reads pages."""
        self._fetched: dict[str, Snapshot | None] = {}
        self._lock = threading.Lock()
        self.stage: Stage = "investigate"
        self.closed_reason = ""

    def enter(self, stage: Stage, reason: str = "") -> None:
        """The run moved on to `stage`: from now on only its roles' operations run
        (`roles.STAGE_ROLES`; synthesis and export hold no search or fetch grant)."""
        self.stage = stage
        self.closed_reason = reason

    def close_network(self, reason: str) -> None:
        """No search or fetch after this (synthesis has no network access)."""
        self.enter("synthesise", reason)

    def _gate(self, log: SourceLog, what: str, operation: str) -> bool:
        why = refusal(self.stage, operation)
        if why is not None:
            log.refused.append(
                f"{what}: {why}" + (f": {self.closed_reason}" if self.closed_reason else "")
            )
            return False
        return True

    def search_library(self, query: str, budget: Budget, log: SourceLog) -> list[Passage]:
        """Library blocks for `query`, as the user may read them."""
        if self.library is None or not self._gate(log, "library search", "library search"):
            return []
        budget.check_search()
        hits = self.library(query, self.settings.library_k,
                            SearchFilters(user_groups=self.user_groups))  # fmt: skip
        budget.charge(searches=1)
        log.searches += 1
        out = []
        for rank, hit in enumerate(hits):
            block = hit.block
            if block.kind in ("heading", "reference"):
                continue
            record = self.store.get_source(block.source_id)
            source = record.source if record else None
            out.append(
                Passage(
                    block.table.as_text() if block.table is not None else block.text,
                    block.source_id, source.title if source else block.source_id,
                    source.uri if source else "", block=block,
                    published_at=source.published_at if source else None,
                    labels=source.labels if source else (), rank=rank,
                )
            )  # fmt: skip
        return out

    def search_web(self, query: str, budget: Budget, log: SourceLog) -> list[Passage]:
        """Snapshots of the top web results for `query` (each fetch through the egress policy)."""
        if self.web is None or not self._gate(log, "web search", "web search"):
            return []
        results = self.web_reader.search(query, budget, log)
        out: list[Passage] = []
        for rank, result in enumerate(results[: self.settings.fetches_per_search]):
            try:
                snap = self.fetch(result.url, budget, log)
            except BudgetExceeded as exc:
                log.stop = exc
                break
            if snap is not None and snap.text.strip():
                out.append(self._snapshot_passage(snap, rank))
        return out

    def fetch(
        self, url: str, budget: Budget, log: SourceLog, labels: tuple[str, ...] = ()
    ) -> Snapshot | None:
        """The snapshot of `url` (fetched once per run, by the web reader, and kept here), or
        None with the reason logged. A paywalled page is kept and listed in `log.paywalled`."""
        with self._lock:
            if url in self._fetched:
                cached = self._fetched[url]
                if cached is not None:
                    log.note_paywall(cached)
                return cached
        if self.fetcher is None:
            log.refused.append(f"{url}: no fetcher configured (research.allowed_domains is empty)")
            return None
        if not self._gate(log, f"fetch {url}", "fetch"):
            return None
        fetched = self.web_reader.fetch(url, budget, log, labels)
        snap = fetched.snapshot if fetched is not None else None
        if fetched is not None:
            self.research.put_snapshot(fetched.snapshot, fetched.raw)
            log.note_paywall(fetched.snapshot)
        with self._lock:
            self._fetched[url] = snap
        return snap

    def search_papers(self, query: str, budget: Budget, log: SourceLog) -> list[Passage]:
        """Scholarly results: the abstract as a snapshot, and the OA PDF where the licence allows."""
        out: list[Passage] = []
        for provider in self.papers:
            if not self._gate(log, f"{provider.name} search", "scholarly search"):
                return out
            papers = self.web_reader.search_papers(provider, query, budget, log)
            for rank, paper in enumerate(papers):
                if paper.abstract:
                    snap = text_snapshot(
                        paper.url or paper.id, f"{paper.title}\n\n{paper.abstract}",
                        title=paper.title, fetched_at=_now(), origin=provider.name,
                        published_at=paper.published_at, doi=paper.doi, arxiv_id=paper.arxiv_id,
                    )  # fmt: skip
                    self.research.put_snapshot(snap, snap.text.encode("utf-8"))
                    out.append(self._snapshot_passage(snap, rank))
                licence = (paper.licence or "").lower()
                if paper.pdf_url and licence in self.settings.pdf_licences and log.stop is None:
                    try:
                        pdf = self.fetch(paper.pdf_url, budget, log)
                    except BudgetExceeded as exc:
                        log.stop = exc
                        continue
                    if pdf is not None:
                        out.append(self._snapshot_passage(pdf, rank))
                elif paper.pdf_url:
                    log.refused.append(
                        f"{paper.pdf_url}: licence {licence or 'unknown'} not in research.pdf_licences"
                    )
        return out

    def search_licensed(self, query: str, budget: Budget, log: SourceLog) -> list[Passage]:
        """Licensed records, labelled so that their text never reaches an external model."""
        db = self.licensed
        if db is None or not self._gate(log, "licensed search", "licensed search"):
            return []
        budget.check_search()
        try:
            records = db.search(query, self.settings.results_per_search)
        except FetchError as exc:
            log.failed.append(f"licensed {query!r}: {exc}")
            return []
        finally:
            budget.charge(searches=1)
            log.searches += 1
        out = []
        for rank, rec in enumerate(records):
            snap = text_snapshot(rec.url, f"{rec.title}\n\n{rec.text}", title=rec.title,
                                 fetched_at=_now(), origin="licensed", labels=db.labels,
                                 published_at=rec.published_at)  # fmt: skip
            self.research.put_snapshot(snap, snap.text.encode("utf-8"))
            out.append(self._snapshot_passage(snap, rank))
        return out

    @staticmethod
    def _snapshot_passage(snap: Snapshot, rank: int) -> Passage:
        return Passage(snap.text, snap.id, snap.title, snap.final_url, snap,
                       published_at=snap.published_at, labels=snap.labels, rank=rank)  # fmt: skip

    def gather(
        self, query: str, web: bool, budget: Budget, log: SourceLog
    ) -> tuple[list[Passage], BudgetExceeded | None]:
        """Every source's passages for one query (library always; the rest only when `web`),
        and the budget limit that stopped it early, if one did (what was found is kept)."""
        steps = [self.search_library]
        if self.licensed is not None:
            steps.append(self.search_licensed)
        if web:
            steps += [self.search_web, self.search_papers]
        found: list[Passage] = []
        for step in steps:
            try:
                found += step(query, budget, log)
            except BudgetExceeded as exc:
                return found, exc
            if log.stop is not None:
                return found, log.stop
        return found, None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = ["BudgetExceeded", "Passage", "SourceLog", "Sources"]


R = TypeVar("R")


def _charged_search(
    search: Callable[[str, int], list[R]],
    name: str,
    query: str,
    n: int,
    budget: Budget,
    log: SourceLog,
) -> list[R]:
    """One search, checked against the budget first and charged whatever happens; a failed one
    is logged as `name query: error` and gives nothing."""
    budget.check_search()
    try:
        return search(query, n)
    except FetchError as exc:
        log.failed.append(f"{name} {query!r}: {exc}")
        return []
    finally:
        budget.charge(searches=1)
        log.searches += 1
