"""The MCP server (L7): footnote's tools and resources for coding agents and assistants.

`footnote mcp` serves it over stdio; `footnote serve` also mounts it at `/mcp` (streamable
HTTP, API-key auth, per-user scoping as the REST API). Imports of the SDK are absolute
(`mcp.server…`): this package is `footnote.mcp` and never shadows it.
"""

from footnote.mcp.http import mount_mcp
from footnote.mcp.server import build_server
from footnote.mcp.stdio import run_stdio

__all__ = ["build_server", "mount_mcp", "run_stdio"]
