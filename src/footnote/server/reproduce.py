"""Reproduction routes: a source's experiment-settings table (JSON, starter config, Markdown,
CSV), its cross-checks, and sandboxed computations over cited numbers."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, Field

from footnote.agent.compute import CitedNumber
from footnote.errors import ToolRetry
from footnote.pipelines.reproduce.table import to_config, to_csv, to_markdown
from footnote.server.auth import current_user
from footnote.server.errors import ApiError
from footnote.server.state import ServerState, get_state
from footnote.store.records import User
from footnote.workspace.reproduce import compute, crosscheck_report, settings_table

router = APIRouter(prefix="/v1", tags=["reproduce"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
_MEDIA = {"markdown": "text/markdown; charset=utf-8", "csv": "text/csv; charset=utf-8"}


@router.post("/sources/{source_id}/settings", response_model=None)
async def source_settings(
    source_id: str,
    state: State,
    user: Caller,
    format: Annotated[str, Query(pattern="^(json|config|markdown|csv)$")] = "json",
    extractor: Annotated[str | None, Query(pattern="^(auto|rules|model|hybrid)$")] = None,
) -> Any:
    """Extract the experiment settings of a source the caller may read; every value cites its
    block or cell and passed the citation checks (traced as a `settings` run, which passes
    the run quotas and counts as in flight until it ends)."""
    state.quotas.start_run(user.id)
    with state.hub.hold(user.id):
        table = await settings_table(
            state.ws, source_id, extractor=extractor, user_groups=user.groups, user_id=user.id
        )
    if format == "json":
        return table.to_dict()
    if format == "config":
        return to_config(table)
    body = to_markdown(table) if format == "markdown" else to_csv(table)
    return Response(body, media_type=_MEDIA[format])


@router.get("/sources/{source_id}/crosschecks")
async def source_crosschecks(
    source_id: str,
    state: State,
    user: Caller,
    mismatches: Annotated[bool, Query(description="Only checks that do not add up.")] = False,
) -> dict[str, Any]:
    """Recompute the averages, totals and shares the source states; both sides cited."""
    report = await asyncio.to_thread(
        crosscheck_report, state.ws, source_id, user_groups=user.groups
    )
    if mismatches:
        report["checks"] = [c for c in report["checks"] if not c["adds_up"]]
    return report


class ComputeIn(BaseModel):
    """A snippet and its named inputs (each a cell id, or a cited block with the value)."""

    code: str = Field(..., max_length=8000)
    inputs: dict[str, str | CitedNumber] = Field(..., min_length=1, max_length=50)


@router.post("/compute")
async def run_compute(body: ComputeIn, state: State, user: Caller) -> dict[str, Any]:
    """Run a snippet in the sandbox over numbers read from cited cells the caller may read."""
    try:
        comp = await asyncio.to_thread(
            compute, state.ws, body.code, dict(body.inputs), user_groups=user.groups
        )
    except ToolRetry as exc:
        raise ApiError(422, str(exc)) from exc
    return {**comp.to_dict(), "evidence": comp.render()}
