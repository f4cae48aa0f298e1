"""`footnote mcp`: the MCP server over stdio, for desktop assistants and coding agents.

Register it with a client as the command `footnote mcp -w /path/to/workspace`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from footnote.cli.common import WorkspaceOpt, _workspace, app, err


@app.command("mcp")
def mcp_stdio(
    api_key: Annotated[
        str,
        typer.Option(
            "--api-key",
            envvar="FOOTNOTE_API_KEY",
            help="Run as this key's user (its ACL groups apply); default: the local user.",
        ),
    ] = "",
    workspace: WorkspaceOpt = None,
) -> None:
    """Serve the library to an MCP client over stdio (tools ask, search, read_block,
    read_section, graph_ask; resources footnote://sources and footnote://blocks/ID)."""
    try:
        from footnote.mcp import run_stdio
    except ImportError as exc:  # pragma: no cover - depends on the install
        err.print(f"[bold red]error:[/] the mcp extra is not installed ({exc}): "
                  "pip install 'footnote[mcp]'")  # fmt: skip
        raise typer.Exit(1) from exc
    with _workspace(workspace) as ws:
        run_stdio(ws, api_key)
