"""Reproduction commands: `settings` (the experiment-settings table), `crosscheck` (do the
stated aggregates add up?) and `compute` (a sandboxed snippet over cited numbers)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, app, err, out
from footnote.errors import ToolRetry, UsageError

FORMATS = ("table", "json", "config", "markdown", "csv")


@app.command("settings")
def settings_cmd(
    source: Annotated[str, typer.Argument(help="Source id, id prefix or ingested file path.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="table (terminal), json (the full contract), config (a starter config with "
            "citations), markdown or csv.",
        ),
    ] = "table",
    output: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the export to this file.")
    ] = None,
    extractor: Annotated[
        str | None,
        typer.Option(help="rules, model, hybrid or auto (default: reproduce.extractor)."),
    ] = None,
    rejected: Annotated[
        bool, typer.Option("--rejected", help="Also list candidate values that failed the checks.")
    ] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The paper's experimental setup as a table; every value cites the block or table cell it
    was read from and passed the citation checks. What the paper does not state says so."""
    from footnote.pipelines.reproduce.table import to_config, to_csv, to_markdown
    from footnote.workspace.reproduce import settings_table

    fmt = "json" if as_json else fmt
    if fmt not in FORMATS:
        _fail(UsageError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}"))
    with _workspace(workspace) as ws:

        def progress(event: Any) -> None:
            if getattr(event, "type", "") == "status":
                err.print(f"[dim]{escape(event.message)}[/]")

        table = asyncio.run(settings_table(ws, source, extractor=extractor, progress=progress))
    text: str | None = None
    if fmt == "json":
        text = json.dumps(table.to_dict(), ensure_ascii=False, indent=2) + "\n"
    elif fmt == "config":
        text = json.dumps(to_config(table), ensure_ascii=False, indent=2) + "\n"
    elif fmt == "markdown":
        text = to_markdown(table)
    elif fmt == "csv":
        text = to_csv(table)
    if output is not None:
        output.write_text(text if text is not None else to_markdown(table), encoding="utf-8")
        err.print(f"[dim]wrote {output}[/]")
        return
    if text is not None:
        typer.echo(text, nl=False)
        return
    grid = RichTable(title=f"Experiment settings: {escape(table.title)}")
    for col in ("setting", "value", "cited", "where"):
        grid.add_column(col)
    for row in table.rows:
        if not row.values:
            grid.add_row(row.field, "[dim]not stated[/]", "", "")
        for i, v in enumerate(row.values):
            where = ", ".join(p for p in (f"p. {v.page}" if v.page else "",
                                          " > ".join(v.section[-1:])) if p)  # fmt: skip
            grid.add_row(row.field if i == 0 else "", escape(v.value), v.evidence_id, escape(where))
        if rejected:
            for r in row.rejected:
                why = "; ".join(r.reasons.values())
                grid.add_row("", f"[red]✗ {escape(r.value)}[/]", r.evidence_id, escape(why[:80]))
    out.print(grid)
    err.print(
        f"[dim]{sum(r.stated for r in table.rows)} of {len(table.rows)} settings stated; "
        f"extractor {table.extractor}; {table.usage.get('seconds', 0):.1f} s; run {table.run_id}[/]"
    )


@app.command("crosscheck")
def crosscheck_cmd(
    source: Annotated[str, typer.Argument(help="Source id, id prefix or ingested file path.")],
    mismatches: Annotated[
        bool, typer.Option("--mismatches", help="Only the checks that do not add up.")
    ] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute the averages, totals and shares a paper states (tables and text); report
    those that do not add up, with the stated value and every input cited."""
    from footnote.workspace.reproduce import crosscheck_report

    with _workspace(workspace) as ws:
        report = crosscheck_report(ws, source)
    if mismatches:
        report["checks"] = [c for c in report["checks"] if not c["adds_up"]]
    if as_json:
        _print_json(report)
        return
    grid = RichTable(title=f"Cross-checks: {escape(report['source']['title'])}")
    for col in ("", "where", "stated", "recomputed", "formula", "cited"):
        grid.add_column(col)
    for c in report["checks"]:
        mark = "[green]✓[/]" if c["adds_up"] else "[bold red]✗[/]"
        grid.add_row(
            mark, escape(c["where"]), f"{c['stated']['value']:g}", f"{c['recomputed']:.4g}",
            escape(c["formula"][:60]), c["stated"]["cite"],
        )  # fmt: skip
    out.print(grid)
    err.print(f"[dim]{report['total']} checks, {report['mismatches']} do not add up[/]")


@app.command("compute")
def compute_cmd(
    code: Annotated[str, typer.Argument(help='Python that assigns results, e.g. "avg = (a+b)/2".')],
    inputs: Annotated[
        list[str] | None,
        typer.Option(
            "--input",
            "-i",
            help="NAME=CELL_ID (the cell's one number) or NAME=BLOCK_ID:VALUE (repeatable).",
        ),
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a short snippet in the sandbox (no network, no files, CPU/memory/output limits) over
    numbers taken from cited cells; prints the results and the computation id to cite."""
    from footnote.agent.compute import CitedNumber
    from footnote.workspace.reproduce import compute

    specs: dict[str, str | CitedNumber] = {}
    for item in inputs or []:
        name, sep, ref = item.partition("=")
        if not sep or not name.strip().isidentifier():
            _fail(UsageError(f"--input {item!r}: expected NAME=CELL_ID or NAME=BLOCK_ID:VALUE"))
        cite, colon, value = ref.rpartition(":") if ":" in ref else (ref, "", "")
        try:
            specs[name.strip()] = CitedNumber(cite=cite, value=float(value)) if colon else ref
        except ValueError:
            _fail(UsageError(f"--input {item!r}: {value!r} is not a number"))
    with _workspace(workspace) as ws:
        try:
            comp = compute(ws, code, specs)
        except ToolRetry as exc:
            _fail(UsageError(str(exc)))
    if as_json:
        _print_json(comp.to_dict())
        return
    out.print(escape(comp.render()))
    if not comp.result.ok:
        raise typer.Exit(1)
