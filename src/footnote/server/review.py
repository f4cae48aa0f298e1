"""The analyst's review of a research brief over HTTP, and exports.

`GET …/review` is what the review page shows; each action (seen, approve / edit / reject,
tick, resolve, an origin decision) appends to the run's hash-chained log and answers with the
updated review; `GET …/review/origins` lists the groups of cards whose attribution the merge
left undecided and `POST …/review/origins/{group}` decides one (same / independent /
secondary, with a reason); `POST …/review/signoff` signs the exact current version (409 with
the reasons while key figures are unticked, conflicts open or origins undecided); `GET …/review/log` is the log for audit.
`GET …/export` renders the brief (Markdown, HTML, PDF, JSON, BibTeX, CSL-JSON); chat threads
and single answers export at `/v1/sessions/{id}/export`. Only the run's owner sees any of it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from footnote.errors import ConfigError, UsageError
from footnote.server.auth import current_user
from footnote.server.errors import ApiError
from footnote.server.research import own_research
from footnote.server.state import ServerState, get_state
from footnote.store.records import User

router = APIRouter(tags=["review"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
Format = Literal["markdown", "html", "pdf", "json", "bibtex", "csl"]
_SUFFIX = {"markdown": "md", "html": "html", "pdf": "pdf", "json": "json", "bibtex": "bib",
           "csl": "csl.json"}  # fmt: skip


class Seen(BaseModel):
    """The analyst opened a claim."""

    model_config = ConfigDict(extra="forbid")
    claim_id: str


class ClaimDecision(BaseModel):
    """Approve, reject, or edit a claim (an edit is re-checked against its chapter's cards)."""

    model_config = ConfigDict(extra="forbid")
    action: Literal["approve", "reject", "edit"]
    text: str | None = Field(None, max_length=4000)
    card_ids: list[str] | None = None
    note: str = Field("", max_length=2000)


class Tick(BaseModel):
    """A key figure checked against its source (or unticked)."""

    model_config = ConfigDict(extra="forbid")
    ticked: bool = True


class Resolution(BaseModel):
    """How the analyst resolves a conflict."""

    model_config = ConfigDict(extra="forbid")
    resolution: Literal["choose", "keep_both", "annotate"]
    card_id: str | None = None
    note: str = Field("", max_length=2000)


class OriginDecision(BaseModel):
    """The analyst's decision on an undecided attribution group, and why."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["same", "independent", "secondary"] = Field(
        ..., description="same: one origin (counted once); independent: confirmed independent; "
        "secondary: secondary reports of one origin (counted once)"
    )  # fmt: skip
    reason: str = Field(..., min_length=1, max_length=2000)


def _reviewable(state: ServerState, user: User, run_id: str) -> None:
    from footnote.workspace.research import research_store

    rec = own_research(state, user, run_id)
    if research_store(state.ws).get_artifact(run_id, "brief") is None:
        raise ApiError(409, f"the brief is not ready (state {rec.state})")


def _view(state: ServerState, run_id: str, result: dict[str, Any] | None = None) -> dict[str, Any]:
    from footnote.workspace.review import review_view

    view = review_view(state.ws, run_id)
    return {**view, "result": result} if result is not None else view


@router.get("/v1/research/{run_id}/review")
async def get_review(run_id: str, state: State, user: Caller) -> dict[str, Any]:
    """The brief under review: claims with decisions, cards, conflicts, coverage, blockers."""
    _reviewable(state, user, run_id)
    return _view(state, run_id)


@router.post("/v1/research/{run_id}/review/seen")
async def post_seen(run_id: str, body: Seen, state: State, user: Caller) -> dict[str, Any]:
    """Log that a claim was opened (once per claim)."""
    from footnote.workspace.review import mark_seen

    _reviewable(state, user, run_id)
    first = mark_seen(state.ws, run_id, body.claim_id, user.id)
    return {"claim_id": body.claim_id, "first_time": first}


@router.post("/v1/research/{run_id}/review/claims/{claim_id}")
async def post_decision(
    run_id: str, claim_id: str, body: ClaimDecision, state: State, user: Caller
) -> dict[str, Any]:
    """Approve, reject or edit a claim; an edit answers with its re-check (`result`)."""
    from footnote.workspace.review import decide, edit_claim

    _reviewable(state, user, run_id)
    if body.action != "edit":
        decide(state.ws, run_id, claim_id, body.action, user.id, body.note)
        return _view(state, run_id)
    if not body.text:
        raise ApiError(422, "an edit needs the new text")
    models = state.deps.research.models if state.deps.research is not None else None
    result = edit_claim(state.ws, run_id, claim_id, body.text, user.id, card_ids=body.card_ids,
                        models=models)  # fmt: skip
    return _view(state, run_id, result)


@router.post("/v1/research/{run_id}/review/ticks/{claim_id}")
async def post_tick(
    run_id: str, claim_id: str, body: Tick, state: State, user: Caller
) -> dict[str, Any]:
    """Tick a key figure as checked against its source."""
    from footnote.workspace.review import tick

    _reviewable(state, user, run_id)
    tick(state.ws, run_id, claim_id, user.id, body.ticked)
    return _view(state, run_id)


@router.post("/v1/research/{run_id}/review/conflicts/{conflict_id}")
async def post_resolution(
    run_id: str, conflict_id: str, body: Resolution, state: State, user: Caller
) -> dict[str, Any]:
    """Resolve a conflict: choose one value, keep both, or annotate."""
    from footnote.workspace.review import resolve_conflict

    _reviewable(state, user, run_id)
    resolve_conflict(state.ws, run_id, conflict_id, body.resolution, user.id,
                     card_id=body.card_id, note=body.note)  # fmt: skip
    return _view(state, run_id)


@router.get("/v1/research/{run_id}/review/origins")
async def get_origins(run_id: str, state: State, user: Caller) -> list[dict[str, Any]]:
    """The groups whose attribution the merge left undecided: their cards side by side, why
    the code could not decide, and the analyst's decision so far."""
    from footnote.workspace.review import origin_groups

    _reviewable(state, user, run_id)
    return origin_groups(state.ws, run_id)


@router.post("/v1/research/{run_id}/review/origins/{group_id}")
async def post_origin(
    run_id: str, group_id: str, body: OriginDecision, state: State, user: Caller
) -> dict[str, Any]:
    """Decide an undecided group (logged with the caller and the reason); answers with the
    review, the decided group as `result` (404: no such group; 422: an empty reason)."""
    from footnote.workspace.review import decide_origin

    _reviewable(state, user, run_id)
    group = decide_origin(state.ws, run_id, group_id, body.decision, user.id, body.reason)
    return _view(state, run_id, group)


@router.post("/v1/research/{run_id}/review/signoff", status_code=201)
async def post_signoff(run_id: str, state: State, user: Caller) -> dict[str, Any]:
    """Sign the exact current version (409 with the reasons when it cannot be signed)."""
    from footnote.workspace.review import sign_off

    _reviewable(state, user, run_id)
    try:
        signed = sign_off(state.ws, run_id, user.id)
    except UsageError as exc:
        raise ApiError(409, str(exc)) from exc
    return {"version": signed.version, "version_hash": signed.version_hash,
            "reviewer": signed.reviewer, "signed_at": signed.signed_at,
            "coverage": signed.coverage}  # fmt: skip


@router.get("/v1/research/{run_id}/review/log", response_model=None)
async def get_log(
    run_id: str, state: State, user: Caller,
    download: Annotated[bool, Query(description="as an attachment")] = False,
) -> Any:  # fmt: skip
    """The run's append-only, hash-chained review log, and whether its chain verifies."""
    import json

    from footnote.workspace.review import audit_log

    own_research(state, user, run_id)
    log = audit_log(state.ws, run_id)
    if not download:
        return log
    return Response(json.dumps(log, ensure_ascii=False, indent=2), media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{run_id}-review-log.json"'})  # fmt: skip


def _file(body: bytes, fmt: str, name: str) -> Response:
    from footnote.pipelines.export import MEDIA_TYPES

    disposition = f'attachment; filename="{name}.{_SUFFIX[fmt]}"'
    return Response(body, media_type=MEDIA_TYPES[fmt],
                    headers={"Content-Disposition": disposition})  # fmt: skip


@router.get("/v1/research/{run_id}/export", response_model=None)
async def export_research(
    run_id: str, state: State, user: Caller, format: Format = "markdown",
    version: Annotated[int | None, Query(ge=1, description="a signed version")] = None,
) -> Response:  # fmt: skip
    """The brief as reviewed (or a signed `version`) in `format`, with its evidence appendix;
    evidence the caller may not read is withheld and the export says so."""
    import asyncio

    from footnote.workspace.export import export_brief

    _reviewable(state, user, run_id)
    try:
        body, _ = await asyncio.to_thread(export_brief, state.ws, run_id, format, actor=user.id,
                                          user_groups=user.groups, version=version)  # fmt: skip
    except ConfigError as exc:  # a renderer that is not installed (WeasyPrint)
        raise ApiError(503, str(exc)) from exc
    return _file(body, format, f"brief-{run_id}")


@router.get("/v1/sessions/{session_id}/export", response_model=None)
async def export_session(
    session_id: str, state: State, user: Caller, format: Format = "markdown",
    message_id: str | None = None,
) -> Response:  # fmt: skip
    """A chat thread (or one answer of it) in `format`, with its evidence appendix."""
    import asyncio

    from footnote.workspace.export import export_thread

    try:
        body, _ = await asyncio.to_thread(export_thread, state.ws, user.id, session_id, format,
                                          user_groups=user.groups, message_id=message_id)  # fmt: skip
    except ConfigError as exc:
        raise ApiError(503, str(exc)) from exc
    return _file(
        body, format, f"chat-{session_id}" if message_id is None else f"answer-{message_id}"
    )
