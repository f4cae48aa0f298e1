"""Research runs over HTTP: propose an outline, confirm or edit it, run with typed SSE events
(driven by the run hub, or with `server.research_jobs` by the job queue's workers), and read
the brief (JSON or Markdown), its cards, snapshots and every stage's artifact. A run is
visible to its owner only (404 for anyone else)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from footnote.errors import FootnoteError
from footnote.server.auth import current_user
from footnote.server.errors import ApiError, not_found
from footnote.server.schemas import PageLimit
from footnote.server.state import ServerState, get_state
from footnote.store.records import ResearchRecord, User

router = APIRouter(prefix="/v1/research", tags=["research"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
STAGES = ("outline", "plan", "investigate", "merge", "conflicts", "draft", "checks",
          "checklist", "checklist_wrapup", "brief")  # fmt: skip


class ResearchCreate(BaseModel):
    """A research question; with `confirm`, the outline (as proposed, or `outline` edits) is
    confirmed at once and the run starts."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(..., min_length=3, max_length=4000)
    template: str | None = Field(
        None, description="players, market_size, regulation, trends, literature_review"
    )
    web: bool | None = Field(
        None, description="Search the web (default: when a web provider is configured)"
    )
    mode: Literal["brief", "baseline"] | None = None
    budget_tokens: int | None = Field(None, ge=1)
    budget_minutes: float | None = Field(None, gt=0)
    source_ids: list[str] | None = Field(
        None, description="Library sources to draw on (default: the whole library; [] none)"
    )
    confirm: bool = False
    outline: dict[str, Any] | None = None


class OutlineConfirm(BaseModel):
    """Confirm the proposed outline, or send the edited one (its `items`)."""

    model_config = ConfigDict(extra="forbid")
    outline: dict[str, Any] | None = None


class ResearchOut(BaseModel):
    """A research run: its state, outline and where to follow or read it."""

    id: str
    state: str
    question: str
    outline: dict[str, Any] | None
    created_at: str
    updated_at: str
    stream_url: str
    brief_url: str
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="template, mode, web, budget_tokens, budget_minutes, source_ids (None: "
        "the whole library) and the budget used so far (`used`)",
    )


class ResearchOptions(BaseModel):
    """What a research form may offer: web search only with a provider, the default budgets."""

    web: bool
    web_providers: list[str]
    budget_tokens: int
    budget_minutes: float


_SHOWN_OPTIONS = ("template", "mode", "web", "budget_tokens", "budget_minutes", "source_ids")


def _out(state: ServerState, rec: ResearchRecord) -> ResearchOut:
    from footnote.workspace.research import research_store

    options = {k: rec.options.get(k) for k in _SHOWN_OPTIONS}
    options["used"] = rec.options.get("used", {})
    return ResearchOut(
        id=rec.id, state=rec.state, question=rec.question,
        outline=research_store(state.ws).get_artifact(rec.id, "outline"),
        created_at=rec.created_at, updated_at=rec.updated_at,
        stream_url=f"/v1/runs/{rec.id}/events", brief_url=f"/v1/research/{rec.id}/brief",
        options=options,
    )  # fmt: skip


def _providers(state: ServerState) -> list[str]:
    from footnote.workspace.research import web_providers

    return web_providers(state.settings.research, state.deps.research)


def own_research(state: ServerState, user: User, run_id: str) -> ResearchRecord:
    """The caller's research run, or 404."""
    from footnote.workspace.research import research_store

    rec = research_store(state.ws).get_research(run_id)
    if rec is None or rec.user_id != user.id:
        raise not_found("research run")
    return rec


def _start(state: ServerState, user: User, run_id: str) -> None:
    from footnote.workspace.research import research_events

    if run_id in state.hub.live:
        raise ApiError(409, "the run is already running")
    if state.runs.get_run(run_id) is not None:
        raise ApiError(409, "the run was started before: resume it with POST …/resume")
    state.quotas.start_run(user.id)
    if state.settings.server.research_jobs:
        state.job_runs.submit(run_id, user.id)
        return
    state.hub.start(run_id, "research", user.id, None, {"research_run": run_id},
                    lambda: research_events(state.ws, run_id, state.deps.research))  # fmt: skip


@router.post("", status_code=201, response_model=ResearchOut)
async def create_research(body: ResearchCreate, state: State, user: Caller) -> ResearchOut:
    """Propose an outline for a question (nothing is searched until it is confirmed). Web
    search is asked for only where a provider is configured (422 otherwise)."""
    from footnote.workspace.research import confirm_outline, research_store, start_research

    offered = bool(_providers(state))
    if body.web and not offered:
        raise ApiError(422, "no web search provider is configured (research.search_url, "
                       "research.scholarly): ask with web false")  # fmt: skip
    try:  # in a thread: with `research.planner` on, proposing the outline is a model call
        run_id, _ = await asyncio.to_thread(
            start_research, state.ws, body.question, template=body.template,
            web=offered if body.web is None else body.web,
            budget_tokens=body.budget_tokens, budget_minutes=body.budget_minutes, mode=body.mode,
            user_id=user.id, user_groups=user.groups, source_ids=body.source_ids,
        )  # fmt: skip
        if body.confirm:
            confirm_outline(state.ws, run_id, body.outline)
    except FootnoteError as exc:
        raise ApiError(422, str(exc)) from exc
    if body.confirm:
        _start(state, user, run_id)
    rec = research_store(state.ws).get_research(run_id)
    assert rec is not None
    return _out(state, rec)


