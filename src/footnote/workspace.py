"""The composition root: the only place concrete implementations are chosen.

CLI, server, evaluation and integration tests all go through `Workspace`.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from footnote.config import Settings, load_settings
from footnote.errors import FootnoteError, IngestError, NotFound, UsageError
from footnote.events import Event, Final
from footnote.ingest import discover, parse_file
from footnote.store import SourceRecord, SqliteStore, open_store
from footnote.store.codec import answer_to_dict
from footnote.store.runs import RunStore
from footnote.types import Block, Document, Source

if TYPE_CHECKING:
    from footnote.index import Indexer, Searcher
    from footnote.models import ModelRoles, RoleModel
    from footnote.models.base import Embedder
    from footnote.pipelines.graph_qa import GraphQAPipeline

# Measured in shared/research/models.md: paraphrase vs unrelated cosines per embedder.
_COSINE_BANDS: dict[str, tuple[float, float]] = {
    "local:e5-small": (0.75, 0.92),
    "local:wordllama": (0.10, 0.65),
}

Outcome = Literal["added", "new_version", "unchanged", "failed"]


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
        self.store: SqliteStore = open_store(settings.store_url)
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
        """Release the store."""
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
    def embedder(self) -> Embedder:
        """The embedder bound to the `embed` role."""
        return self.models.embedder()

    @property
    def indexer(self) -> Indexer:
        """Keeps the lexical and vector indexes in step with the store."""
        if self._indexer is None:
            from footnote.index import Indexer

            self._indexer = Indexer(
                self.store, self.embedder, self.settings.retrieval, self.dir / "index"
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
            )
        return self._searcher

    # -- ingestion ------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[Path | str],
        *,
        password: str | None = None,
        labels: Sequence[str] = (),
        acl_groups: Sequence[str] = (),
        index: bool = True,
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        """Parse, store and index files and folders; a bad file never stops the others."""
        missing = [str(p) for p in paths if not Path(p).exists()]
        if missing:
            raise NotFound(f"no such file or folder: {', '.join(missing)}")
        files = discover([Path(p) for p in paths])
        settings = self.settings.ingest
        if labels or acl_groups:
            settings = settings.model_copy(
                update={
                    "default_labels": tuple(dict.fromkeys([*settings.default_labels, *labels])),
                    "default_acl_groups": tuple(
                        dict.fromkeys([*settings.default_acl_groups, *acl_groups])
                    ),
                }
            )
        report = IngestReport()
        for i, path in enumerate(files):
            if progress:
                progress("files", i, len(files))
            report.results.append(self._ingest_one(path, settings, password, index, progress))
        if progress:
            progress("files", len(files), len(files))
        return report

    def _ingest_one(
        self,
        path: Path,
        settings: Any,
        password: str | None,
        index: bool,
        progress: ProgressFn | None,
    ) -> FileResult:
        try:
            sha = _sha256_file(path)
            known = self.store.get_source(sha[:12])
            if known is not None:
                return FileResult(path, "unchanged", known.source, known.blocks)
            doc = parse_file(path, settings, password=password or settings.pdf_password or None)
            previous = self.store.find_source_by_uri(doc.source.uri)
            self.store.save_document(doc)
            if index:
                try:
                    self.indexer.index_source(
                        doc.source.id,
                        progress=(lambda d, t: progress(f"embed {path.name}", d, t))
                        if progress
                        else None,
                    )
                except BaseException:
                    self.store.delete_source(doc.source.id)
                    raise
            stored = self.store.get_source(doc.source.id)
            return FileResult(
                path,
                "new_version" if previous else "added",
                stored.source if stored else doc.source,
                len(doc.blocks),
                _count_kinds(doc),
            )
        except (FootnoteError, OSError) as exc:
            return FileResult(path, "failed", error=_plain_error(exc))

    # -- lookup ---------------------------------------------------------------------------
    def resolve_source(self, ref: str) -> SourceRecord:
        """A source by id, unique id prefix, or the path of a file already ingested."""
        record = self.store.get_source(ref)
        if record:
            return record
        path = Path(ref).expanduser()
        if path.exists():
            record = self.store.find_source_by_uri(str(path.resolve()))
            if record:
                return record
            raise NotFound(f"{ref} has not been ingested yet: run `footnote ingest {ref}` first")
        matches = [
            r
            for r in self.store.list_sources(include_superseded=True)
            if r.source.id.startswith(ref)
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
        from footnote.pipelines.ask import AskDeps, AskPipeline, AskRequest
        from footnote.pipelines.trace import Trace

        source_ids = tuple(self.resolve_source(ref).source.id for ref in sources)
        runs = RunStore(self.store)
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

    def graph(self, name: str) -> GraphQAPipeline:
        """The graph QA pipeline over graph `name`, wired with this workspace's models; every
        question it answers is recorded as a `graph` run with spans in the run store."""
        from footnote.pipelines.graph_io import GraphCatalog, entity_index
        from footnote.pipelines.graph_qa import GraphDeps, GraphQAPipeline

        cfg, roles = self.settings.graph, self.models
        catalog = GraphCatalog(cfg, self.dir)
        store = catalog.open(name)

        def role(r: str, off: bool = False) -> RoleModel | None:
            return roles.chat(r) if roles.is_bound(r) and not off else None

        embedder = roles.embedder() if roles.is_bound("embed") else None
        deps = GraphDeps(
            store=store,
            index=entity_index(store, embedder, cfg, catalog.folder(name) / "cache"),
            settings=cfg,
            understand_model=role("understand", cfg.understand == "rules"),
            cypher_model=role("cypher"),
            fallback_model=role("cypher_fallback"),
            answer_model=role("compose", cfg.answer == "template"),
            runs=RunStore(self.store),  # each question is a traced run, like ask
        )
        return GraphQAPipeline(deps)

    def cosine_band(self) -> tuple[float, float]:
        """Cosines of the bound embedder that map to relevance 0 and 1 (config overrides)."""
        name = self.settings.models.embed.url
        floor, ceiling = _COSINE_BANDS.get(name, (0.75, 0.92))
        v = self.settings.verify
        return (
            v.cosine_floor if v.cosine_floor is not None else floor,
            v.cosine_ceiling if v.cosine_ceiling is not None else ceiling,
        )

    def delete_source(self, ref: str) -> Source:
        """Delete a source, its blocks and its index entries."""
        record = self.resolve_source(ref)
        self.indexer.remove_source(record.source.id)
        self.store.delete_source(record.source.id)
        return record.source


def _count_kinds(doc: Document) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for b in doc.blocks:
        kinds[b.kind] = kinds.get(b.kind, 0) + 1
    return kinds


def _plain_error(exc: BaseException) -> str:
    if isinstance(exc, IngestError | UsageError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"cannot read file: {exc.strerror or exc}"
    return f"{type(exc).__name__}: {exc}"
