"""`footnote keys`: add, list, revoke and rotate API keys (only a key's hash is stored; a
key's id is a prefix of that hash, safe to show and to pass to `revoke` / `rotate`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import JsonOpt, WorkspaceOpt, _print_json, _workspace, app, err, out
from footnote.serialize import to_plain

keys_app = typer.Typer(
    help="Manage API keys (without any, the server runs as one local user).",
    no_args_is_help=True,
)
app.add_typer(keys_app, name="keys")

KeyId = Annotated[str, typer.Argument(help="The key's id from `footnote keys ls` (or a prefix).")]


@keys_app.command("add")
def add_key(
    user: Annotated[str, typer.Argument(help="User id the key belongs to.")],
    group: Annotated[
        list[str] | None, typer.Option("--group", "-g", help="ACL group (repeatable).")
    ] = None,
    label: Annotated[str, typer.Option(help="A note to recognise the key by.")] = "",
    admin: Annotated[
        bool, typer.Option(help="An admin reads every source and may delete any.")
    ] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Create an API key for a user (shown once; only its hash is stored).

    A user reads public sources, those shared with one of their groups and their own uploads
    (private to them unless shared); only the owner or an admin deletes a source."""

    with _workspace(workspace) as ws:
        key = ws.auth.add_key(user, tuple(group or ()), label, admin=admin)
    out.print(key, soft_wrap=True)


@keys_app.command("ls")
def list_keys(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """List the API keys: id, user, groups, label, created and last used (never a secret)."""
    with _workspace(workspace) as ws:
        keys = ws.auth.list_keys()
    if as_json:
        _print_json([to_plain(k) for k in keys])
        return
    if not keys:
        out.print("No API keys: the server runs as one local user. Add one: footnote keys add USER")
        return
    table = RichTable()
    for col in ("id", "user", "groups", "label", "created", "last used"):
        table.add_column(col)
    for k in keys:
        groups = "admin" if k.admin else ", ".join(k.groups) or "-"
        table.add_row(k.id, escape(k.user_id), escape(groups), escape(k.label),
                      k.created_at[:16].replace("T", " "),
                      (k.last_used_at or "never")[:16].replace("T", " "))  # fmt: skip
    out.print(table)


@keys_app.command("revoke")
def revoke_key(key_id: KeyId, workspace: WorkspaceOpt = None) -> None:
    """Revoke a key: it stops working at once."""
    with _workspace(workspace) as ws:
        gone = ws.auth.revoke_key(key_id)
    err.print(f"revoked key {gone.id} of {escape(gone.user_id)}"
              + (f" ({escape(gone.label)})" if gone.label else ""))  # fmt: skip


@keys_app.command("rotate")
def rotate_key(key_id: KeyId, workspace: WorkspaceOpt = None) -> None:
    """Replace a key's secret: prints the new key (shown once); the old one is revoked."""
    with _workspace(workspace) as ws:
        key, record = ws.auth.rotate_key(key_id)
    err.print(f"new key {record.id} for {escape(record.user_id)}; the old key {key_id} is revoked")
    out.print(key, soft_wrap=True)
