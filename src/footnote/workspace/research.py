"""Composition of the research job: which search provider, fetcher, scholarly and licensed
sources and which models a run gets — all chosen here from `research.*` and `models.*`.

A run's life: `start_research` proposes the outline (state `outline_proposed`);
`confirm_outline` records the analyst's confirmation or edit (`outline_confirmed`; later
artifacts are forgotten); `research_events` runs it (or resumes it) and streams its events."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from footnote.access import readable_by
from footnote.config import ResearchSettings
from footnote.errors import ConfigError, NotFound, UsageError
from footnote.events import BriefEvent, Event
from footnote.index import SearchFilters
from footnote.ingest.web.fetch import Fetcher, FetchPolicy
from footnote.ingest.web.search import (
    ArxivSearch,
    BraveSearch,
    LicensedDatabase,
    OpenAlexSearch,
    PaperSearch,
    SearxngSearch,
    SemanticScholarSearch,
    WebSearch,
    api_key,
)
from footnote.pipelines.research.baseline import BaselinePipeline
from footnote.pipelines.research.closeness import embedder_closeness
from footnote.pipelines.research.models import ResearchModels
from footnote.pipelines.research.outline import edit_outline
from footnote.pipelines.research.pipeline import (
    STAGES,
    ResearchDeps,
    ResearchPipeline,
    run_budget,
)
from footnote.pipelines.research.planner import plan_outline
from footnote.pipelines.research.roles import Withheld, readable_cards
from footnote.pipelines.research.sources import Sources
from footnote.pipelines.trace import Trace
from footnote.serialize import event_to_dict, from_plain, to_plain
from footnote.store.base import ResearchStore
from footnote.store.records import ResearchRecord, StoredEvent, new_id
from footnote.types import Brief, Hit, Outline, Source
from footnote.verify import Thresholds

if TYPE_CHECKING:
    from footnote.models import RoleModel
    from footnote.workspace.core import Workspace


@dataclass
class ResearchParts:
    """Injectable parts of a run (tests and the server pass their own); None: from config."""

    models: ResearchModels | None = None
    web: WebSearch | None = None
    papers: Sequence[PaperSearch] | None = None
    fetcher: Fetcher | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def research_store(ws: Workspace) -> ResearchStore:
    """The workspace's research store."""
    return ws.research_store


def web_search(settings: ResearchSettings) -> WebSearch | None:
    """The web search provider named by `research.search_url`, or None."""
    url = settings.search_url
    if not url:
        return None
    scheme, _, rest = url.partition("+")
    if scheme == "searxng" and rest:
        return SearxngSearch(rest, timeout_s=settings.fetch_timeout_s)
    if scheme == "brave" and rest:
        return BraveSearch(rest, api_key(settings.search_api_key_env, "the Brave Search API"),
                           timeout_s=settings.fetch_timeout_s)  # fmt: skip
    raise ConfigError(
        f"research.search_url {url!r}: expected searxng+http(s)://… or brave+https://…"
    )


def paper_search(settings: ResearchSettings) -> list[PaperSearch]:
    """The scholarly providers named by `research.scholarly`."""
    out: list[PaperSearch] = []
    for url in settings.scholarly:
        scheme, _, rest = url.partition("+")
        t = settings.fetch_timeout_s
        if scheme == "openalex" and rest:
            out.append(OpenAlexSearch(rest, timeout_s=t))
        elif scheme == "arxiv" and rest:
            out.append(ArxivSearch(rest, timeout_s=t))
        elif scheme == "s2" and rest:
            key = (
                api_key(settings.scholarly_api_key_env, "Semantic Scholar")
                if settings.scholarly_api_key_env
                else ""
            )
            out.append(SemanticScholarSearch(rest, key, timeout_s=t))
        else:
            raise ConfigError(f"research.scholarly {url!r}: expected openalex+…, arxiv+… or s2+…")
    return out


def licensed_database(settings: ResearchSettings) -> LicensedDatabase | None:
    """The licensed database of `research.licensed_url`, or None."""
    if not settings.licensed_url:
        return None
    if "no-external-model" not in settings.licensed_labels:
        raise ConfigError("research.licensed_labels must include no-external-model")
    key = api_key(settings.licensed_api_key_env, "the licensed database")
    return LicensedDatabase(settings.licensed_url, key, settings.licensed_labels,
                            timeout_s=settings.fetch_timeout_s)  # fmt: skip


