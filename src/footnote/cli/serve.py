"""`footnote serve` (the HTTP API under uvicorn) and `footnote keys add` (API keys)."""

from __future__ import annotations

from typing import Annotated

import typer

from footnote.cli.common import WorkspaceOpt, _workspace, app, err, out

keys_app = typer.Typer(help="Manage API keys (without any, the server runs as one local user).")
app.add_typer(keys_app, name="keys")


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Interface to bind (default from config).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default from config).")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json, SSE run streams under /v1/runs)."""
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
        bind_host, bind_port = host or settings.host, port or settings.port
        err.print(f"footnote: {identity_mode(fastapi_app.state.footnote)}")
        window = f"redis at {settings.redis_url}" if settings.redis_url else "in-process LRU"
        err.print(f"footnote: workspace {ws.dir}, message window: {window}")
        err.print(f"footnote: http://{bind_host}:{bind_port}/docs")
        uvicorn.run(fastapi_app, host=bind_host, port=bind_port, log_level="info")


@keys_app.command("add")
def add_key(
    user: Annotated[str, typer.Argument(help="User id the key belongs to.")],
    group: Annotated[
        list[str] | None, typer.Option("--group", "-g", help="ACL group (repeatable).")
    ] = None,
    label: Annotated[str, typer.Option(help="A note to recognise the key by.")] = "",
    workspace: WorkspaceOpt = None,
) -> None:
    """Create an API key for a user (shown once; only its hash is stored)."""
    from footnote.store.sessions import SessionStore

    with _workspace(workspace) as ws:
        key = SessionStore(ws.store).add_key(user, tuple(group or ()), label)
    out.print(key)
