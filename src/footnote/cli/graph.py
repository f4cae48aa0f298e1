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
from footnote.errors import FootnoteError
from footnote.workspace import Workspace

graph_app = typer.Typer(help="Question answering over property graphs (safe text-to-Cypher).",
                        no_args_is_help=True)  # fmt: skip
app.add_typer(graph_app, name="graph")


def _catalog(ws: Workspace) -> Any:
    return ws.graph_catalog()


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
    """Create graph NAME from files with a declared schema, or from a demo's bundled data."""
    from footnote.pipelines.graph import sources
    from footnote.store.graph.base import load_spec
    from footnote.store.graph.files import rows_from_files

    with _workspace(workspace) as ws:
        if demo:
            spec = sources.spec_with_name(sources.demo_spec(demo), name)
            nodes, rels = sources.demo_rows(demo, sources.demo_data_dir(ws.settings.graph, demo))
        elif schema is not None:
            spec = sources.spec_with_name(load_spec(schema), name)
            nodes, rels = rows_from_files(spec, files or [])
        else:
            _fail(ValueError("give --schema with files, or --demo movies|northwind"))
        counts = _catalog(ws).create(spec, nodes, rels, replace=replace)
    _report(name, counts, as_json)


@graph_app.command("attach")
def attach(
    name: Annotated[str, typer.Argument(help="Name of the graph to create.")],
    database: Annotated[
        str, typer.Argument(help="A LadybugDB database file, or falkor://host:port/graph.")
    ],
    replace: Annotated[bool, typer.Option(help="Attach again if the graph exists.")] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask an existing database in place: its schema (labels, relationship types, typed
    properties, example values) is read from it, nothing is imported."""
    from footnote.workspace.graph import attach_graph

    with _workspace(workspace) as ws:
        try:
            spec = attach_graph(ws, name, database, replace=replace)
        except FootnoteError as exc:
            _fail(exc)
    if as_json:
        _print_json(spec.model_dump(by_alias=True, include={"name", "database", "nodes",
                                                            "relationships", "samples"}))  # fmt: skip
        return
    out.print(f"[bold]{escape(name)}[/] reads {escape(spec.database)} in place")
    out.print(escape(spec.describe()))


@graph_app.command("demo")
def demo(
    name: Annotated[str, typer.Argument(help="movies or northwind.")] = "movies",
    replace: Annotated[bool, typer.Option(help="Rebuild the graph if it exists.")] = True,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a demo graph (bundled data; `graph.data_dir` may hold the upstream files)."""
    import_(name, None, None, name, replace, workspace, as_json)


@graph_app.command("build-library")
def build_library(
    name: Annotated[str, typer.Option(help="Graph name.")] = "library",
    group: Annotated[
        list[str] | None,
        typer.Option("--group", help="Copy only sources these groups may read (repeatable)."),
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Build a graph of the ingested library: papers, sections, references, authors. The
    graph carries the copied sources' labels, and an ACL that lets in only callers who may
    read every copied source."""
    from footnote.pipelines.graph import sources

    with _workspace(workspace) as ws:
        lib = sources.library_graph(ws.store, tuple(group) if group else None)
        counts = _catalog(ws).create(lib.spec(name), lib.nodes, lib.rels, replace=True)
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
    from footnote.pipelines.graph.qa import GraphRequest
    from footnote.verify.cypher.guard import Principal

    attrs = dict(_attr(a) for a in attr or [])
    who = Principal("cli", attrs) if attr else Principal("local", unrestricted=True)
    with _workspace(workspace) as ws:
        pipe = ws.graph(graph, user_groups=None)  # the local operator
        try:
            asyncio.run(_drain(pipe.run(GraphRequest(question, who)), trace and not as_json))
        finally:
            pipe.close()
        result = pipe.outcome.to_dict()
    if as_json:
        _print_json(result)
        return
    _print_result(result)


GRAPH_CHAT_HELP = """commands:
  /new     start a new conversation (forget the earlier turns)
  /help    this text
  /quit    leave (Ctrl-D too)"""


@graph_app.command("chat")
def chat(
    graph: Annotated[str, typer.Argument(help="Graph name (see `footnote graph ls`).")],
    attr: Annotated[
        list[str] | None,
        typer.Option("--attr", help="Ask as a restricted principal: KEY=V1,V2 (repeatable)."),
    ] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Ask a graph question after question: a follow-up ("and which of them …") is read with
    the earlier turns; each answer cites its rows."""
    import contextlib

    from footnote.errors import FootnoteError
    from footnote.pipelines.graph.conversation import GraphTurn
    from footnote.pipelines.graph.qa import GraphRequest
    from footnote.verify.cypher.guard import Principal

    attrs = dict(_attr(a) for a in attr or [])
    who = Principal("cli", attrs) if attr else Principal("local", unrestricted=True)
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history for input())
    history: list[GraphTurn] = []
    with _workspace(workspace) as ws:
        pipe = ws.graph(graph, user_groups=None)  # the local operator
        out.print(f"graph {escape(graph)} · /help for commands · /quit to leave")
        try:
            while True:
                try:
                    line = input("you> ").strip()
                except (EOFError, KeyboardInterrupt):
                    out.print()
                    break
                if line in ("/quit", "/exit", "/q"):
                    break
                if line in ("/new", "/help") or not line:
                    if line == "/new":
                        history.clear()
                    out.print(GRAPH_CHAT_HELP if line == "/help" else "")
                    continue
                try:
                    request = GraphRequest(line, who, history=tuple(history))
                    asyncio.run(_drain(pipe.run(request), False))
                except FootnoteError as exc:
                    err.print(f"[red]error:[/] {escape(str(exc))}")
                    continue
                history.append(pipe.turn())
                _print_result(pipe.outcome.to_dict())
        finally:
            pipe.close()


def _print_result(result: dict[str, Any]) -> None:
    style = {"answered": "green", "no_rows": "yellow", "clarify": "yellow"}.get(
        result["status"], "red"
    )
    _print_footnoted(result)
    support = f"  [dim]support[/] {result['support']:.2f}" if result["status"] == "answered" else ""
    out.print(
        f"[dim]status[/] [{style}]{result['status']}[/]{support}  "
        f"[dim]cypher[/] {escape(result['cypher'])}"
    )


def _print_footnoted(result: dict[str, Any]) -> None:
    """The answer with a footnote mark per cited row, then the rows those marks point to."""
    from footnote.verify.graph_answer import row_id, row_text

    if not result["sentences"]:
        out.print(escape(result["answer"] or result["reason"]))
        for option in result["options"]:
            out.print(f"  - {escape(option)}")
        return
    marks: dict[str, int] = {}
    parts = []
    for s in result["sentences"]:
        nums = [marks.setdefault(r, len(marks) + 1) for r in s["rows"]]
        parts.append(escape(s["text"]) + "".join(f"[cyan]\\[{n}][/]" for n in nums))
    out.print(" ".join(parts))
    rows = result["rows"]
    for rid, n in marks.items():
        i = next((k for k in range(len(rows)) if row_id(k) == rid), None)
        text = row_text(list(rows[i]), list(rows[i].values())) if i is not None else rid
        out.print(f"  [cyan]\\[{n}][/] [dim]{rid}[/] {escape(text)}")


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


SYNTH_HELP = """Generate question→Cypher pairs for a LoRA adapter or few-shot examples, each
checked before it is kept, and write them as chat fine-tuning JSONL.

A pair is kept when its Cypher parses, passes the read-only guard, EXPLAINs and returns rows
with a value, the question names the query's literals, and the checker model — shown only the
question and the rows, never the query or the writer's words — agrees the rows answer the
question. The writer is `compose` (facts mode) or `cypher` (free mode); the checker is
`--checker` (the `judge` role by default). When the checker is unbound or bound to the
writer's model, no model checks: the pairs are checked by execution and code only, and the
report says so.

Human spot-check: `--review sample.csv` (or .jsonl) writes a random sample of the checked
pairs (`--review-size`, `--review-seed`; the seed is printed) with blank `human_verdict` and
`human_note` columns. Fill `human_verdict` with yes (the question and its rows match) or no,
then `footnote graph synth --import-review sample.csv` prints how often you agree with the
automatic check (`auto_verdict`: keep, or reject when the checker disagreed)."""


@graph_app.command("synth", help=SYNTH_HELP)
def synth(
    graph: Annotated[
        str | None, typer.Argument(help="Graph name (not needed with --import-review).")
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Pairs wanted.")] = 20,
    out_path: Annotated[Path, typer.Option("--out", help="JSONL file to write.")] = Path(
        "pairs.jsonl"
    ),
    mode: Annotated[
        str,
        typer.Option(
            help="`facts`: template Cypher over real nodes, question by the `compose` model; "
            "`free`: the `cypher` model proposes pairs."
        ),
    ] = "facts",
    lang: Annotated[str, typer.Option(help="Language of the questions (facts mode).")] = "English",
    library: Annotated[
        bool, typer.Option(help="Also add kept pairs to the graph's few-shot examples.jsonl.")
    ] = False,
    checker: Annotated[
        str,
        typer.Option(
            help="Model role that checks the pairs; must be bound to another model "
            "than the writer's, else the check is by execution and code only."
        ),
    ] = "judge",
    review: Annotated[
        Path | None,
        typer.Option(
            help="Write a random sample of the checked pairs here for a human "
            "spot-check (.csv: CSV, else JSONL), with blank verdict columns."
        ),
    ] = None,
    review_size: Annotated[int, typer.Option(min=1, help="Pairs in the review sample.")] = 20,
    review_seed: Annotated[
        int | None, typer.Option(help="Seed of the review sample (default: drawn and printed).")
    ] = None,
    import_review: Annotated[
        Path | None,
        typer.Option(
            "--import-review",
            help="Read a filled review file back and report the "
            "human agreement with the automatic check (nothing is generated).",
        ),
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    from footnote.eval.graph_facts import synthesise_from_facts
    from footnote.eval.graph_review import import_review as read_review
    from footnote.eval.graph_review import pick_checker
    from footnote.eval.graph_synth import synthesise
    from footnote.pipelines.graph.context import EXAMPLES_FILE

    if import_review is not None:
        try:
            agreement = read_review(import_review)
        except (OSError, ValueError) as exc:
            _fail(exc)
        _print_review(agreement, as_json)
        return
    if graph is None:
        return _fail(ValueError("give GRAPH (or --import-review FILE)"))  # type: ignore[no-any-return]
    if mode not in ("facts", "free"):
        _fail(ValueError("--mode is facts or free"))
    writer = "compose" if mode == "facts" else "cypher"
    with _workspace(workspace) as ws:
        try:
            check = pick_checker(ws.models, writer, checker)
        except FootnoteError as exc:
            _fail(exc)
        err.print(escape(check.note))
        catalog = ws.graph_catalog()
        store = catalog.open(graph)
        lib = catalog.folder(graph) / EXAMPLES_FILE if library else None
        try:
            if mode == "facts":
                report = synthesise_from_facts(
                    store, ws.models.chat(writer), check.model, n, out_path, lang=lang,
                    library=lib, progress=lambda m: err.print(escape(m)), review=review,
                    review_size=review_size, review_seed=review_seed,
                )  # fmt: skip
            else:
                report = synthesise(store, ws.models.chat(writer), n, out_path,
                                    progress=lambda m: err.print(escape(m)),
                                    checker=check.model, review=review,
                                    review_size=review_size, review_seed=review_seed)  # fmt: skip
        finally:
            store.close()
    report["check"] = check.note  # the role-level reason (bindings), not the model names
    if as_json:
        _print_json(report)
        return
    out.print(
        f"kept {report['kept']} of {report['generated']} pairs in {report['seconds']}s "
        f"({report['model_calls']} model calls) → {escape(str(out_path))}; {escape(check.note)}"
    )
    if report["review"]:
        r = report["review"]
        out.print(f"review sample: {r['size']} of {r['of']} checked pairs (seed {r['seed']}) → "
                  f"{escape(r['file'])}; fill human_verdict (yes/no), then "
                  f"`footnote graph synth --import-review {escape(r['file'])}`")  # fmt: skip


def _print_review(agreement: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _print_json(agreement)
        return

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.0f}%"

    out.print(f"reviewed {agreement['reviewed']} of {agreement['rows']} pairs: human agrees "
              f"with the automatic check on {pct(agreement['agreement'])} (kept pairs "
              f"{pct(agreement['agreement_kept'])}, rejected {pct(agreement['agreement_rejected'])})")  # fmt: skip
    if agreement["disagreements"]:
        out.print("differs on: " + ", ".join(escape(i) for i in agreement["disagreements"]))
