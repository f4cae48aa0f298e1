"""The public Python API: `footnote.open(workspace)` gives a `Library`.

```python
import footnote

with footnote.open("my-workspace") as lib:
    lib.ingest(["paper.pdf"])
    result = lib.ask("What loss is the model trained with?")
    print(result.text, result.support_score)
    for citation in result.answer.evidence_board:
        print(citation.evidence_id, citation.page, citation.verdict)
```

Every method works for the caller the library was opened as (`user_id`, `groups`): sources
outside its ACL groups are invisible to search, reading and answering, exactly as for the
HTTP API. Sync methods (`ask`, `stream`, `Conversation.send`) run their own event loop; from
async code use `aask` / `ask_events` / `Conversation.asend`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from footnote.access import readable_by, shown_source
from footnote.errors import NotFound, UsageError
from footnote.events import BriefEvent, Event, Final
from footnote.index import SearchFilters
from footnote.pipelines.memory import ConversationMemory
from footnote.pipelines.research.roles import Withheld
from footnote.serialize import answer_to_dict, brief_to_dict
from footnote.store.records import ChatMessage, ChatSession, ResearchRecord, User
from footnote.types import Answer, Block, Brief, Document, Hit, Outline, Source
from footnote.workspace.conversation import run_turn, turn_parts
from footnote.workspace.core import IngestReport, ProgressFn, Workspace

T = TypeVar("T")


@dataclass(frozen=True)
class AskResult:
    """A finished answer with the id of the run that traced it."""

    run_id: str | None
    answer: Answer

    @property
    def text(self) -> str:
        """The answer's checked sentences as one string."""
        return self.answer.text

    @property
    def status(self) -> str:
        """`answered`, `no_evidence`, `weak_evidence` or `refused`."""
        return self.answer.status

    @property
    def support_score(self) -> float:
        """Share of factual sentences with a supported citation × least cited relevance."""
        return self.answer.support_score

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON contract (what `footnote ask --json` prints)."""
        return answer_to_dict(self.answer, run_id=self.run_id)


@dataclass(frozen=True)
class ResearchResult:
    """A finished research brief as its caller may read it."""

    run_id: str
    brief: Brief
    withheld: tuple[Withheld, ...] = ()
    """Cards and claims left out because the caller may not read them, with the reason."""

    @property
    def markdown(self) -> str:
        """The brief as Markdown (chapters, claims with card markers, conflicts, cards)."""
        from footnote.pipelines.research.markdown import brief_markdown

        return brief_markdown(self.brief)

    def to_dict(self) -> dict[str, Any]:
        """The documented brief JSON (what `footnote research --json` prints), plus what was
        withheld."""
        data = brief_to_dict(self.brief)
        data["withheld"] = [{"id": w.card_id, "title": w.source_title, "reason": w.reason}
                            for w in self.withheld]  # fmt: skip
        return data


async def _final(run_id: str | None, events: AsyncIterator[Event]) -> AskResult:
    answer: Answer | None = None
    async for event in events:
        if isinstance(event, Final):
            answer = event.answer
    if answer is None:
        raise RuntimeError("the run ended without an answer (see its trace)")
    return AskResult(run_id, answer)


def _sync_iter(events: AsyncIterator[T]) -> Iterator[T]:
    """Drive an async iterator from sync code on a private event loop."""
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(events.__anext__())
            except StopAsyncIteration:
                return
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            loop.run_until_complete(close())
        loop.close()


class Library:
    """A workspace seen by one caller: ingest, search, read, ask, chat and graph questions."""

    def __init__(self, workspace: Workspace, user: User | None = None, *, owns: bool = True):
        self.workspace = workspace
        self.user = user or User(workspace.settings.server.local_user, None)
        self._owns = owns
        self._memory: ConversationMemory | None = None

    @classmethod
    def open(
        cls,
        path: Path | str | None = None,
        *,
        user_id: str | None = None,
        groups: Sequence[str] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> Library:
        """Open (creating if needed) the workspace folder `path` (default `./.footnote`).

        `groups=None` is the unrestricted local caller; a tuple restricts every call to
        sources that are public or share a group.
        """
        ws = Workspace.open(path, overrides=overrides)
        user_id = user_id or ws.settings.server.local_user
        return cls(ws, User(user_id, None if groups is None else tuple(groups)))

    def as_user(self, user: User) -> Library:
        """The same workspace seen by another caller (the workspace stays open)."""
        lib = Library(self.workspace, user, owns=False)
        lib._memory = self._memory
        return lib

    def close(self) -> None:
        """Close the workspace (when this library opened it)."""
        if self._owns:
            self.workspace.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- documents ------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path | str],
        *,
        labels: Sequence[str] = (),
        acl_groups: Sequence[str] = (),
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        """Parse, store and index files or folders; a bad file never stops the others."""
        return self.workspace.ingest(paths, labels=labels, acl_groups=acl_groups, progress=progress)

    def sources(self) -> list[Source]:
        """The current version of every source this caller may read."""
        groups = self.user.groups
        records = self.workspace.store.list_sources()
        return [shown_source(r.source, groups) for r in records if readable_by(r.source, groups)]

    def source(self, ref: str) -> Source:
        """A readable source by id, id prefix or (unrestricted callers only) ingested path
        (NotFound otherwise); a restricted caller sees the file name, not the server path."""
        source = self.workspace.resolve_source(ref, user_groups=self.user.groups).source
        if not readable_by(source, self.user.groups):
            raise NotFound(f"no source {ref!r}")
        return shown_source(source, self.user.groups)

    def document(self, ref: str) -> Document:
        """A readable source with its blocks and section tree."""
        source = self.source(ref)
        doc = self.workspace.store.get_document(source.id)
        if doc is None:
            raise NotFound(f"no source {ref!r}")
        return replace(doc, source=source)

    def block(self, block_id: str) -> Block:
        """One block (a cell id `…#r1c2` gives its table) if this caller may read its source."""
        block = self.workspace.resolve_block(block_id)
        record = self.workspace.store.get_source(block.source_id)
        if record is None or not readable_by(record.source, self.user.groups):
            raise NotFound(f"no block {block_id!r}")
        return block

    def section(self, ref: str, title: str) -> list[Block]:
        """The blocks of the first section of source `ref` whose title contains `title`
        (case-insensitive), its subsections included."""
        doc = self.document(ref)
        wanted = title.strip().lower()
        for block in doc.blocks:
            path = [p.lower() for p in block.section_path]
            for depth, part in enumerate(path):
                if wanted and wanted in part:
                    prefix = block.section_path[: depth + 1]
                    return [b for b in doc.blocks if b.section_path[: depth + 1] == prefix]
        raise NotFound(f"no section matching {title!r} in {doc.source.title!r}")

    def search(self, query: str, *, k: int | None = None, sources: Sequence[str] = ()) -> list[Hit]:
        """Hybrid keyword + vector search, ACL-filtered for this caller."""
        ids = tuple(self.source(ref).id for ref in sources)
        filters = SearchFilters(source_ids=ids, user_groups=self.user.groups)
        return self.workspace.searcher.search(query, k=k, filters=filters)

    # -- asking ---------------------------------------------------------------------------
    def ask_events(
        self, question: str, *, sources: Sequence[str] = (), mode: str | None = None
    ) -> AsyncIterator[Event]:
        """The ask pipeline's typed events (`status`, `retrieval`, …, `final`, `done`)."""
        ids = [self.source(ref).id for ref in sources]
        return self.workspace.ask(
            question, sources=ids, mode=mode, user_groups=self.user.groups, user_id=self.user.id
        )

    async def aask(
        self, question: str, *, sources: Sequence[str] = (), mode: str | None = None
    ) -> AskResult:
        """Answer a question (async): checked sentences, citations, support score."""
        events = self.ask_events(question, sources=sources, mode=mode)
        return await _final(self.workspace.last_run_id, events)

    def ask(
        self, question: str, *, sources: Sequence[str] = (), mode: str | None = None
    ) -> AskResult:
        """Answer a question; `sources` limits the search to these sources (ids or paths)."""
        return asyncio.run(self.aask(question, sources=sources, mode=mode))

    def stream(
        self, question: str, *, sources: Sequence[str] = (), mode: str | None = None
    ) -> Iterator[Event]:
        """The ask events as a plain iterator (for sync code)."""
        return _sync_iter(self.ask_events(question, sources=sources, mode=mode))

    # -- conversations --------------------------------------------------------------------
    def chat(self, session_id: str | None = None, *, title: str = "") -> Conversation:
        """A stored conversation (a new one unless `session_id` names one of this caller's)."""
        chats = self.workspace.chats
        if session_id is None:
            session = chats.create_session(self.user.id, title)
        else:
            found = chats.get_session(self.user.id, session_id)
            if found is None:
                raise NotFound(f"no conversation {session_id!r}")
            session = found
        if self._memory is None:
            ws = self.workspace
            self._memory = ConversationMemory(ws.chats, ws.message_window(), ws.settings.chat)
        return Conversation(self, session)

    def conversations(self, limit: int = 50) -> list[ChatSession]:
        """This caller's conversations, most recent first."""
        return self.workspace.chats.list_sessions(self.user.id, limit)

    # -- research -------------------------------------------------------------------------
    def research_outline(
        self, question: str, *, template: str | None = None, web: bool = True,
        budget_tokens: int | None = None, budget_minutes: float | None = None,
    ) -> tuple[str, Outline]:  # fmt: skip
        """Propose the outline of a research brief (nothing is searched yet): the run id and
        the outline for the analyst to confirm or edit with `research_events`/`research`."""
        from footnote.workspace.research import start_research

        return start_research(
            self.workspace, question, template=template, web=web, budget_tokens=budget_tokens,
            budget_minutes=budget_minutes, user_id=self.user.id, user_groups=self.user.groups,
        )  # fmt: skip

    def research_events(
        self, question: str | None = None, *, run_id: str | None = None,
        outline: dict[str, Any] | None = None, template: str | None = None, web: bool = True,
        budget_tokens: int | None = None, budget_minutes: float | None = None,
    ) -> AsyncIterator[Event]:  # fmt: skip
        """A research run's events (`outline`, `plan`, `card`, …, `injection`, `brief`). Either
        a new `question` (its outline confirmed as proposed, or with the `outline` edits), or
        the `run_id` of a proposed outline (confirmed now) or of a run to resume."""
        from footnote.workspace.research import confirm_outline, run_research

        if run_id is None:
            if not question:
                raise UsageError("research needs a question or the run_id of a proposed outline")
            run_id, _ = self.research_outline(question, template=template, web=web,
                                              budget_tokens=budget_tokens, budget_minutes=budget_minutes)  # fmt: skip
        record = self._own_research(run_id)
        if record.state in ("outline_proposed", "outline_confirmed") or outline is not None:
            confirm_outline(self.workspace, run_id, outline)
        return run_research(self.workspace, run_id, user_id=self.user.id)

    async def aresearch(self, question: str | None = None, **kw: Any) -> ResearchResult:
        """A research brief (async); arguments as `research_events`."""
        brief = None
        async for event in self.research_events(question, **kw):
            if isinstance(event, BriefEvent):
                brief = event.brief
        if brief is None:
            raise RuntimeError("the research run ended without a brief (see its events)")
        return self.brief(brief.run_id)

    def research(self, question: str | None = None, **kw: Any) -> ResearchResult:
        """A research brief whose every claim cites an evidence card, as this caller may read
        it (cards of sources outside its groups withheld, and said so). Arguments as
        `research_events`: `outline` edits, `template`, `web`, `budget_tokens`,
        `budget_minutes`, or the `run_id` of a proposed outline."""
        return asyncio.run(self.aresearch(question, **kw))

    def brief(self, run_id: str) -> ResearchResult:
        """The finished brief of one of this caller's runs, with only what it may read (the
        exporter's view: `workspace.research.readable_brief`)."""
        from footnote.workspace.research import readable_brief

        self._own_research(run_id)
        brief, withheld = readable_brief(self.workspace, run_id, self.user.groups)
        return ResearchResult(run_id, brief, tuple(withheld))

    def _own_research(self, run_id: str) -> ResearchRecord:
        from footnote.workspace.research import research_store

        record = research_store(self.workspace).get_research(run_id)
        if record is None or (self.user.groups is not None and record.user_id != self.user.id):
            raise NotFound(f"no research run {run_id!r}")
        return record

    # -- graphs ---------------------------------------------------------------------------
    def graphs(self) -> list[str]:
        """The names of the workspace's graphs this caller may use."""
        from footnote.workspace.graph import visible_graphs

        return [s.name for s in visible_graphs(self.workspace, self.user.groups)]

    async def agraph_ask(
        self, graph: str, question: str, session: str | None = None
    ) -> dict[str, Any]:
        """Answer from graph `graph` with guard-checked Cypher; the graph answer contract plus
        `session`. `session` continues one of this caller's graph conversations (a follow-up
        is read with its earlier turns); one it does not own is `NotFound`, like a missing one."""
        from footnote.workspace.graph import ask_in_session

        return await ask_in_session(self.workspace, self.user, graph, question, session)

    def graph_ask(self, graph: str, question: str, session: str | None = None) -> dict[str, Any]:
        """`agraph_ask` for sync code."""
        return asyncio.run(self.agraph_ask(graph, question, session))


