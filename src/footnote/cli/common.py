"""Shared pieces of the CLI: the typer app, consoles, options, workspace opening, progress."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from footnote.errors import FootnoteError
from footnote.workspace import Workspace

app = typer.Typer(
    name="footnote",
    help="Answers about papers where every sentence carries a footnote a program has checked.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
config_app = typer.Typer(help="Inspect the configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")

out = Console(soft_wrap=True)
err = Console(stderr=True)


WorkspaceOpt = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        "-w",
        envvar="FOOTNOTE_WORKSPACE",
        help="Workspace folder (default ./.footnote).",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


@contextmanager
def _workspace(path: Path | None) -> Iterator[Workspace]:
    try:
        ws = Workspace.open(path)
    except FootnoteError as exc:
        _fail(exc)
    try:
        yield ws
    except FootnoteError as exc:
        _fail(exc)
    finally:
        ws.close()


def _fail(exc: BaseException, code: int = 1) -> Any:
    err.print(f"[bold red]error:[/] {escape(str(exc))}")
    raise typer.Exit(code)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


@contextmanager
def _progress(enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def edit_in_editor(text: str, suffix: str = ".txt") -> str | None:
    """Open `text` in $VISUAL / $EDITOR (default `vi`) and return what was saved, or None when
    the editor failed or the text came back unchanged."""
    import os
    import shlex
    import subprocess
    import tempfile

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="footnote-edit-") as tmp:
        path = Path(tmp) / f"edit{suffix}"
        path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            raise FootnoteError(f"could not start the editor {editor!r}: {exc}") from exc
        if done.returncode != 0:
            return None
        edited = path.read_text(encoding="utf-8")
    return None if edited == text else edited