def fetcher(settings: ResearchSettings) -> Fetcher | None:
    """The fetcher with the configured egress policy (None when no domain is allowed)."""
    if not settings.allowed_domains:
        return None
    return Fetcher(
        FetchPolicy(
            allowed_domains=settings.allowed_domains, allow_loopback=settings.allow_loopback,
            resolve=dict(settings.resolve), max_bytes=settings.fetch_max_bytes,
            timeout_s=settings.fetch_timeout_s, max_redirects=settings.max_redirects,
        )
    )  # fmt: skip


def research_models(ws: Workspace, run_id: str) -> ResearchModels:
    """The models of a run, by role and the `research.select` / `research.writer` settings."""
    from footnote.models import judge_support

    cfg, roles = ws.settings.research, ws.models

    def bound(role: str, wanted: str) -> RoleModel | None:
        if wanted in ("rules", "extractive"):
            return None
        if not roles.is_bound(role):
            if wanted == "model":
                raise ConfigError(f"research needs the {role!r} model role for this setting")
            return None
        return roles.chat(role)

    judge = roles.chat("judge") if roles.is_bound("judge") else None
    return ResearchModels(bound("understand", cfg.select), bound("compose", cfg.writer), judge,
                          judge_support, run_id, planner_model(ws))  # fmt: skip


def planner_model(ws: Workspace) -> RoleModel | None:
    """The planner (`understand` role) by `research.planner`: None for `template`, and for
    `auto` when the role is not bound or `research.select = "rules"` keeps it out of runs."""
    cfg = ws.settings.research
    if cfg.planner == "template":
        return None
    if cfg.planner == "auto" and (cfg.select == "rules" or not ws.models.is_bound("understand")):
        return None
    if not ws.models.is_bound("understand"):
        raise ConfigError("research.planner = model needs the 'understand' model role")
    return ws.models.chat("understand")


def web_providers(settings: ResearchSettings, parts: ResearchParts | None = None) -> list[str]:
    """The providers a run that may search the web would use (`searxng`, `brave`, the
    scholarly ones, `licensed`); empty: web search is not on offer."""
    parts = parts or ResearchParts()
    out: list[str] = []
    if parts.web is not None:
        out.append(type(parts.web).__name__)
    elif settings.search_url:
        out.append(settings.search_url.partition("+")[0])
    if parts.papers is not None:
        out += [type(p).__name__ for p in parts.papers]
    else:
        out += [url.partition("+")[0] for url in settings.scholarly]
    if settings.licensed_url:
        out.append("licensed")
    return out


def research_runs(
    ws: Workspace, user_id: str | None = None, limit: int = 200
) -> list[ResearchRecord]:
    """Research runs newest first: one user's, or (None) every user's, those started in the
    web app or over the API included — the operator's view (`footnote research ls`)."""
    return research_store(ws).list_research(user_id, limit)


def _checked_sources(
    ws: Workspace, source_ids: Sequence[str], user_groups: tuple[str, ...] | None
) -> list[str]:
    """The chosen library sources, each one the caller may read (UsageError naming any other)."""
    out: list[str] = []
    for sid in dict.fromkeys(source_ids):
        record = ws.store.get_source(sid)
        if record is None or not readable_by(record.source, user_groups):
            raise UsageError(f"no source {sid!r} in your library")
        out.append(sid)
    return out


