"""Commands over documents: ingest, ls, show, delete, search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable
from rich.tree import Tree

from footnote.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    _fail,
    _print_json,
    _progress,
    _workspace,
    app,
    out,
)
from footnote.ingest import formats_text
from footnote.serialize import block_to_dict, section_to_dict, source_to_dict
from footnote.types import EVIDENCE_ID_RE, Block, Section
from footnote.workspace import IngestReport, Workspace


# -- ingest / ls / show -------------------------------------------------------------------
@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help=f"Files or folders: {formats_text()}.")],
    password: Annotated[str | None, typer.Option(help="Password for encrypted PDFs.")] = None,
    label: Annotated[
        list[str] | None, typer.Option("--label", help="Label for these sources (repeatable).")
    ] = None,
    acl_group: Annotated[
        list[str] | None,
        typer.Option("--acl-group", help="Only these groups may read the sources (repeatable)."),
    ] = None,
    no_index: Annotated[
        bool, typer.Option("--no-index", help="Store only; skip search indexing.")
    ] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Parse documents into addressable blocks, store and index them."""
    with _workspace(workspace) as ws, _progress(not as_json) as progress:
        report = ws.ingest(
            paths,
            password=password,
            labels=label or (),
            acl_groups=acl_group or (),
            index=not no_index,
            progress=progress,
        )
    if as_json:
        _print_json(_report_json(report))
    else:
        _render_report(report)
    if report.failed:
        raise typer.Exit(1)


def _report_json(report: IngestReport) -> dict[str, Any]:
    return {
        "files": [
            {
                "path": str(r.path),
                "outcome": r.outcome,
                "source": source_to_dict(r.source) if r.source else None,
                "blocks": r.blocks,
                "kinds": r.kinds,
                "error": r.error,
            }
            for r in report.results
        ],
        "failed": len(report.failed),
    }


def _render_report(report: IngestReport) -> None:
    table = RichTable(title="Ingested", show_lines=False)
    for col in ("file", "outcome", "source", "pages", "lang", "blocks", "tables", "headings"):
        table.add_column(col)
    for r in report.results:
        src = r.source
        table.add_row(
            escape(r.path.name),
            {"failed": "[red]failed[/]", "unchanged": "[dim]unchanged[/]"}.get(
                r.outcome, r.outcome
            ),
            src.id if src else "",
            str(src.pages) if src else "",
            src.lang if src else "",
            str(r.blocks),
            str(r.kinds.get("table", 0)),
            str(r.kinds.get("heading", 0)),
        )
    out.print(table)
    for r in report.results:
        if r.source and r.source.warnings:
            for w in r.source.warnings:
                out.print(f"[yellow]warning[/] {escape(r.path.name)}: {escape(w)}")
    if report.failed:
        out.print(f"[bold red]{len(report.failed)} file(s) failed:[/]")
        for r in report.failed:
            out.print(f"  [red]✗[/] {escape(str(r.path))}: {escape(r.error or '')}")


