"""Identity: an API key (`Authorization: Bearer <key>` or `X-API-Key`) names a user.

With no key in the store the server runs as one local user (embedded mode) and needs none.
"""

from __future__ import annotations

from fastapi import Depends, Request

from footnote.server.errors import ApiError
from footnote.server.state import ServerState, get_state
from footnote.store.records import User


def _key_from(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("x-api-key", "").strip()


async def current_user(request: Request, state: ServerState = Depends(get_state)) -> User:
    """The caller; 401 in the error shape when keys exist and none (or a bad one) is given."""
    if not state.auth.has_keys():
        return User(state.settings.server.local_user, None, admin=True)
    key = _key_from(request)
    user = state.auth.user_for_key(key) if key else None
    if user is None:
        raise ApiError(401, "a valid API key is required (Authorization: Bearer <key>)")
    return user


async def probe_access(request: Request, state: ServerState = Depends(get_state)) -> None:
    """`/metrics` and `/v1/health`: open, unless `server.probes_need_key` asks for a key."""
    if state.settings.server.probes_need_key:
        await current_user(request, state)
