"""`footnote chat`: a multi-turn conversation in the terminal (keyboard only, works over SSH).

Every turn retrieves afresh (history only rewrites the question); the checked sentences
are printed with footnote markers; `/board` shows the evidence. The conversation is stored
like a web-app conversation, so `footnote serve` lists it and `--session` resumes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from footnote.cli.asking import SentencePrinter, print_found
from footnote.cli.common import WorkspaceOpt, _fail, app, err, out
from footnote.errors import FootnoteError
from footnote.events import CheckedSentence, EvidenceShown, Status, ToolCall
from footnote.serialize import answer_text, answer_to_dict
from footnote.types import flat_sentence
from footnote.workspace.api import Conversation, Library

HELP = """commands:
  /sources              list the sources (✓ marks the ones this conversation searches)
  /sources ID [ID …]    search only these sources      /sources all   search the library
  /agent [on|off]       the tool-using agent instead of one ask per turn
  /board [N]            the evidence board of the last answer (or footnote N in full)
  /export [FILE]        write the conversation as Markdown with footnotes
  /new                  start a new conversation       /help   this text
  /quit                 leave (Ctrl-D too)"""


@dataclass
class ChatState:
    """What the REPL keeps between turns."""

    lib: Library
    conv: Conversation
    sources: list[str] = field(default_factory=list)
    mode: str = "ask"
    last: dict[str, Any] | None = None


def _marks(answer: dict[str, Any]) -> dict[str, int]:
    return {c["id"]: i + 1 for i, c in enumerate(answer["evidence_board"])}


def print_answer(answer: dict[str, Any], *, printed: int = 0) -> None:
    """The checked sentences, each with its footnote markers, then status and support score
    (the first `printed` sentences were printed as they arrived)."""
    board = _marks(answer)
    for s in answer["sentences"][printed:]:
        marks = "".join(f"[{board[c['id']]}]" for c in s["citations"] if c["id"] in board)
        text = flat_sentence(escape(s["text"]), insufficient=s["insufficient"],
                             marks=f"[cyan]{escape(marks)}[/]" if marks else "")  # fmt: skip
        out.print(f"[yellow]{text}[/]" if s["insufficient"] else text)
    if answer["reason"]:
        out.print(f"[yellow]{escape(answer['reason'])}[/]")
    out.print(
        f"[dim]{answer['status']} · support {answer['support_score']:.2f} · "
        f"{len(board)} footnote{'' if len(board) == 1 else 's'} (/board)[/]"
    )


def print_board(answer: dict[str, Any], which: int | None = None) -> None:
    """The evidence board (or one footnote with its whole quote)."""
    board = answer["evidence_board"]
    if which is not None:
        if not 1 <= which <= len(board):
            err.print(f"no footnote {which} (the last answer has {len(board)})")
            return
        c = board[which - 1]
        out.print(f"[{which}] {c['id']}  page {c['page']}  {' › '.join(c['section'])}")
        out.print(f"    verdict {c['verdict']}  relevance {c['relevance']:.2f}")
        out.print(f"    “{escape(c['quote'])}”")
        return
    if not board:
        out.print("[dim]the last answer cites no evidence[/]")
        return
    table = RichTable(show_lines=False, box=None, pad_edge=False)
    for col in ("#", "page", "section", "verdict", "quote", "id"):
        table.add_column(col, overflow="fold")
    for i, c in enumerate(board, 1):
        table.add_row(
            str(i), str(c["page"]), escape(" › ".join(c["section"][-2:])), c["verdict"],
            escape(c["quote"][:160]), c["id"],
        )  # fmt: skip
    out.print(table)


def _footnote_marks(local: dict[str, int], cites: Sequence[dict[str, Any]]) -> str:
    return "".join(f"[^{local[c['id']]}]" for c in cites if c["id"] in local)


def export_markdown(conv: Conversation) -> str:
    """The conversation as Markdown: each answer's sentences with `[^n]` footnotes."""
    lines = [f"# {conv.title or 'footnote conversation'}", ""]
    n = 0
    for msg in conv.messages():
        if msg.role == "user":
            lines += [f"**You:** {msg.content}", ""]
            continue
        if msg.role != "assistant":  # history a client supplied as context is no reply
            continue
        answer = msg.data.get("answer")
        if not isinstance(answer, dict):
            lines += [f"**footnote:** _{msg.status}_", ""]
            continue
        local = {}
        notes = []
        for c in answer["evidence_board"]:
            n += 1
            local[c["id"]] = n
            section = " › ".join(c["section"])
            notes.append(
                f'[^{n}]: `{c["id"]}`, page {c["page"]}, {section} — "{c["quote"]}" ({c["verdict"]})'
            )
        text = answer_text(answer, partial(_footnote_marks, local))
        lines += [f"**footnote:** {text or answer.get('reason') or ''}", ""]
        if answer.get("reason") and text:
            lines += [f"_{answer['reason']}_", ""]
        lines += [*notes, ""] if notes else []
    return "\n".join(lines).rstrip() + "\n"