@app.command("ls")
def list_sources(
    all_versions: Annotated[
        bool, typer.Option("--all", help="Include superseded versions.")
    ] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List ingested sources."""
    with _workspace(workspace) as ws:
        records = ws.store.list_sources(include_superseded=all_versions)
    if as_json:
        _print_json([{**source_to_dict(r.source), "blocks": r.blocks} for r in records])
        return
    if not records:
        out.print("No sources yet. Try: footnote ingest examples/papers")
        return
    table = RichTable()
    for col in ("id", "title", "kind", "pages", "lang", "blocks", "version", "labels"):
        table.add_column(col)
    for r in records:
        s = r.source
        title = s.title if len(s.title) < 60 else s.title[:57] + "…"
        version = f"v{s.version}" + (" (old)" if r.superseded_by else "")
        table.add_row(
            s.id,
            escape(title),
            s.kind,
            str(s.pages),
            s.lang,
            str(r.blocks),
            version,
            ",".join(s.labels),
        )
    out.print(table)


@app.command()
def show(
    ref: Annotated[
        str, typer.Argument(help="A source id, an ingested file's path, or a block id.")
    ],
    tree: Annotated[bool, typer.Option("--tree", help="Show the section tree.")] = False,
    blocks: Annotated[bool, typer.Option("--blocks", help="List every block.")] = False,
    tables: Annotated[bool, typer.Option("--tables", help="Show the tables as grids.")] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a source (summary, tree, blocks, tables) or one block with its neighbours."""
    with _workspace(workspace) as ws:
        if EVIDENCE_ID_RE.match(ref):
            _show_block(ws, ref, as_json)
            return
        doc = ws.document(ref)
    if as_json:
        _print_json(
            {
                "source": source_to_dict(doc.source),
                "sections": [section_to_dict(s) for s in doc.sections],
                "blocks": [block_to_dict(b) for b in doc.blocks],
            }
        )
        return
    s = doc.source
    out.print(f"[bold]{escape(s.title)}[/]  [dim]{s.id} · {s.kind} · {s.pages} pages · {s.lang}[/]")
    out.print(f"[dim]{escape(s.uri)}[/]")
    facts = [
        ("authors", ", ".join(s.authors)),
        ("published", s.published_at or ""),
        ("doi", s.doi or ""),
        ("arXiv", s.arxiv_id or ""),
        ("read with", s.parser),
    ]
    for label, value in facts:
        if value:
            out.print(f"[dim]{label}:[/] {escape(value)}")
    for w in s.warnings:
        out.print(f"[yellow]warning:[/] {escape(w)}")
    if tree or not (blocks or tables):
        out.print(_render_tree(doc.sections, s.title))
    if blocks:
        for b in doc.blocks:
            _print_block_line(b)
    if tables:
        for b in doc.blocks:
            if b.table is not None:
                _print_table(b)


def _render_tree(sections: tuple[Section, ...], title: str) -> Tree:
    root = Tree(f"[bold]{escape(title)}[/]")

    def add(node: Tree, secs: tuple[Section, ...]) -> None:
        for sec in secs:
            child = node.add(f"{escape(sec.title)} [dim]({len(sec.block_ids)} blocks)[/]")
            add(child, sec.children)

    add(root, sections)
    return root


def _print_block_line(b: Block) -> None:
    text = b.text.replace("\n", " ")
    text = text if len(text) <= 110 else text[:107] + "…"
    out.print(f"[cyan]{b.id}[/] [magenta]{b.kind:<9}[/] p{b.page:<3} {escape(text)}")


def _print_table(b: Block) -> None:
    assert b.table is not None
    grid = RichTable(title=escape(b.table.caption or b.id), caption=b.id, show_lines=True)
    width = max((len(r) for r in b.table.all_rows), default=0)
    header = b.table.header[-1] if b.table.header else ()
    for c in range(width):
        grid.add_column(escape(header[c]) if c < len(header) else "")
    for row in b.table.rows:
        grid.add_row(*[escape(x) for x in row])
    out.print(grid)


def _show_block(ws: Workspace, block_id: str, as_json: bool) -> None:
    block = ws.resolve_block(block_id)
    near = ws.store.neighbours(block.id, radius=1)
    if as_json:
        data = block_to_dict(block)
        data["neighbours"] = [n.id for n in near if n.id != block.id]
        _print_json(data)
        return
    out.print(
        f"[cyan]{block.id}[/] · {block.kind} · page {block.page} · "
        f"{escape(' › '.join(block.section_path) or '(no section)')}"
    )
    if block.table is not None:
        _print_table(block)
    else:
        out.print(escape(block.text))
    for n in near:
        if n.id != block.id:
            where = "before" if n.order < block.order else "after"
            out.print(f"[dim]{where}:[/] ", end="")
            _print_block_line(n)


@app.command()
def delete(
    ref: Annotated[str, typer.Argument(help="A source id or an ingested file's path.")],
    workspace: WorkspaceOpt = None,
) -> None:
    """Delete a source with its blocks and index entries."""
    with _workspace(workspace) as ws:
        source = ws.delete_source(ref)
    out.print(f"deleted {source.id} ({escape(source.title)})")


# -- search -------------------------------------------------------------------------------
@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for (English or Chinese).")],
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-s", help="Limit to this source (id or ingested path; repeatable)."
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", min=1, max=200, help="Number of hits.")] = 8,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="Only blocks of this kind (repeatable).")
    ] = None,
    section: Annotated[
        str | None, typer.Option(help="Only blocks under this section path prefix (A/B).")
    ] = None,
    method: Annotated[str, typer.Option(help="hybrid, lexical or vector.")] = "hybrid",
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid keyword + vector search over the blocks, with each method's score."""
    from footnote.index import SearchFilters

    methods = {"hybrid": ("lexical", "vector"), "lexical": ("lexical",), "vector": ("vector",)}
    if method not in methods:
        _fail(ValueError(f"unknown method {method!r}: use hybrid, lexical or vector"))
    with _workspace(workspace) as ws:
        ids = tuple(ws.resolve_source(s).source.id for s in source or [])
        filters = SearchFilters(
            source_ids=ids,
            kinds=tuple(kind or ()),
            section_prefix=tuple(p for p in (section or "").split("/") if p),
        )
        hits = ws.searcher.search(query, k=k, filters=filters, methods=methods[method])
        titles = _titles(ws, {h.block.source_id for h in hits})
    if as_json:
        _print_json(
            [
                {
                    **block_to_dict(h.block),
                    "source_title": titles.get(h.block.source_id, ""),
                    "score": h.score,
                    "scores": h.scores,
                    "ranks": h.ranks,
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        )
        return
    if not hits:
        out.print("No matches.")
        return
    for i, h in enumerate(hits, 1):
        scores = "  ".join(f"{m} {v:.3f}" for m, v in h.scores.items())
        title = titles.get(h.block.source_id) or h.block.source_id
        out.print(
            f"[bold]{i}.[/] [bold]{escape(title)}[/] p{h.block.page} "
            f"[dim]{escape(' › '.join(h.block.section_path[-2:]))}[/]"
        )
        out.print(f"   [cyan]{h.block.id}[/] [magenta]{h.block.kind}[/]")
        snippet = (
            escape(h.snippet or h.block.text[:240])
            .replace("«", "[bold yellow]")
            .replace("»", "[/]")
        )
        out.print(f"   {snippet}")
        out.print(f"   [dim]{scores}[/]")


def _titles(ws: Workspace, source_ids: set[str]) -> dict[str, str]:
    """Each source's title (its file name when it has none)."""
    found = {}
    for sid in source_ids:
        record = ws.store.get_source(sid)
        if record is not None:
            found[sid] = record.source.title or Path(record.source.uri).name
    return found
