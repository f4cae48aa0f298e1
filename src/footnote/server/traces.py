"""Traces: every span of a run (and the runs it started), by run or by session, with feedback."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from footnote.server.auth import current_user
from footnote.server.runs import own_run
from footnote.server.sessions import own_session
from footnote.server.state import ServerState, get_state
from footnote.store.records import User

router = APIRouter(prefix="/v1", tags=["traces"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]


def run_trace(state: ServerState, run_id: str) -> dict[str, Any]:
    """A run with its spans, the runs it started (ask sub-runs) and feedback on it."""
    family = state.runs.run_family(run_id)
    runs = []
    for rid in family:
        row = state.runs.get_run(rid)
        if row is None:
            continue
        spans = [asdict(s) for s in state.runs.spans(rid)]
        runs.append({**{k: row[k] for k in ("id", "kind", "status", "input")}, "spans": spans})
    return {"run_id": run_id, "runs": runs, "feedback": state.feedback.feedback(family)}


@router.get("/runs/{run_id}/trace")
async def trace_by_run(run_id: str, state: State, user: Caller) -> dict[str, Any]:
    """Every model call, retrieval, tool call and check behind a run."""
    own_run(state, user, run_id)
    return run_trace(state, run_id)


@router.get("/sessions/{session_id}/traces")
async def traces_by_session(session_id: str, state: State, user: Caller) -> dict[str, Any]:
    """The traces of every turn of a conversation, oldest first."""
    own_session(state, user, session_id)
    linked = {
        child
        for rid in state.runs.session_runs(user.id, session_id)
        for child in state.runs.run_family(rid)[1:]
    }
    top = [r for r in state.runs.session_runs(user.id, session_id) if r not in linked]
    return {"session_id": session_id, "traces": [run_trace(state, r) for r in top]}
