"""Commands that answer: ask, and the demo that ingests and asks the example papers."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    _fail,
    _print_json,
    _progress,
    _workspace,
    app,
    err,
    out,
)
from footnote.cli.documents import _render_report, _render_tree
from footnote.examples import PAPERS_DIR as EXAMPLES_DIR
from footnote.types import INSUFFICIENT_MARK
from footnote.workspace import Workspace


# -- ask ----------------------------------------------------------------------------------
@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question, in English or Chinese.")],
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-s", help="Limit to this source (id or ingested path; repeatable)."
        ),
    ] = None,
    library: Annotated[
        bool, typer.Option("--library", help="Search the whole library (default).")
    ] = False,
    mode: Annotated[
        str | None,
        typer.Option(help="Compose mode: auto, cite, attach or extractive (default from config)."),
    ] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Show the pipeline's events.")] = False,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer a question with footnotes that were checked, or say honestly why not."""
    if source and library:
        _fail(ValueError("give either --source or --library, not both"))
    with _workspace(workspace) as ws:
        answer_json = asyncio.run(_ask(ws, question, source or [], mode, trace, as_json))
    if as_json:
        _print_json(answer_json)


async def _ask(
    ws: Workspace, question: str, sources: list[str], mode: str | None, trace: bool, quiet: bool
) -> dict[str, Any]:
    from footnote.events import CheckedSentence, EvidenceShown, Final, Status, event_data
    from footnote.serialize import answer_to_dict

    run_id = None
    final: dict[str, Any] = {}
    printer = SentencePrinter()
    events = ws.ask(question, sources=sources, mode=mode)
    async for event in events:
        if trace and not quiet:
            err.print(
                f"[dim]{event.type:<13}[/] {escape(json.dumps(event_data(event), ensure_ascii=False, default=str)[:300])}"
            )
        elif isinstance(event, Status) and not quiet:
            err.print(f"[dim]… {escape(event.message)}[/]")
        elif isinstance(event, EvidenceShown) and not quiet:
            print_found(event.passages)
        if isinstance(event, CheckedSentence) and not quiet:
            printer.print(event)
        if isinstance(event, Final):
            final = answer_to_dict(event.answer)
    run_id = ws.last_run_id
    final["run_id"] = run_id
    if not quiet:
        render_answer(final, printed=printer.printed)
    return final


def print_found(passages: list[dict[str, Any]]) -> None:
    """The evidence as found (stderr, with the progress): the passages the composer is shown,
    before any check."""
    err.print(f"[dim]… found {len(passages)} passage{'s' if len(passages) != 1 else ''}:[/]")
    for p in passages:
        where = p["section"][-1] if p["section"] else p["title"]
        text = " ".join(p["text"].split())
        err.print(
            f"[dim]    p. {p['page']} {escape(where)}: {escape(text)}[/]",
            no_wrap=True,
            overflow="ellipsis",
        )


def sentence_markup(s: dict[str, Any], board: dict[str, int]) -> str:
    """One answer sentence (the public shape) with its footnote markers, a weak one marked."""
    marks = "".join(f"[{board[c['id']]}]" for c in s["citations"] if c["id"] in board)
    text = escape(s["text"]) + (f"[cyan]{escape(marks)}[/]" if marks else "")
    return f"[yellow]{text} {INSUFFICIENT_MARK}[/]" if s["insufficient"] else text


class SentencePrinter:
    """Prints checked sentences as they arrive, numbering footnotes in order of first citation
    (the order of the answer's evidence board)."""

    def __init__(self) -> None:
        self.board: dict[str, int] = {}
        self.printed = 0

    def print(self, event: Any) -> None:
        """Print one `sentence` event (a `CheckedSentence`) on its own line."""
        from footnote.serialize import citation_to_dict

        s = event.sentence
        cites = [citation_to_dict(c) for c in s.citations]
        for c in cites:
            self.board.setdefault(c["id"], len(self.board) + 1)
        if self.printed == 0:
            out.print()
        shown = {"text": s.text, "citations": cites, "insufficient": s.marked_insufficient}
        out.print(sentence_markup(shown, self.board))
        self.printed += 1


