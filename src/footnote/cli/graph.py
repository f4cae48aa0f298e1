"""`footnote graph …`: import graphs, list them, ask them questions, make training pairs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, app, err, out
from footnote.workspace import Workspace

graph_app = typer.Typer(help="Question answering over property graphs (safe text-to-Cypher).",
                        no_args_is_help=True)  # fmt: skip
app.add_typer(graph_app, name="graph")


def _catalog(ws: Workspace) -> Any:
    from footnote.pipelines.graph_io import GraphCatalog

    return GraphCatalog(ws.settings.graph, ws.dir)


@graph_app.command("import")
def import_(
    name: Annotated[str, typer.Argument(help="Name of the graph to create.")],
    files: Annotated[
        list[Path] | None, typer.Argument(help="CSV/JSON files, named after tables.")
    ] = None,
    schema: Annotated[
        Path | None, typer.Option(help="Graph spec JSON (tables, types, intents).")
    ] = None,
    demo: Annotated[
        str | None, typer.Option(help="Import a demo graph: movies or northwind.")
    ] = None,
    replace: Annotated[bool, typer.Option(help="Rebuild the graph if it exists.")] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create graph NAME from files with a declared schema, or from a demo's shared data."""
    from footnote.pipelines import graph_io
    from footnote.store.graph_base import load_spec

    with _workspace(workspace) as ws:
        if demo:
            spec = graph_io.spec_with_name(graph_io.demo_spec(demo), name)
            nodes, rels = graph_io.demo_rows(demo, graph_io.demo_data_dir(ws.settings.graph))
        elif schema is not None:
            spec = graph_io.spec_with_name(load_spec(schema), name)
            nodes, rels = graph_io.rows_from_files(spec, files or [])
        else:
            _fail(ValueError("give --schema with files, or --demo movies|northwind"))
        counts = _catalog(ws).create(spec, nodes, rels, replace=replace)
    _report(name, counts, as_json)


@graph_app.command("demo")
def demo(
    name: Annotated[str, typer.Argument(help="movies or northwind.")] = "movies",
    replace: Annotated[bool, typer.Option(help="Rebuild the graph if it exists.")] = True,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a demo graph (data read from the shared neo4j-example-graphs folder)."""
    import_(name, None, None, name, replace, workspace, as_json)


@graph_app.command("build-library")
def build_library(
    name: Annotated[str, typer.Option(help="Graph name.")] = "library",
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Build a graph of the ingested library: papers, sections, references, authors."""
    from footnote.pipelines import graph_io

    with _workspace(workspace) as ws:
        nodes, rels = graph_io.library_rows(ws.store)
        spec = graph_io.spec_with_name(graph_io.library_spec(), name)
        counts = _catalog(ws).create(spec, nodes, rels, replace=True)
    _report(name, counts, as_json)


def _report(name: str, counts: dict[str, int], as_json: bool) -> None:
    if as_json:
        _print_json({"graph": name, "counts": counts})
        return
    out.print(
        f"[green]graph {escape(name)}[/]: " + ", ".join(f"{k} {v}" for k, v in counts.items())
    )


@graph_app.command("ls")
def ls(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """List the graphs with their labels and intents."""
    with _workspace(workspace) as ws:
        cat = _catalog(ws)
        specs = [cat.spec(n) for n in cat.names()]
    rows = [
        {"name": s.name, "labels": list(s.nodes), "relationships": list(s.relationships),
         "intents": list(s.intents), "restricted": list(s.restricted)}
        for s in specs
    ]  # fmt: skip
    if as_json:
        _print_json(rows)
        return
    table = RichTable("graph", "labels", "relationships", "intents")
    for r in rows:
        table.add_row(r["name"], ", ".join(r["labels"]), ", ".join(r["relationships"]),
                      ", ".join(r["intents"]))  # fmt: skip
    out.print(table)


@graph_app.command("ask")
def ask(
    graph: Annotated[str, typer.Argument(help="Graph name (see `footnote graph ls`).")],
    question: Annotated[str, typer.Argument(help="The question, in English or Chinese.")],
    attr: Annotated[
        list[str] | None,
        typer.Option("--attr", help="Ask as a restricted principal: KEY=V1,V2 (repeatable)."),
    ] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Show the pipeline's events.")] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question from a graph, citing result rows; or ask back, or refuse."""
    from footnote.index.cypher_guard import Principal
    from footnote.pipelines.graph_qa import GraphRequest

    attrs = dict(_attr(a) for a in attr or [])
    who = Principal("cli", attrs) if attr else Principal("local", unrestricted=True)
    with _workspace(workspace) as ws:
        pipe = ws.graph(graph)
        try:
            asyncio.run(_drain(pipe.run(GraphRequest(question, who)), trace and not as_json))
        finally:
            pipe.close()
        result = pipe.outcome.to_dict()
    if as_json:
        _print_json(result)
        return
    style = {"answered": "green", "no_rows": "yellow", "clarify": "yellow"}.get(
        result["status"], "red"
    )
    out.print(escape(result["answer"] or result["reason"]))
    out.print(
        f"[dim]status[/] [{style}]{result['status']}[/]  [dim]cypher[/] {escape(result['cypher'])}"
    )


def _attr(text: str) -> tuple[str, tuple[str, ...]]:
    key, _, values = text.partition("=")
    if not key or not values:
        _fail(ValueError(f"--attr wants KEY=V1,V2, got {text!r}"))
    return key.strip(), tuple(v.strip() for v in values.split(","))


async def _drain(events: Any, trace: bool) -> None:
    from footnote.events import event_data

    async for event in events:
        if trace:
            data = json.dumps(event_data(event), ensure_ascii=False, default=str)
            err.print(f"[dim]{event.type:<13}[/] {escape(data[:300])}")


@graph_app.command("synth")
def synth(
    graph: Annotated[str, typer.Argument(help="Graph name.")],
    n: Annotated[int, typer.Option("--n", help="Pairs wanted.")] = 20,
    out_path: Annotated[Path, typer.Option("--out", help="JSONL file to write.")] = Path(
        "pairs.jsonl"
    ),
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Generate question→Cypher pairs with the `cypher` model; keep those that pass the guard,
    compile and return rows; write chat fine-tuning JSONL."""
    from footnote.pipelines.graph_io import GraphCatalog
    from footnote.pipelines.graph_synth import synthesise

    with _workspace(workspace) as ws:
        store = GraphCatalog(ws.settings.graph, ws.dir).open(graph)
        try:
            report = synthesise(
                store, ws.models.chat("cypher"), n, out_path, progress=lambda m: err.print(m)
            )
        finally:
            store.close()
    if as_json:
        _print_json(report)
    else:
        out.print(
            f"kept {report['kept']} of {report['generated']} pairs in {report['seconds']}s "
            f"({report['model_calls']} model calls) → {escape(str(out_path))}"
        )
