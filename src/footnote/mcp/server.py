"""The MCP server (official `mcp` SDK): footnote's library as tools and resources.

Tools return structured content (an output schema per tool) with citations — id, page,
section, quote, verdict — and the support score:

- `ask(question, sources?)`: a checked, footnoted answer (or an honest refusal);
- `search(query, k?, sources?)`: hybrid search hits;
- `read_block(block_id)`, `read_section(source, section)`: the evidence itself;
- `graph_ask(graph, question, session?)`: guard-checked text-to-Cypher over a workspace graph,
  in a conversation (`session`: one of the caller's own, from an earlier answer);
- `research(question, template?, web?)`: a research brief of checked claims citing evidence
  cards (exact quotes), with what is not covered and what was withheld from this caller.

Resources: `footnote://sources`, `footnote://sources/{source_id}` (outline),
`footnote://blocks/{block_id}`. Every call runs as the caller (`caller(ctx)`): on HTTP the
API key's user, on stdio the user the server was started as; a source outside the caller's
ACL groups does not exist for it, and a brief's card from one is withheld.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import BaseModel, Field

from footnote import __version__
from footnote.errors import FootnoteError, NotFound
from footnote.serialize import (
    answer_text,
    block_to_dict,
    claims_text,
    section_to_dict,
    source_to_dict,
)
from footnote.types import Block
from footnote.workspace.api import Library, ResearchResult

Caller = Callable[[Context], Library]
"""Resolves the library of the caller of one request."""
Admit = Callable[[str], AbstractContextManager[None]]
"""Entered (with the caller's user id) around every tool call that runs the pipeline or the
search: the server's run quotas; refuses by raising a `FootnoteError`."""

INSTRUCTIONS = (
    "footnote answers questions about the documents in a library; every sentence of an "
    "answer carries citations that a program has checked (the id resolves, the quote occurs, "
    "numbers match, an entailment judge agrees). Prefer `ask` for questions; use `search`, "
    "`read_block` and `read_section` to inspect the evidence. Quote citations by their id."
)


class Cite(BaseModel):
    """One checked citation."""

    id: str = Field(description="Evidence id: a block id, or a table cell `block#rRcC`.")
    source_id: str | None = None
    title: str | None = Field(None, description="The cited source's title.")
    page: int | None = None
    section: list[str] = Field(default_factory=list)
    quote: str = ""
    verdict: str = Field(description="supported, weak or unsupported.")
    relevance: float = 0.0


class AnswerSentence(BaseModel):
    """An answer sentence with the numbers of its citations in `citations`."""

    text: str
    cites: list[int] = Field(default_factory=list, description="1-based indexes into citations.")
    insufficient: bool = False


class AskOutput(BaseModel):
    """A checked answer."""

    run_id: str | None
    status: str = Field(description="answered, no_evidence, weak_evidence or refused.")
    answer: str = Field(
        description="The checked sentences with [n] footnote markers; a weakly "
        "supported one ends with (insufficiently supported)."
    )
    support_score: float
    reason: str | None = None
    sentences: list[AnswerSentence]
    citations: list[Cite]


class HitOut(BaseModel):
    """A search hit."""

    id: str
    source_id: str
    title: str | None
    page: int
    section: list[str]
    kind: str
    score: float
    text: str


class SearchOutput(BaseModel):
    """Search results, best first."""

    hits: list[HitOut]


class BlockOut(BaseModel):
    """One block of evidence."""

    id: str
    source_id: str
    title: str | None
    kind: str
    page: int
    section: list[str]
    text: str
    table: dict[str, Any] | None = None


class SectionOutput(BaseModel):
    """The blocks of one section, in reading order."""

    source_id: str
    title: str
    section: list[str]
    blocks: list[BlockOut]


class GraphOutput(BaseModel):
    """A graph answer citing result rows (`row:<n>`)."""

    status: str
    answer: str
    cypher: str
    rows: list[Any]
    reason: str | None = None
    run_id: str | None = None
    session: str | None = Field(
        None, description="The conversation: pass it with a follow-up question."
    )


class CardOut(BaseModel):
    """An evidence card: the exact quote, where it is, and its source."""

    id: str
    quote: str
    title: str = Field(description="The source's title.")
    locator: str = Field(description="Page (library) or URL#char=a,b (a saved web page).")
    url: str = ""
    page: int | None = None
    published_at: str | None = None
    labels: list[str] = Field(default_factory=list)


class ClaimOut(BaseModel):
    """A checked claim of the brief with the numbers of its cards in `cards`."""

    id: str
    text: str
    verdict: str = Field(description="supported or weak (unsupported claims are dropped).")
    cards: list[int] = Field(default_factory=list, description="1-based indexes into cards.")


class ChapterOut(BaseModel):
    """One outline item's chapter."""

    title: str
    coverage: str = Field(description="covered, uncovered or conflicting.")
    claims: list[ClaimOut]
    notes: list[str] = Field(default_factory=list)


class ResearchOutput(BaseModel):
    """A research brief: chapters of checked claims citing evidence cards."""

    run_id: str
    question: str
    brief: str = Field(
        description="The brief as Markdown, claims marked with their cards [n]; a "
        "weakly supported one ends with (insufficiently supported)."
    )
    support_score: float = Field(description="Share of kept claims judged supported.")
    chapters: list[ChapterOut]
    cards: list[CardOut]
    conflicts: int
    not_covered: list[str]
    wrapped_up: bool
    withheld: list[str] = Field(
        default_factory=list, description="What was left out because the caller may not read it."
    )


def research_output(result: ResearchResult) -> ResearchOutput:
    """A brief (as its caller may read it) as the `research` tool's structured output."""
    brief = result.brief
    number = {c.id: n + 1 for n, c in enumerate(brief.cards)}
    chapters = [
        ChapterOut(title=s.title, coverage=s.coverage, notes=list(s.notes),
                   claims=[ClaimOut(id=c.id, text=c.text, verdict=c.verdict,
                                    cards=[number[i] for i in c.card_ids if i in number]) for c in s.claims])
        for s in brief.sections
    ]  # fmt: skip
    claims = [c for ch in chapters for c in ch.claims]
    lines = [f"# {brief.question}"]

    def cite(card_ids: Sequence[str]) -> str:
        return "".join(f"[{number[i]}]" for i in card_ids if i in number)

    for section in brief.sections:
        lines += ["", f"## {section.title}", ""]
        lines += [claims_text([c], cite) for c in section.claims] or ["(not covered)"]
    return ResearchOutput(
        run_id=result.run_id, question=brief.question, brief="\n".join(lines),
        support_score=round(sum(c.verdict == "supported" for c in claims) / len(claims), 4) if claims else 0.0,
        chapters=chapters,
        cards=[CardOut(id=c.id, quote=c.snippet, title=c.source_title, locator=c.locator, url=c.url,
                       page=c.page, published_at=c.published_at, labels=list(c.labels)) for c in brief.cards],
        conflicts=len(brief.conflicts), not_covered=list(brief.not_covered), wrapped_up=brief.wrapped_up,
        withheld=[f"{w.card_id} ({w.source_title}): {w.reason}" for w in result.withheld],
    )  # fmt: skip


def _title(lib: Library, source_id: str) -> str | None:
    record = lib.workspace.store.get_source(source_id)
    return record.source.title if record else None


def _block_out(lib: Library, b: Block) -> BlockOut:
    d = block_to_dict(b)
    return BlockOut(
        id=b.id,
        source_id=b.source_id,
        title=_title(lib, b.source_id),
        kind=b.kind,
        page=b.page,
        section=list(b.section_path),
        text=b.text,
        table=d.get("table"),
    )


def ask_output(lib: Library, answer: dict[str, Any]) -> AskOutput:
    """The public answer contract as the `ask` tool's structured output."""
    board = answer["evidence_board"]
    number = {c["id"]: i + 1 for i, c in enumerate(board)}
    cites = []
    for c in board:
        block = lib.workspace.store.get_block(str(c["id"]).split("#", 1)[0])
        sid = block.source_id if block else None
        cites.append(
            Cite(
                id=c["id"],
                source_id=sid,
                title=_title(lib, sid) if sid else None,
                page=c["page"],
                section=c["section"],
                quote=c["quote"],
                verdict=c["verdict"],
                relevance=c["relevance"],
            )
        )
    sentences = [
        AnswerSentence(
            text=s["text"],
            cites=[number[c["id"]] for c in s["citations"] if c["id"] in number],
            insufficient=s["insufficient"],
        )
        for s in answer["sentences"]
    ]
    text = answer_text(
        answer, lambda cs: "".join(f"[{number[c['id']]}]" for c in cs if c["id"] in number)
    )
    return AskOutput(
        run_id=answer.get("run_id"),
        status=answer["status"],
        answer=text,
        support_score=answer["support_score"],
        reason=answer["reason"],
        sentences=sentences,
        citations=cites,
    )


@contextmanager
def anticipated(resource: bool = False) -> Iterator[None]:
    """footnote's own errors (an unknown id, a source outside the caller's groups) reach the
    client with their message; anything else stays a crash the SDK logs."""
    try:
        yield
    except NotFound as exc:
        raise (ResourceNotFoundError(str(exc)) if resource else ToolError(str(exc))) from exc
    except FootnoteError as exc:
        raise (ResourceError(str(exc)) if resource else ToolError(str(exc))) from exc


def build_server(caller: Caller, admit: Admit | None = None) -> MCPServer:
    """The MCP server; `caller(ctx)` gives the library of the request's caller, and `admit`
    (none: no quotas, as on stdio) admits its runs: `ask`, `search`, `graph_ask`, `research`."""
    server: MCPServer = MCPServer(
        "footnote", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def run_as(lib: Library) -> AbstractContextManager[None]:
        return admit(lib.user.id) if admit is not None else nullcontext()

    @server.tool()
    async def ask(question: str, ctx: Context, sources: list[str] | None = None) -> AskOutput:
        """Answer a question from the library with checked citations, or say why not.

        `sources` limits the search to these source ids (default: the whole library).
        """
        lib = caller(ctx)
        with anticipated(), run_as(lib):
            result = await lib.aask(question, sources=sources or ())
        return ask_output(lib, result.to_dict())

    @server.tool()
    def search(
        query: str, ctx: Context, k: int = 8, sources: list[str] | None = None
    ) -> SearchOutput:
        """Hybrid keyword + vector search over the library; `k` hits, best first."""
        lib = caller(ctx)
        with anticipated(), run_as(lib):
            hits = lib.search(query, k=max(1, min(k, 50)), sources=sources or ())
        return SearchOutput(
            hits=[
                HitOut(
                    id=h.block.id,
                    source_id=h.block.source_id,
                    title=_title(lib, h.block.source_id),
                    page=h.block.page,
                    section=list(h.block.section_path),
                    kind=h.block.kind,
                    score=h.score,
                    text=h.block.text,
                )
                for h in hits
            ]
        )

    @server.tool()
    def read_block(block_id: str, ctx: Context) -> BlockOut:
        """One block by id (a table cell id gives its table), with page and section."""
        lib = caller(ctx)
        with anticipated():
            return _block_out(lib, lib.block(block_id))

    @server.tool()
    def read_section(source: str, section: str, ctx: Context) -> SectionOutput:
        """Every block of the first section of `source` whose title contains `section`."""
        lib = caller(ctx)
        with anticipated():
            blocks = lib.section(source, section)
            src = lib.source(source)
        path = list(blocks[0].section_path) if blocks else []
        return SectionOutput(
            source_id=src.id,
            title=src.title,
            section=path,
            blocks=[_block_out(lib, b) for b in blocks],
        )

    @server.tool()
    async def graph_ask(
        graph: str, question: str, ctx: Context, session: str | None = None
    ) -> GraphOutput:
        """Answer from a workspace graph with read-only, guard-checked Cypher.

        `session` (from an earlier answer) continues that conversation: a follow-up such as
        "and which of them were born after 1960?" is read with its earlier questions.
        """
        lib = caller(ctx)
        with anticipated(), run_as(lib):
            out = await lib.agraph_ask(graph, question, session)
        return GraphOutput(
            status=out["status"],
            answer=out["answer"] or "",
            cypher=out["cypher"],
            rows=out["rows"],
            reason=out.get("reason"),
            run_id=out.get("run_id"),
            session=out.get("session"),
        )

    @server.tool()
    async def research(
        question: str, ctx: Context, template: str | None = None, web: bool = True
    ) -> ResearchOutput:
        """Write a research brief: an outline (confirmed as proposed), sub-questions searched
        in the library and, with `web`, the allowed web; every claim cites an evidence card
        (an exact quote) and passed the checks; what is not covered is said. Cards the caller
        may not read are withheld. Takes minutes on a real corpus.

        `template`: market_size, players, policy or literature_review (default: from the question).
        """
        lib = caller(ctx)
        with anticipated(), run_as(lib):
            result = await lib.aresearch(question, template=template, web=web)
        return research_output(result)

    @server.resource("footnote://sources{?kind}", mime_type="application/json")
    def list_sources(ctx: Context, kind: str = "") -> str:
        """The sources the caller may read (`?kind=pdf` keeps one kind)."""
        found = [s for s in caller(ctx).sources() if not kind or s.kind == kind]
        return json.dumps([source_to_dict(s) for s in found], ensure_ascii=False)

    @server.resource("footnote://sources/{source_id}", mime_type="application/json")
    def source_outline(source_id: str, ctx: Context) -> str:
        """A source with its section tree."""
        with anticipated(resource=True):
            doc = caller(ctx).document(source_id)
        data = {
            "source": source_to_dict(doc.source),
            "sections": [section_to_dict(s) for s in doc.sections],
        }
        return json.dumps(data, ensure_ascii=False)

    @server.resource("footnote://blocks/{block_id}", mime_type="application/json")
    def block_resource(block_id: str, ctx: Context) -> str:
        """One block in the `show --json` shape."""
        with anticipated(resource=True):
            block = caller(ctx).block(block_id)
        return json.dumps(block_to_dict(block), ensure_ascii=False)

    return server


__all__ = ["AskOutput", "Caller", "build_server"]