def render_answer(a: dict[str, Any], *, printed: int = 0) -> None:
    """Print an answer with footnote markers, its evidence board and support score; the first
    `printed` sentences were printed as they arrived and are not repeated."""
    board = {c["id"]: i + 1 for i, c in enumerate(a["evidence_board"])}
    status_style = {"answered": "green", "weak_evidence": "yellow"}.get(a["status"], "red")
    if not printed:
        out.print()
    if a["sentences"][printed:]:
        parts = [sentence_markup(s, board) for s in a["sentences"][printed:]]
        out.print(" ".join(parts))
    if a["reason"]:
        out.print(f"[{status_style}]{escape(a['reason'])}[/]")
    out.print(
        f"[dim]status[/] [{status_style}]{a['status']}[/]  "
        f"[dim]support score[/] {a['support_score']:.2f}  "
        f"[dim]{a['usage']['model_calls']} model calls, {a['usage']['tokens_in']}+"
        f"{a['usage']['tokens_out']} tokens, {a['usage']['seconds']:.1f} s[/]"
    )
    if a["evidence_board"]:
        table = RichTable(title="Evidence", show_lines=True)
        for col in ("#", "page", "section", "verdict", "quote", "id"):
            table.add_column(col, overflow="fold")
        for c in a["evidence_board"]:
            verdict_style = {"supported": "green", "weak": "yellow"}.get(c["verdict"], "red")
            table.add_row(
                str(board[c["id"]]),
                str(c["page"]),
                escape(" › ".join(c["section"][-2:])),
                f"[{verdict_style}]{c['verdict']}[/]",
                escape(c["quote"][:200]),
                c["id"],
            )
        out.print(table)
    if a["nearest"]:
        out.print("[dim]Nearest passages:[/]")
        for n in a["nearest"]:
            out.print(f"  [cyan]{n['id']}[/] p{n['page']} {escape(n['text'][:160])}")


# -- demo ---------------------------------------------------------------------------------
def _without_local_runtime(ws: Workspace) -> dict[str, Any]:
    """Settings for a demo on an install without llama-cpp-python (a plain `pip install`):
    extractive answers, checked the same way, instead of refusals; says so."""
    import importlib.util

    models = ws.settings.models
    local = [r for r in ("compose", "judge") if getattr(models, r).url.startswith("local:qwen")]
    if not local or importlib.util.find_spec("llama_cpp") is not None:
        return {}
    err.print(
        "[yellow]note:[/] llama-cpp-python is not installed, so the local model cannot write "
        "answers: the demo answers extractively (sentences chosen from the evidence, checked "
        "the same way). For written answers: pip install 'footnote\\[local-llm]' (see README)."
    )
    ask = ws.settings.ask.model_copy(update={"mode": "extractive", "use_judge": False})
    return {"ask": ask}


DEMO_QUESTIONS = (
    "How many nodes does the Semantic Scholar literature graph have?",
    "What loss function is SPECTER trained with?",
    "逐条核查把引用准确率提高到了多少？",
    "How much did it cost to build the literature graph, in US dollars?",
    "Which hospital provided the patient records used in the experiments?",
)


@app.command()
def demo(
    workspace: WorkspaceOpt = None,
    questions: Annotated[
        bool, typer.Option(help="Ask the example questions after ingesting.")
    ] = True,
) -> None:
    """Ingest the bundled example papers, show what was parsed, then ask them a few questions."""
    if not EXAMPLES_DIR.is_dir():
        _fail(FileNotFoundError(f"example papers not found at {EXAMPLES_DIR}"))
    with _workspace(workspace) as ws:
        if questions and (overrides := _without_local_runtime(ws)):
            ws.settings = ws.settings.model_copy(update=overrides)
        with _progress(True) as progress:
            report = ws.ingest([EXAMPLES_DIR], progress=progress)
        _render_report(report)
        for r in report.results:
            if r.source:
                doc = ws.store.get_document(r.source.id)
                if doc:
                    out.print(_render_tree(doc.sections, doc.source.title))
        if report.failed:
            raise typer.Exit(1)
        if questions:
            out.print("\n[bold]Asking the example papers (the last two have no answer in them)[/]")
            for question in DEMO_QUESTIONS:
                out.rule(f"[bold]{escape(question)}[/]")
                asyncio.run(_ask(ws, question, [], None, False, False))
