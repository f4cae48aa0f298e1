"""`footnote config …` commands."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    _fail,
    _print_json,
    config_app,
    out,
)
from footnote.config import describe
from footnote.errors import FootnoteError


# -- config -------------------------------------------------------------------------------
@config_app.command("show")
def config_show(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """Print the effective configuration with a description of every field."""
    from footnote.config import load_settings

    try:
        settings = load_settings(workspace)
    except FootnoteError as exc:
        _fail(exc)
    flat = settings.model_dump(mode="json")
    if as_json:
        _print_json(flat)
        return
    table = RichTable(title=f"footnote settings (workspace {settings.workspace})")
    for col in ("setting", "value", "description"):
        table.add_column(col)
    for name, _type, doc in describe():
        value: Any = flat
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        table.add_row(name, escape(json.dumps(value, ensure_ascii=False)), escape(doc))
    out.print(table)
    out.print("[dim]Override with FOOTNOTE_<SECTION>__<FIELD>=… or <workspace>/config.toml[/]")
