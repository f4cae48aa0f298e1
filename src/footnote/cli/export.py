"""`footnote export` (and `footnote research export`): a brief, a chat thread or a saved answer
as Markdown, HTML, PDF, JSON, BibTeX or CSL-JSON with its evidence appendix; `footnote research
log` prints a run's hash-chained review log for audit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, app, err
from footnote.cli.research import research_app

export_app = typer.Typer(
    no_args_is_help=True,
    help="Export a research brief, a chat thread or a saved answer with its evidence appendix.",
)
app.add_typer(export_app, name="export")

FormatOpt = Annotated[
    str, typer.Option("--format", "-f", help="markdown, html, pdf, json, bibtex or csl.")
]
OutOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Write here (default: stdout; PDF needs a file).")
]
GroupsOpt = Annotated[
    str | None,
    typer.Option("--as-groups", help="Export as a user in these comma-separated ACL groups "
                 "(what they may not read is withheld); default: unrestricted."),
]  # fmt: skip


def _groups(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(g.strip() for g in value.split(",") if g.strip())


def _write(data: bytes, fmt: str, out: Path | None, withheld: tuple[str, ...]) -> None:
    if out is None and fmt == "pdf" and sys.stdout.isatty():
        _fail(ValueError("a PDF goes to a file: give --out FILE.pdf"))
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        out.write_bytes(data)
        err.print(f"wrote {out} ({len(data)} bytes)")
    for line in withheld:
        err.print(f"[yellow]{line}[/]")


def brief_cmd(
    run_id: Annotated[str, typer.Argument(help="A research run id.")],
    fmt: FormatOpt = "markdown",
    out: OutOpt = None,
    version: Annotated[int | None, typer.Option(help="A signed version (default: as reviewed now).")] = None,
    as_groups: GroupsOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:  # fmt: skip
    """Export a research brief (as reviewed now, or a signed --version)."""
    from footnote.workspace.export import export_brief

    with _workspace(workspace) as ws:
        data, doc = export_brief(ws, run_id, fmt, user_groups=_groups(as_groups), version=version)
    _write(data, fmt, out, doc.withheld)


export_app.command("brief")(brief_cmd)
research_app.command("export")(brief_cmd)


@export_app.command("session")
def session_cmd(
    session_id: Annotated[str, typer.Argument(help="A chat session id.")],
    fmt: FormatOpt = "markdown",
    out: OutOpt = None,
    message_id: Annotated[str | None, typer.Option(help="Only this answer of the thread.")] = None,
    user: Annotated[str, typer.Option(help="The session's owner.")] = "local",
    as_groups: GroupsOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Export a chat thread (or one of its answers)."""
    from footnote.workspace.export import export_thread

    with _workspace(workspace) as ws:
        data, doc = export_thread(ws, user, session_id, fmt, user_groups=_groups(as_groups),
                                  message_id=message_id)  # fmt: skip
    _write(data, fmt, out, doc.withheld)


@export_app.command("answer")
def answer_cmd(
    answer_file: Annotated[Path, typer.Argument(help="An answer saved by `footnote ask --json`.")],
    fmt: FormatOpt = "markdown",
    out: OutOpt = None,
    as_groups: GroupsOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Export an answer saved with `footnote ask --json`."""
    from footnote.workspace.export import export_answer

    try:
        answer = json.loads(answer_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        _fail(ValueError(f"cannot read the answer {answer_file}: {exc}"))
    with _workspace(workspace) as ws:
        data, doc = export_answer(ws, answer, fmt, user_groups=_groups(as_groups))
    _write(data, fmt, out, doc.withheld)


@research_app.command("log")
def log_cmd(
    run_id: Annotated[str, typer.Argument(help="A research run id.")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a run's review log (every action, its chained hash) and whether the chain verifies."""
    from footnote.workspace.review import audit_log

    with _workspace(workspace) as ws:
        log = audit_log(ws, run_id)
    if as_json:
        _print_json(log)
    else:
        for e in log["entries"]:
            sys.stdout.write(f"{e['seq']:>4} {e['at']} {e['actor']:<12} {e['action']:<13} "
                             f"{e['target']:<22} {e['hash'][:16]}\n")  # fmt: skip
        sys.stdout.write(f"{log['detail']}\n")
    if not log["verified"]:
        raise typer.Exit(2)
