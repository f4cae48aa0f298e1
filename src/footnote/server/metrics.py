"""`GET /metrics`: the Prometheus metrics of this server process (`telemetry.metrics`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from footnote.server.auth import probe_access
from footnote.server.errors import ApiError
from footnote.server.state import ServerState, get_state

router = APIRouter(tags=["telemetry"])


@router.get("/metrics", response_class=Response, dependencies=[Depends(probe_access)])
async def metrics(state: Annotated[ServerState, Depends(get_state)]) -> Response:
    """Runs, latency, model calls and tokens, tool calls, citation checks, refusals,
    fabricated ids caught and errors, in the Prometheus text format."""
    collected = state.ws.telemetry.metrics
    if collected is None:
        raise ApiError(404, "metrics are off (telemetry.metrics) or prometheus-client is missing")
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return Response(generate_latest(collected.registry), media_type=CONTENT_TYPE_LATEST)
