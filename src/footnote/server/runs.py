"""Runs: status, cancellation, the SSE event stream (with `Last-Event-ID` resume) and traces."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query
from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import EventSourceResponse

from footnote.server.auth import current_user
from footnote.server.errors import ApiError, not_found
from footnote.server.job_runs import job_of
from footnote.server.schemas import RunOut
from footnote.server.state import ServerState, get_state
from footnote.store.records import User

router = APIRouter(prefix="/v1", tags=["runs"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MAX_EVENT_ID = 10**18 - 1
"""The largest event id a client may resume after (the store's ids are 64-bit integers)."""


def own_run(state: ServerState, user: User, run_id: str) -> dict[str, Any]:
    """The caller's run row, or 404 (also for somebody else's)."""
    owner = state.runs.run_owner(run_id)
    run = state.runs.get_run(run_id) if owner and owner[0] == user.id else None
    if run is None:
        raise not_found("run")
    return run


@router.get("/runs/{run_id}", response_model=RunOut)
async def get_run(run_id: str, state: State, user: Caller) -> RunOut:
    """A run's status and, once finished, its answer."""
    run = own_run(state, user, run_id)
    live = state.hub.live.get(run_id)
    count = len(live.events) if live else len(state.events.events(run_id))
    return RunOut(
        id=run["id"],
        kind=run["kind"],
        status=run["status"],
        session_id=run["session_id"],
        created_at=run["created_at"],
        finished_at=run["finished_at"],
        events=count,
        output=run["output"],
    )


@router.post("/runs/{run_id}/cancel", status_code=202)
async def cancel_run(run_id: str, state: State, user: Caller) -> dict[str, str]:
    """Cancel a running run: it ends with an `error` (code `cancelled`) and `done` event.
    A run a job worker executes stops at its next event or heartbeat (a third of
    `jobs.lease_s`); the answer waits up to `jobs.lease_s` for it, else says `cancelling`."""
    run = own_run(state, user, run_id)
    if job_of(run) is not None and run_id not in state.hub.live:
        said = state.job_runs.cancel(run_id)
        if said is None:
            raise ApiError(409, f"run is not running (status {run['status']})")
        if said == "cancelling" and await state.job_runs.wait(run_id, state.settings.jobs.lease_s):
            said = "cancelled"
        return {"id": run_id, "status": said}
    if not state.hub.cancel(run_id):
        raise ApiError(409, f"run is not running (status {run['status']})")
    await state.hub.wait(run_id)
    return {"id": run_id, "status": "cancelled"}


@router.get(
    "/runs/{run_id}/events",
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    run_id: str,
    state: State,
    user: Caller,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_EVENT_ID, description="Like Last-Event-ID.")
    ] = None,
) -> EventSourceResponse:
    """The run's events as SSE: `id` (1, 2, … per run), `event` (type) and JSON `data`.

    Reconnect with `Last-Event-ID` (or `?after=`) to get exactly the events missed, then
    live ones. Comment pings keep idle connections open. The stream ends after `done`.
    """
    run = own_run(state, user, run_id)
    start = after or 0
    if last_event_id:
        if not re.fullmatch(r"[0-9]{1,18}", last_event_id.strip()):  # ASCII digits, int64
            raise ApiError(422, "Last-Event-ID must be an event id (an integer)")
        start = int(last_event_id)

    queued = job_of(run) is not None and run_id not in state.hub.live
    follow = state.job_runs.follow if queued else state.hub.follow

    async def frames() -> Any:
        async for ev in follow(run_id, start):
            yield ServerSentEvent(data=ev.data, event=ev.type, id=str(ev.seq))

    return EventSourceResponse(frames(), ping=state.settings.server.sse_ping_s, headers=SSE_HEADERS)