def start_research(
    ws: Workspace, question: str, *, template: str | None = None, web: bool = True,
    budget_tokens: int | None = None, budget_minutes: float | None = None,
    mode: str | None = None, user_id: str = "local", user_groups: tuple[str, ...] | None = None,
    run_id: str | None = None, source_ids: Sequence[str] | None = None,
    parts: ResearchParts | None = None,
) -> tuple[str, Outline]:  # fmt: skip
    """Propose an outline for a question and record the run (nothing is searched yet): the
    planner model's (`research.planner`; `parts.models.planner` when given), charged to the
    run's budget, else the template's (`planner.plan_outline`). A
    restricted caller's budgets are clamped to the configured ones (`research.budget_tokens`,
    `research.budget_minutes`): a user may ask for less, never more. `source_ids` limits the
    library evidence to those sources (each one the caller may read); None: the whole library."""
    mode = mode or ws.settings.research.mode
    chosen = _checked_sources(ws, source_ids, user_groups) if source_ids is not None else None
    for name, value in (("budget-tokens", budget_tokens), ("budget-minutes", budget_minutes)):
        if value is not None and not value > 0:
            raise UsageError(f"invalid budget: --{name} must be above 0 (got {value})")
    if user_groups is not None:
        cfg = ws.settings.research
        if budget_tokens is not None:
            budget_tokens = min(budget_tokens, cfg.budget_tokens)
        if budget_minutes is not None:
            budget_minutes = min(budget_minutes, cfg.budget_minutes)
    if mode not in ("brief", "baseline"):
        raise UsageError(f"unknown research mode {mode!r}; expected brief or baseline")
    run_id = run_id or new_id("run")
    options: dict[str, Any] = {"web": web, "mode": mode, "budget_tokens": budget_tokens,
               "budget_minutes": budget_minutes,
               "user_groups": list(user_groups) if user_groups is not None else None,
               "source_ids": chosen}  # fmt: skip
    planner = (
        parts.models.planner if parts is not None and parts.models is not None
        else planner_model(ws)
    ) if ws.settings.research.planner != "template" else None  # fmt: skip
    budget = run_budget(options, ws.settings.research, time.monotonic)
    run_models = ResearchModels(planner=planner, run_id=run_id)
    planned = plan_outline(question, run_models.plan_fn(budget) if mode == "brief" else None,
                           template=template, web=web)  # fmt: skip
    outline = planned.outline
    options.update(template=outline.template, used=budget.used(),
                   planner={"by": planned.by, "note": planned.note})  # fmt: skip
    store = research_store(ws)
    store.create_research(run_id, user_id, outline.question, options, "outline_proposed")
    store.put_artifact(run_id, "outline", "", to_plain(outline))
    return run_id, outline


def confirm_outline(ws: Workspace, run_id: str, edits: dict[str, Any] | None = None) -> Outline:
    """The analyst confirms the outline, or edits it (which forgets any later stage)."""
    store = research_store(ws)
    record = store.get_research(run_id)
    saved = store.get_artifact(run_id, "outline")
    if record is None or saved is None:
        raise NotFound(f"no research run {run_id!r}")
    if record.state not in ("outline_proposed", "outline_confirmed"):
        raise UsageError(f"the outline of run {run_id} can no longer change (state {record.state})")
    outline = from_plain(Outline, saved)
    outline = edit_outline(outline, {**(edits or {}), "confirmed": True})
    store.put_artifact(run_id, "outline", "", to_plain(outline))
    store.delete_artifacts(run_id, STAGES)
    store.set_research_state(run_id, "outline_confirmed")
    return outline


