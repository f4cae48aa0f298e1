"""The composition root: the only place concrete implementations are chosen.

CLI, server, evaluation and integration tests all go through `Workspace`.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from footnote.access import owned_acl, readable_by, scoped_source_id
from footnote.config import IngestSettings, Settings, load_settings
from footnote.errors import (
    IngestError,
    ModelError,
    NotFound,
    StoreError,
    UsageError,
)
from footnote.events import Event, Final
from footnote.ingest import discover, identities, is_current
from footnote.ingest.pool import ParseResult, parse_many
from footnote.labels import normalise_labels
from footnote.serialize import answer_to_dict
from footnote.store import SourceRecord
from footnote.store.base import (
    AuthStore,
    ChatStore,
    DocumentStore,
    EventStore,
    FeedbackStore,
    ResearchStore,
    ReviewStore,
    RunStore,
)
from footnote.store.graph.catalog import GraphCatalog
from footnote.types import Block, Document, Source, with_source_id
from footnote.workspace.stores import open_stores, search_backends

if TYPE_CHECKING:
    from footnote.index import Indexer, Searcher
    from footnote.models import ModelRoles, RoleEmbedder, RoleModel
    from footnote.pipelines.graph.qa import GraphQAPipeline
    from footnote.pipelines.memory import MessageWindow

# Measured in shared/research/models.md: paraphrase vs unrelated cosines per embedder.
_COSINE_BANDS: dict[str, tuple[float, float]] = {
    "local:e5-small": (0.75, 0.92),
    "local:wordllama": (0.10, 0.65),
}

Outcome = Literal["added", "new_version", "unchanged", "failed"]
UPLOAD_TICKET = "upload.json"
"""Beside each kept upload: who sent it and how to ingest it, so an interrupted ingest resumes."""


@dataclass(frozen=True)
class FileResult:
    """What happened to one file during ingestion."""

    path: Path
    outcome: Outcome
    source: Source | None = None
    blocks: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    error: str | None = None


@dataclass
class IngestReport:
    """The outcome of one `ingest` call, file by file."""

    results: list[FileResult] = field(default_factory=list)

    @property
    def failed(self) -> list[FileResult]:
        """The files that could not be ingested."""
        return [r for r in self.results if r.outcome == "failed"]


ProgressFn = Callable[[str, int, int], None]
"""`progress(stage, done, total)`: stage is "files", "embed: <name>" …"""


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Workspace:
    """A workspace folder: settings, the store, indexes and models, built lazily."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dir = settings.workspace
        self.dir.mkdir(parents=True, exist_ok=True)
        stores = open_stores(settings.store_url, pool_size=settings.store.pool_size)
        self.store: DocumentStore = stores.documents
        self.auth: AuthStore = stores.auth
        self.chats: ChatStore = stores.chats
        self.events: EventStore = stores.events
        self.research_store: ResearchStore = stores.research
        self.review_store: ReviewStore = stores.review
        from footnote.workspace.telemetry import ObservedRunStore, Telemetry

        self.telemetry = Telemetry.build(settings.telemetry)
        self.runs: RunStore = ObservedRunStore(stores.runs, self.telemetry)
        self.feedback: FeedbackStore = stores.feedback
        self._roles: ModelRoles | None = None
        self._indexer: Indexer | None = None
        self._searcher: Searcher | None = None
        self.last_run_id: str | None = None

    @classmethod
    def open(
        cls, path: Path | str | None = None, *, overrides: dict[str, Any] | None = None
    ) -> Workspace:
        """Open (creating if needed) the workspace at `path` (default `./.footnote`)."""
        return cls(load_settings(path, overrides))

    def close(self) -> None:
        """Export pending telemetry and release the store."""
        self.telemetry.shutdown()
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- models and indexes (lazy: commands that don't need them never load them) ---------
    @property
    def models(self) -> ModelRoles:
        """The bound model roles."""
        if self._roles is None:
            from footnote.models import build_roles

            self._roles = build_roles(self.settings.models)
        return self._roles

    @property
    def embedder(self) -> RoleEmbedder:
        """The embedder bound to the `embed` role, behind the licence gate."""
        return self.models.embedder()

    def role_model(self, role: str) -> RoleModel | None:
        """The chat model bound to `role`, or None when the role is unbound."""
        roles = self.models
        return roles.chat(role) if roles.is_bound(role) else None

    def chat_role_model(self, which: str) -> RoleModel | None:
        """The model of a chat job: `rewrite` (bound per `chat.rewrite_role`), `summarise`, or
        `agent` (per `agent.role`), `judge` (of the agent's final answer); None when its role is
        unbound."""
        role = {
            "rewrite": self.settings.chat.rewrite_role,
            "summarise": "summarise",
            "agent": self.settings.agent.role,
            "judge": "judge",
        }[which]
        return self.role_model(role)

    def message_window(self) -> MessageWindow:
        """The chat message window: Redis when `server.redis_url` is set, else in-process."""
        from footnote.pipelines.memory import LocalWindow, RedisWindow

        chat, redis_url = self.settings.chat, self.settings.server.redis_url
        if redis_url:
            return RedisWindow(redis_url, chat.window_messages, chat.window_ttl_s)
        return LocalWindow(chat.window_messages, chat.window_ttl_s, chat.window_sessions)

    @property
    def indexer(self) -> Indexer:
        """Keeps the lexical and vector indexes in step with the store."""
        if self._indexer is None:
            from footnote.index import Indexer

            lexical, vectors = search_backends(self.settings, self.store, self.embedder)
            self._indexer = Indexer(
                self.store,
                self.embedder,
                self.settings.retrieval,
                self.dir / "index",
                lexical=lexical,
                vectors=vectors,
            )
        return self._indexer

    @property
    def searcher(self) -> Searcher:
        """Hybrid search over the indexed blocks."""
        if self._searcher is None:
            from footnote.index import Searcher

            # share the indexer's backends: one vector matrix / HNSW handle per process
            indexer = self.indexer
            self._searcher = Searcher(
                self.store,
                self.embedder,
                self.settings.retrieval,
                self.dir / "index",
                lexical=indexer.lexical,
                vectors=indexer.vectors,
                reranker=self._reranker(),
            )
        return self._searcher

    def _reranker(self) -> Any:
        """`retrieval.rerank`: the `rerank` role when bound, else the `judge` role (None: off)."""
        if not self.settings.retrieval.rerank:
            return None
        from footnote.models.rerank import model_reranker

        role = next((r for r in ("rerank", "judge") if self.models.is_bound(r)), None)
        if role is None:
            return None

        def labels_of(hit: Any) -> tuple[str, ...]:
            record = self.store.get_source(hit.block.source_id)
            return record.source.labels if record else ()

        return model_reranker(self.models.chat(role), labels_of)

    # -- ingestion ------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path | str],
        *,
        password: str | None = None,
        labels: Sequence[str] = (),
        acl_groups: Sequence[str] = (),
        owner: str = "",
        public: bool = False,
        index: bool = True,
        progress: ProgressFn | None = None,
        uri: str | None = None,
    ) -> IngestReport:
        """Parse, store and index files and folders; a bad file never stops the others.

        `owner` (a user id; "" for the operator) owns the records made: the same bytes get a
        record per owner and visibility (`access.scoped_source_id`), and an owned source is
        private to its owner plus `acl_groups` unless `public`. A file whose indexing was
        interrupted keeps its stored blocks and committed vectors; ingesting it again resumes.
        Labelled files the bound embedder may not see are refused before anything is stored;
        labels are normalised, and an unknown licence-like one refused (`normalise_labels`).
        `uri` (one file only) is the name the file's versions share instead of its path (an
        upload kept per version under `<workspace>/uploads`: its owner's file name).
        """
        missing = [str(p) for p in paths if not Path(p).exists()]
        if missing:
            raise NotFound(f"no such file or folder: {', '.join(missing)}")
        files = discover([Path(p) for p in paths])
        if uri is not None and len(files) != 1:
            raise UsageError("a uri names the versions of one file: ingest one file with it")
        settings = self.settings.ingest
        groups = tuple(dict.fromkeys([*settings.default_acl_groups, *acl_groups]))
        settings = settings.model_copy(
            update={
                "default_labels": normalise_labels([*settings.default_labels, *labels]),
                "default_acl_groups": owned_acl(owner, groups, public=public),
            }
        )
        report = IngestReport()
        results: dict[Path, FileResult] = {}
        todo: list[Path] = []
        refused = self._refused(settings) if index else None
        for path in files:  # unchanged files are told apart by hash alone, without parsing
            try:
                known = self._known(path, settings, owner, index, progress)
            except Exception as exc:
                results[path] = FileResult(path, "failed", error=_plain_error(exc))
                continue
            if known is not None:
                results[path] = known
            elif refused is not None:
                results[path] = FileResult(path, "failed", error=refused)
            else:
                todo.append(path)
        done = len(results)
        if progress:
            progress("files", done, len(files))
        pw = password or settings.pdf_password or None
        for parsed in parse_many(todo, settings, password=pw):
            results[parsed.path] = self._store_one(parsed, settings, owner, index, progress, uri)
            done += 1
            if progress:
                progress("files", done, len(files))
        report.results = [results[p] for p in files]
        return report

    def _refused(self, settings: IngestSettings) -> str | None:
        """Why these labels may not be embedded by the bound embedder, or None."""
        try:
            self.models.embed_gate(tuple(settings.default_labels))
        except ModelError as exc:
            return str(exc)
        return None

    def _known(
        self,
        path: Path,
        settings: IngestSettings,
        owner: str,
        index: bool,
        progress: ProgressFn | None,
    ) -> FileResult | None:
        """The stored, current version of this file's bytes for this owner and visibility, if
        there is one (its indexing resumed when an earlier run was interrupted)."""
        sha = _sha256_file(path)
        labels, acl = tuple(settings.default_labels), tuple(settings.default_acl_groups)
        for identity in identities(sha, settings, path):
            known = self.store.get_source(scoped_source_id(identity, owner, acl, labels))
            if known is not None and is_current(known.source, settings):
                if index and not self.indexer.is_indexed(known.source.id):
                    self._index(known.source, path, progress)
                stored = self.store.get_document(known.source.id)
                kinds = _count_kinds(stored) if stored else {}
                return FileResult(path, "unchanged", known.source, known.blocks, kinds)
        return None

    def _store_one(
        self,
        parsed: ParseResult,
        settings: IngestSettings,
        owner: str,
        index: bool,
        progress: ProgressFn | None,
        uri: str | None = None,
    ) -> FileResult:
        path, doc = parsed.path, parsed.document
        if doc is None:
            error = parsed.error or IngestError(f"{path}: not parsed")
            return FileResult(path, "failed", error=_plain_error(error))
        if uri is not None:  # versions are linked by (uri, owner)
            doc = replace(doc, source=replace(doc.source, uri=uri))
        labels, acl = tuple(settings.default_labels), tuple(settings.default_acl_groups)
        try:
            source_id = scoped_source_id(doc.source.sha256, owner, acl, labels)
            doc = with_source_id(doc, source_id, owner=owner, acl_groups=acl)
            previous = self.store.find_source_by_uri(doc.source.uri, owner=owner)
            self.store.save_document(doc)
        except Exception as exc:  # one bad file (any library's error) never stops the others
            return FileResult(path, "failed", error=_plain_error(exc))
        if index:
            try:
                self._index(doc.source, path, progress)
            except Exception as exc:
                return FileResult(
                    path, "failed", doc.source, len(doc.blocks), error=(
                        f"stored, but indexing stopped: {_plain_error(exc)}; "
                        "ingest the file again to resume"
                    ),
                )  # fmt: skip
        stored = self.store.get_source(doc.source.id)
        return FileResult(
            path,
            "new_version" if previous else "added",
            stored.source if stored else doc.source,
            len(doc.blocks),
            _count_kinds(doc),
        )

    def _index(self, source: Source, path: Path, progress: ProgressFn | None) -> None:
        """Index a stored source: committed batches stay (an interruption resumes later), and a
        derived index file that cannot be written is rebuilt from the store next time."""
        self.indexer.index_source(
            source.id,
            progress=(lambda d, t: progress(f"embed {path.name}", d, t)) if progress else None,
        )

    # -- lookup ---------------------------------------------------------------------------
    def resolve_source(
        self, ref: str, *, user_groups: tuple[str, ...] | None = None, paths: bool | None = None
    ) -> SourceRecord:
        """A source by id, unique id prefix, or (with `paths`) the path or name of a file
        already ingested, among the sources `user_groups` may read: another user's sources are neither
        matched nor counted. Paths resolve only for unrestricted callers (the local user, an
        admin): a restricted caller can never learn whether a server path exists."""
        record = self.store.get_source(ref)
        if record and readable_by(record.source, user_groups):
            return record
        paths = user_groups is None if paths is None else paths and user_groups is None
        path = _as_path(ref) if paths else None
        if path is not None:
            record = self.store.find_source_by_uri(str(path.resolve()))
            if record and readable_by(record.source, user_groups):
                return record
            raise NotFound(f"{ref} has not been ingested yet: run `footnote ingest {ref}` first")
        listed = self.store.list_sources() if paths else []
        named = [r for r in listed if Path(r.source.uri).name == ref]
        if len(named) == 1:  # an ingested file's name (`footnote show paper.pdf`)
            return named[0]
        if named:
            ids = ", ".join(r.source.id for r in named)
            raise UsageError(f"{len(named)} ingested files are named {ref!r} ({ids}); give an id")
        matches = [
            r
            for r in self.store.list_sources(include_superseded=True)
            if r.source.id.startswith(ref) and readable_by(r.source, user_groups)
        ]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise UsageError(f"{ref!r} matches {len(matches)} sources; give more of the id")
        raise NotFound(f"no source {ref!r} (see `footnote ls`)")

    def resolve_block(self, block_id: str) -> Block:
        """A block by id (a cell id `…#r1c2` resolves to its table block)."""
        base = block_id.split("#", 1)[0]
        block = self.store.get_block(base)
        if block is None:
            raise NotFound(f"no block {block_id!r}")
        return block

    def document(self, ref: str) -> Document:
        """A stored document by source reference."""
        record = self.resolve_source(ref)
        doc = self.store.get_document(record.source.id)
        if doc is None:
            raise NotFound(f"no source {ref!r}")
        return doc

    # -- asking -------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        *,
        sources: Sequence[str] = (),
        mode: str | None = None,
        user_groups: tuple[str, ...] | None = None,
        user_id: str = "local",
        session_id: str | None = None,
        run_id: str | None = None,
    ) -> AsyncIterator[Event]:
        """Run the ask pipeline; events stream out and the run is traced in the store."""
        from footnote.index import SearchFilters
        from footnote.models import judge_support
        from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
        from footnote.pipelines.trace import Trace

        source_ids = tuple(
            self.resolve_source(ref, user_groups=user_groups).source.id for ref in sources
        )
        runs = self.runs
        trace = Trace(run_id, sink=runs.add_span)
        roles = self.models

        def search(query: str, k: int, filters: SearchFilters) -> list[Any]:
            return self.searcher.search(query, k=k, filters=filters)

        deps = AskDeps(
            store=self.store,
            search=search,
            settings=self.settings,
            compose_model=roles.chat("compose") if roles.is_bound("compose") else None,
            judge_model=roles.chat("judge") if roles.is_bound("judge") else None,
            judge_fn=judge_support,
            ledger=roles.ledger,
            trace=trace,
            cosine_band=self.cosine_band(),
        )
        request = AskRequest(question, source_ids, user_groups, mode)
        self.last_run_id = trace.run_id
        runs.start(
            trace.run_id,
            "ask",
            {"question": question, "sources": list(source_ids), "mode": mode},
            user_id=user_id,
            session_id=session_id,
        )

        async def events() -> AsyncIterator[Event]:
            final: dict[str, Any] | None = None
            try:
                async for event in AskPipeline(deps).run(request):
                    if isinstance(event, Final):
                        final = answer_to_dict(event.answer, run_id=trace.run_id)
                    yield event
            finally:
                runs.finish(trace.run_id, final["status"] if final else "cancelled", final)

        return events()

    def cosine_band(self) -> tuple[float, float]:
        """Cosines of the bound embedder that map to relevance 0 and 1 (config overrides)."""
        name = self.settings.models.embed.url
        floor, ceiling = _COSINE_BANDS.get(name, (0.75, 0.92))
        v = self.settings.verify
        return (
            v.cosine_floor if v.cosine_floor is not None else floor,
            v.cosine_ceiling if v.cosine_ceiling is not None else ceiling,
        )

    # -- graphs -------------------------------------------------------------------------
    def graph_catalog(self) -> GraphCatalog:
        """The workspace's graphs, opened with the configured engine."""
        from footnote.workspace.graph import graph_catalog

        return graph_catalog(self.settings.graph, self.dir)

    def graph(self, name: str, *, user_groups: tuple[str, ...] | None) -> GraphQAPipeline:
        """The graph QA pipeline over graph `name` for a caller with `user_groups` (each
        question a traced `graph` run); a graph the caller may not use is `NotFound`."""
        from footnote.workspace.graph import graph_pipeline

        return graph_pipeline(self, name, user_groups=user_groups)

    def upload_dir(self, source_id: str) -> Path:
        """Where an upload over HTTP keeps its file and its ticket (`<workspace>/uploads/<id>`)."""
        return self.dir / "uploads" / source_id

    def delete_source(self, ref: str) -> Source:
        """Delete a source, its blocks, its index entries and its kept upload (the ticket
        first: a restart never resumes a deleted upload)."""
        record = self.resolve_source(ref)
        kept = self.upload_dir(record.source.id)
        if kept.is_dir():
            (kept / UPLOAD_TICKET).unlink(missing_ok=True)
            shutil.rmtree(kept)
        self.indexer.remove_source(record.source.id)
        self.store.delete_source(record.source.id)
        return record.source


def _as_path(ref: str) -> Path | None:
    """`ref` as an existing file's path, or None (also for names like `~nobody/x`)."""
    try:
        path = Path(ref).expanduser()
        return path if path.exists() else None
    except (RuntimeError, OSError, ValueError):
        return None


def _count_kinds(doc: Document) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for b in doc.blocks:
        kinds[b.kind] = kinds.get(b.kind, 0) + 1
    return kinds


def _plain_error(exc: BaseException) -> str:
    if isinstance(exc, IngestError | UsageError | ModelError | StoreError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"cannot read or write a file: {exc.strerror or exc}"
    if isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith("psycopg"):
        return f"the store could not be written: {exc}"
    return f"unexpected error ({type(exc).__name__}: {exc})"


def open_store(url: str) -> DocumentStore:
    """The document store named by a URL (`sqlite:///PATH` or `postgresql://…`)."""
    return open_stores(url).documents
