"""`footnote migrate`: copy the workspace's store to another store URL, verified."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table as RichTable

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, app, out
from footnote.config import load_settings
from footnote.errors import FootnoteError, StoreError


@app.command()
def migrate(
    to: Annotated[
        str, typer.Option("--to", help="Destination store URL (postgresql://… or sqlite:///…).")
    ],
    source: Annotated[
        str | None,
        typer.Option("--from", help="Source store URL (default: the workspace's store)."),
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Copy a store (records, vectors, search index) into an empty one; counts and hashes
    of every table are compared, and the command fails unless all match."""
    from footnote.workspace.migrate import migrate as run_migration

    try:
        settings = load_settings(workspace)
        report = run_migration(
            source or settings.store_url,
            to,
            settings=settings.retrieval,
            index_dir=settings.workspace / "index",
        )
    except FootnoteError as exc:
        _fail(exc)
    rows = [
        {"table": t.name, "rows": t.rows, "copied": t.copied, "hash": t.copy_hash[:16], "ok": t.ok}
        for t in report.tables
    ]
    if as_json:
        _print_json({"ok": report.ok, "tables": rows})
    else:
        table = RichTable("table", "rows", "copied", "sha256", "ok")
        for r in rows:
            table.add_row(str(r["table"]), str(r["rows"]), str(r["copied"]), str(r["hash"]),
                          "yes" if r["ok"] else "NO")  # fmt: skip
        out.print(table)
    if not report.ok:
        _fail(StoreError("the copy does not match its source (see the table)"))