def research_events(
    ws: Workspace, run_id: str, parts: ResearchParts | None = None
) -> AsyncIterator[Event]:
    """Run (or resume) a confirmed research run; its events end with the brief."""
    parts = parts or ResearchParts()
    store = research_store(ws)
    record = store.get_research(run_id)
    if record is None:
        raise NotFound(f"no research run {run_id!r}")
    cfg = ws.settings.research
    groups = record.options.get("user_groups")
    user_groups = tuple(groups) if groups is not None else None
    library = None
    chosen = record.options.get("source_ids")
    if ws.store.list_sources() and chosen != []:

        def library(query: str, k: int, filters: SearchFilters) -> list[Hit]:
            if chosen is not None:  # the analyst's choice of sources
                filters = replace(filters, source_ids=tuple(chosen))
            return ws.searcher.search(query, k=k, filters=filters)

    sources = Sources(
        store=ws.store, research=store, settings=cfg, ingest=ws.settings.ingest, library=library,
        web=parts.web if parts.web is not None else web_search(cfg),
        fetcher=parts.fetcher if parts.fetcher is not None else fetcher(cfg),
        papers=parts.papers if parts.papers is not None else paper_search(cfg),
        licensed=licensed_database(cfg), user_groups=user_groups,
        closeness=embedder_closeness(ws.embedder) if cfg.rank_sentences == "embedder" else None,
    )  # fmt: skip

    def block_text(block_id: str) -> str | None:
        block = ws.store.get_block(block_id)
        if block is None:
            return None
        return block.table.as_text() if block.table is not None else block.text

    v = ws.settings.verify
    deps = ResearchDeps(
        research=store, sources=sources, settings=cfg,
        models=parts.models if parts.models is not None else research_models(ws, run_id),
        thresholds=Thresholds(v.supported_threshold, v.weak_threshold),
        trace=Trace(run_id, sink=ws.runs.add_span), block_text=block_text,
    )  # fmt: skip
    mode = record.options.get("mode", "brief")
    pipeline = (
        BaselinePipeline(deps, run_id) if mode == "baseline" else ResearchPipeline(deps, run_id)
    )

    async def events() -> AsyncIterator[Event]:
        try:
            async for event in pipeline.run():
                yield event
        except BaseException:
            current = store.get_research(run_id)
            if current is not None and current.state == "running":
                store.set_research_state(run_id, "failed")
            raise
        finally:
            if sources.fetcher is not None and parts.fetcher is None:
                sources.fetcher.close()

    return events()


def run_research(
    ws: Workspace, run_id: str, parts: ResearchParts | None = None, *, user_id: str = "local"
) -> AsyncIterator[Event]:
    """`research_events` recorded as a `research` run in the run store (CLI, eval), its
    events persisted on the run as the server persists them (injection attempts included)."""
    events = research_events(ws, run_id, parts)
    if ws.runs.get_run(run_id) is None:
        ws.runs.start(run_id, "research", {"research_run": run_id}, user_id=user_id)
    seq = len(ws.events.events(run_id))

    async def recorded() -> AsyncIterator[Event]:
        nonlocal seq
        status = "cancelled"
        try:
            async for event in events:
                if isinstance(event, BriefEvent):
                    status = "completed"
                seq += 1
                data = json.dumps(event_to_dict(event, run_id=run_id), default=str)
                ws.events.add_events(run_id, [StoredEvent(seq, event.type, data)])
                yield event
        except Exception:
            status = "failed"
            raise
        finally:
            ws.runs.finish(run_id, status, {"research_run": run_id})

    return recorded()


def readable_brief(
    ws: Workspace, run_id: str, user_groups: tuple[str, ...] | None
) -> tuple[Brief, list[Withheld]]:
    """The run's brief as a user may read it, for an exporter (the caller has checked the user
    may read the run): cards the user may not read are left out (`roles.readable_cards`), with
    every claim that cites one (its text may carry the card's words) and their conflict
    values; the withheld list says what was left out and why, for the export to state."""
    saved = research_store(ws).get_artifact(run_id, "brief")
    if saved is None:
        raise NotFound(f"research run {run_id!r} has no brief yet")
    brief = from_plain(Brief, saved)

    def source_of(source_id: str) -> Source | None:
        record = ws.store.get_source(source_id)
        return record.source if record else None

    cards, withheld = readable_cards(
        brief.cards, user_groups, source_of, ws.settings.export.label_readers
    )
    hidden = {w.card_id for w in withheld}
    sections = []
    for section in brief.sections:
        claims = tuple(c for c in section.claims if not set(c.card_ids) & hidden)
        for c in section.claims:
            if set(c.card_ids) & hidden:
                withheld.append(Withheld(c.id, section.title, "the claim cites a withheld card"))
        bound = tuple(i for i in section.bound_cards if i not in hidden)
        sections.append(replace(section, claims=claims, bound_cards=bound))
    conflicts = []
    for conflict in brief.conflicts:
        values = tuple(v for v in conflict.values if v.card_id not in hidden)
        if len(values) >= 2:
            conflicts.append(replace(conflict, values=values))
    out = replace(brief, sections=tuple(sections), cards=tuple(cards), conflicts=tuple(conflicts),
                  unused_cards=tuple(i for i in brief.unused_cards if i not in hidden))  # fmt: skip
    return out, withheld
