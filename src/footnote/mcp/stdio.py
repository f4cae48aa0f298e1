"""The MCP server over stdio (`footnote mcp`): one caller, the process's user.

With `api_key` the server runs as that key's user (its ACL groups apply); without, as the
unrestricted local user — the same trust as the CLI on this machine.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context

from footnote.errors import UsageError
from footnote.mcp.server import build_server
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.api import Library


def run_stdio(ws: Workspace, api_key: str = "") -> None:
    """Serve the workspace over stdin/stdout until the client closes it."""
    user = User(ws.settings.server.local_user, None)
    if api_key:
        found = ws.auth.user_for_key(api_key)
        if found is None:
            raise UsageError("the API key given to `footnote mcp` is not valid")
        user = found
    lib = Library(ws, user, owns=False)

    def caller(_: Context) -> Library:
        return lib

    anyio.run(build_server(caller).run_stdio_async)