async def _turn(state: ChatState, text: str) -> None:
    final: dict[str, Any] | None = None
    printer = SentencePrinter()
    events = state.conv.send_events(text, mode=state.mode, sources=state.sources)
    async for event in events:
        if isinstance(event, Status):
            err.print(f"[dim]… {escape(event.message)}[/]")
        elif isinstance(event, ToolCall):
            err.print(f"[dim]… tool {escape(event.tool)}[/]")
        elif isinstance(event, EvidenceShown):
            print_found(event.passages)
        elif isinstance(event, CheckedSentence):
            printer.print(event)  # each checked sentence as soon as it is final
        elif event.type == "final":
            final = answer_to_dict(event.answer)
    if final is None:
        err.print("[red]the turn ended without an answer (see its trace)[/]")
        return
    state.last = final
    print_answer(final, printed=printer.printed)


def _command(state: ChatState, line: str) -> bool:
    """Run a slash command; False when the REPL should end."""
    name, *args = line.split()
    if name in ("/quit", "/exit", "/q"):
        return False
    if name == "/help":
        out.print(HELP)
    elif name == "/sources":
        _sources(state, args)
    elif name == "/agent":
        on = {"on": True, "off": False}.get(args[0].lower()) if args else state.mode != "agent"
        if on is None:
            err.print("usage: /agent [on|off]")
        else:
            state.mode = "agent" if on else "ask"
            out.print(f"mode: {state.mode}")
    elif name == "/board":
        if state.last is None:
            err.print("no answer yet")
        elif args and not args[0].isdigit():
            err.print("usage: /board [N]")
        else:
            print_board(state.last, int(args[0]) if args else None)
    elif name == "/export":
        path = Path(args[0] if args else f"footnote-{state.conv.id}.md")
        path.write_text(export_markdown(state.conv), encoding="utf-8")
        out.print(f"wrote {escape(str(path))}")
    elif name == "/new":
        state.conv = state.lib.chat()
        state.last = None
        out.print(f"new conversation {state.conv.id}")
    else:
        err.print(f"unknown command {name} (/help lists them)")
    return True


def _sources(state: ChatState, args: list[str]) -> None:
    if args == ["all"]:
        state.sources = []
        out.print("searching the whole library")
        return
    if args:
        try:
            state.sources = [state.lib.source(ref).id for ref in args]
        except FootnoteError as exc:
            err.print(f"[red]{escape(str(exc))}[/]")
            return
    chosen = set(state.sources)
    for s in state.lib.sources():
        mark = "✓" if not chosen or s.id in chosen else " "
        out.print(f" {mark} {s.id}  {escape(s.title)}")
    if not chosen:
        out.print("[dim](the whole library)[/]")


def repl(state: ChatState) -> None:
    """Read lines until /quit or end of input; each non-command line is one turn."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401  (line editing and history for input())
    out.print(f"conversation {state.conv.id} · /help for commands · /quit to leave")
    while True:
        try:
            line = input("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            out.print()
            break
        if not line:
            continue
        if line.startswith("/"):
            if not _command(state, line):
                break
            continue
        try:
            asyncio.run(_turn(state, line))
        except KeyboardInterrupt:
            err.print("[yellow]cancelled[/]")
        except FootnoteError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}")
    out.print(f"resume with: footnote chat --session {state.conv.id}")


@app.command()
def chat(
    session: Annotated[
        str | None, typer.Option("--session", help="Resume this conversation.")
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="Search only this source (repeatable)."),
    ] = None,
    agent: Annotated[bool, typer.Option("--agent", help="Start in agent mode.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Chat with the library in the terminal: checked, footnoted answers turn by turn."""
    try:
        lib = Library.open(workspace)
    except FootnoteError as exc:
        _fail(exc)
    try:
        conv = lib.chat(session)
        sources = [lib.source(ref).id for ref in source or []]
        repl(ChatState(lib, conv, sources, "agent" if agent else "ask"))
    except FootnoteError as exc:
        _fail(exc)
    finally:
        lib.close()