@router.get("", response_model=list[ResearchOut])
async def list_research(state: State, user: Caller, limit: PageLimit = 50) -> list[ResearchOut]:
    """The caller's research runs, newest first."""
    from footnote.workspace.research import research_store

    return [_out(state, r) for r in research_store(state.ws).list_research(user.id, limit)]


@router.get("/options", response_model=ResearchOptions)
async def research_options(state: State, user: Caller) -> ResearchOptions:
    """What the research form offers this caller: web search (only with a provider
    configured) and the default budgets (a restricted caller may ask for less, never more)."""
    cfg = state.settings.research
    providers = _providers(state)
    return ResearchOptions(web=bool(providers), web_providers=providers,
                           budget_tokens=cfg.budget_tokens, budget_minutes=cfg.budget_minutes)  # fmt: skip


@router.get("/{run_id}", response_model=ResearchOut)
async def get_research(run_id: str, state: State, user: Caller) -> ResearchOut:
    """One research run."""
    return _out(state, own_research(state, user, run_id))


@router.post("/{run_id}/start", status_code=202, response_model=ResearchOut)
async def start_run(run_id: str, body: OutlineConfirm, state: State, user: Caller) -> ResearchOut:
    """Confirm (or edit) the outline and start the run; follow `stream_url` (SSE)."""
    from footnote.workspace.research import confirm_outline

    own_research(state, user, run_id)
    try:
        confirm_outline(state.ws, run_id, body.outline)
    except FootnoteError as exc:
        raise ApiError(409 if "can no longer change" in str(exc) else 422, str(exc)) from exc
    _start(state, user, run_id)
    return _out(state, own_research(state, user, run_id))


@router.post("/{run_id}/resume", status_code=202, response_model=ResearchOut)
async def resume_run(run_id: str, state: State, user: Caller) -> ResearchOut:
    """Resume a run that failed or was cancelled: finished stages are not redone. Its events
    continue the same SSE stream (new ids after the old ones)."""
    from footnote.workspace.research import research_events

    rec = own_research(state, user, run_id)
    live = run_id in state.hub.live or state.run_alive(run_id)
    if rec.state not in ("running", "failed", "cancelled") or live:
        raise ApiError(409, f"only a stopped run resumes (state {rec.state})")
    state.quotas.start_run(user.id)
    if state.settings.server.research_jobs:
        state.job_runs.submit(run_id, user.id, resume=True)
        return _out(state, own_research(state, user, run_id))
    state.hub.resume(
        run_id, user.id, lambda: research_events(state.ws, run_id, state.deps.research)
    )
    return _out(state, own_research(state, user, run_id))


@router.get("/{run_id}/brief", response_model=None)
async def get_brief(
    run_id: str, state: State, user: Caller,
    format: Annotated[Literal["json", "markdown"], Query()] = "json",
) -> Any:  # fmt: skip
    """The brief: sections with claims, each claim's cards with snippets (or Markdown)."""
    from footnote.pipelines.research.markdown import brief_markdown
    from footnote.serialize import brief_to_dict, from_plain
    from footnote.types import Brief
    from footnote.workspace.research import research_store

    rec = own_research(state, user, run_id)
    data = research_store(state.ws).get_artifact(run_id, "brief")
    if data is None:
        raise ApiError(409, f"the brief is not ready (state {rec.state})")
    brief = from_plain(Brief, data)
    if format == "markdown":
        return PlainTextResponse(brief_markdown(brief), media_type="text/markdown; charset=utf-8")
    return brief_to_dict(brief)


@router.get("/{run_id}/cards")
async def get_cards(run_id: str, state: State, user: Caller) -> list[dict[str, Any]]:
    """Every evidence card of the run."""
    from footnote.serialize import card_to_dict
    from footnote.workspace.research import research_store

    own_research(state, user, run_id)
    return [card_to_dict(c) for c in research_store(state.ws).cards(run_id)]


@router.get("/{run_id}/snapshots/{snapshot_id}")
async def get_snapshot(run_id: str, snapshot_id: str, state: State, user: Caller) -> dict[str, Any]:
    """A snapshot one of the run's cards quotes: metadata, hash and the extracted text."""
    from footnote.serialize import to_plain
    from footnote.workspace.research import research_store

    own_research(state, user, run_id)
    store = research_store(state.ws)
    if not any(c.snapshot_id == snapshot_id for c in store.cards(run_id)):
        raise not_found("snapshot")
    snap = store.get_snapshot(snapshot_id)
    if snap is None:
        raise not_found("snapshot")
    out: dict[str, Any] = to_plain(snap)
    return out


@router.get("/{run_id}/artifacts/{stage}")
async def get_artifacts(
    run_id: str, stage: str, state: State, user: Caller
) -> list[dict[str, Any]]:
    """A stage's persisted artifacts (`key`, `data`), for inspection."""
    from footnote.workspace.research import research_store

    own_research(state, user, run_id)
    if stage not in STAGES:
        raise ApiError(404, f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
    return [{"key": k, "data": d} for k, d in research_store(state.ws).artifacts(run_id, stage)]
