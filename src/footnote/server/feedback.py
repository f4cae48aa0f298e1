"""Feedback: 👍/👎 with an optional comment, stored with the run it is about."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from footnote.server.auth import current_user
from footnote.server.errors import ApiError, not_found
from footnote.server.runs import own_run
from footnote.server.schemas import FeedbackCreate, FeedbackOut
from footnote.server.state import ServerState, get_state
from footnote.store.records import User

router = APIRouter(prefix="/v1", tags=["feedback"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]


@router.post("/feedback", status_code=201, response_model=FeedbackOut)
async def add_feedback(body: FeedbackCreate, state: State, user: Caller) -> FeedbackOut:
    """Rate a reply (`message_id`) or a run (`run_id`); the trace URL leads to every step."""
    run_id = body.run_id
    if body.message_id:
        message = state.chats.get_message(user.id, body.message_id)
        if message is None or not message.run_id:
            raise not_found("message")
        if run_id and run_id != message.run_id:
            raise ApiError(422, "message_id and run_id name different runs")
        run_id = message.run_id
    if not run_id:
        raise ApiError(422, "give message_id or run_id")
    own_run(state, user, run_id)
    rating = 1 if body.rating == "up" else -1
    fid = state.feedback.add_feedback(user.id, run_id, body.message_id, rating, body.comment)
    return FeedbackOut(id=fid, run_id=run_id, trace_url=f"/v1/runs/{run_id}/trace")