class Conversation:
    """A multi-turn conversation: each turn retrieves afresh; history only rewrites the
    question. Stored like a web-app conversation (the web app lists it)."""

    def __init__(self, library: Library, session: ChatSession) -> None:
        self.library = library
        self.id = session.id
        self.title = session.title

    def send_events(
        self, text: str, *, mode: str = "ask", sources: Sequence[str] = ()
    ) -> AsyncIterator[Event]:
        """One turn's events; `mode` is `ask` or `agent` (the tool-using loop)."""
        lib = self.library
        ids = tuple(lib.source(ref).id for ref in sources)
        assert lib._memory is not None
        parts = turn_parts(lib.workspace, lib._memory)
        return run_turn(
            lib.workspace, parts, user=lib.user, session_id=self.id, content=text, mode=mode,
            sources=ids,
        )  # fmt: skip

    async def asend(
        self, text: str, *, mode: str = "ask", sources: Sequence[str] = ()
    ) -> AskResult:
        """One turn (async); the reply is stored in the conversation."""
        answer: Answer | None = None
        async for event in self.send_events(text, mode=mode, sources=sources):
            if isinstance(event, Final):
                answer = event.answer
        if answer is None:
            raise RuntimeError("the turn ended without an answer (see its trace)")
        last = self.messages()[-1]
        return AskResult(last.run_id, answer)

    def send(self, text: str, *, mode: str = "ask", sources: Sequence[str] = ()) -> AskResult:
        """One turn; `sources` scopes this turn's search (ids or paths)."""
        return asyncio.run(self.asend(text, mode=mode, sources=sources))

    def messages(self) -> list[ChatMessage]:
        """The stored messages in order."""
        return self.library.workspace.chats.messages(self.library.user.id, self.id)
