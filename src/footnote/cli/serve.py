"""`footnote serve`: the HTTP API under uvicorn (API keys: `footnote keys`, cli/keys.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from footnote.cli.common import WorkspaceOpt, _workspace, app, err


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Interface to bind (default from config).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default from config).")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json, SSE run streams under /v1/runs), the web
    app at /, MCP at /mcp, OpenAI-compatible /v1/chat/completions and Prometheus /metrics."""
    try:
        import uvicorn

        from footnote.server.app import create_app, identity_mode
    except ImportError as exc:  # pragma: no cover - depends on the install
        err.print(f"[bold red]error:[/] the server extra is not installed ({exc}): "
                  "pip install 'footnote[server]'")  # fmt: skip
        raise typer.Exit(1) from exc
    with _workspace(workspace) as ws:
        settings = ws.settings.server
        fastapi_app = create_app(ws)
        mcp = _mount_mcp(fastapi_app, ws)
        bind_host, bind_port = host or settings.host, port or settings.port
        err.print(f"footnote: {identity_mode(fastapi_app.state.footnote)}")
        window = f"redis at {settings.redis_url}" if settings.redis_url else "in-process LRU"
        err.print(f"footnote: workspace {ws.dir}, message window: {window}")
        err.print(f"footnote: http://{bind_host}:{bind_port}/docs")
        err.print(f"footnote: {mcp}")
        uvicorn.run(fastapi_app, host=bind_host, port=bind_port, log_level="info")


def _mount_mcp(fastapi_app: object, ws: object) -> str:
    """Mount the MCP endpoint when the SDK is installed; a line saying what happened."""
    try:
        from footnote.mcp import mount_mcp
    except ImportError:
        return "MCP endpoint off (pip install 'footnote[mcp]')"
    mount_mcp(fastapi_app, ws)  # type: ignore[arg-type]
    return "MCP (streamable HTTP) at /mcp, same API keys"
