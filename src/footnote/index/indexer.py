"""Incremental indexing: FTS rows and vectors for a source's blocks, deletion, full rebuilds."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from footnote.config import RetrievalSettings
from footnote.errors import NotFound, UsageError
from footnote.index.base import IndexStats, LexicalBackend, Progress, VectorBackend
from footnote.index.lexical import SqliteLexical
from footnote.index.lexical_text import content_hash, embed_text
from footnote.index.vectors import SqliteVectors
from footnote.models.base import LabelledEmbedder
from footnote.store.base import DocumentStore
from footnote.store.sqlite import SqliteStore

log = logging.getLogger(__name__)


def embedded_backends(
    store: DocumentStore, embedder: LabelledEmbedder, settings: RetrievalSettings, index_dir: Path
) -> tuple[SqliteLexical, SqliteVectors]:
    """The embedded default backends: FTS5 (+ the in-memory bm25 index above its threshold)
    and SQLite vectors (+ the HNSW file above its threshold), derived files in `index_dir`.
    Any other store must come with its own backends (the composition root passes them)."""
    if not isinstance(store, SqliteStore):
        raise UsageError(f"{type(store).__name__} needs its own search backends")
    lexical = SqliteLexical(
        store, memory_threshold=settings.lexical_memory_threshold, index_dir=index_dir
    )
    return lexical, SqliteVectors(store, embedder.name, embedder.dim, settings, index_dir)


class Indexer:
    """Keeps the lexical and vector indexes in step with the store."""

    def __init__(
        self,
        store: DocumentStore,
        embedder: LabelledEmbedder,
        settings: RetrievalSettings,
        index_dir: Path,
        *,
        lexical: LexicalBackend | None = None,
        vectors: VectorBackend | None = None,
    ) -> None:
        self.store, self.embedder, self.settings = store, embedder, settings
        if lexical is None or vectors is None:
            own_lexical, own_vectors = embedded_backends(store, embedder, settings, index_dir)
            lexical, vectors = lexical or own_lexical, vectors or own_vectors
        self.lexical, self.vectors = lexical, vectors

    def index_source(self, source_id: str, progress: Progress | None = None) -> IndexStats:
        """Index a stored source. Blocks whose (model, content hash) has a vector are skipped
        (or get the stored vector copied); the rest are embedded in `embed_batch` batches,
        each committed, so an interrupted run resumes where it stopped."""
        t0 = time.perf_counter()
        record = self.store.get_source(source_id)
        if record is None:
            raise NotFound(f"no source {source_id!r} in the store")
        labels = record.source.labels
        blocks = list(self.store.iter_blocks(source_id))
        keys, added = self.lexical.add(blocks)
        texts = {keys[b.id]: embed_text(b) for b in blocks if b.id in keys}
        hashes = {k: content_hash(t) for k, t in texts.items()}
        todo = self.vectors.missing(hashes)
        skipped = len(hashes) - len(todo)
        reused = self.vectors.reuse(todo) if todo else 0
        todo = self.vectors.missing(todo) if reused else todo
        total, done = len(blocks), len(blocks) - len(todo)
        if progress:
            progress(done, total)
        items = list(todo.items())
        batch = self.settings.embed_batch
        for i in range(0, len(items), batch):
            chunk = items[i : i + batch]
            vecs = self.embedder.embed_passages([texts[k] for k, _ in chunk], labels=labels)
            self.vectors.put([k for k, _ in chunk], [h for _, h in chunk], vecs)
            done += len(chunk)
            if progress:
                progress(done, total)
        self.sync_derived()
        return IndexStats(
            source_id=source_id,
            blocks=len(blocks),
            lexical_added=added,
            embedded=len(items),
            reused=reused,
            skipped=skipped,
            seconds=time.perf_counter() - t0,
        )

    def is_indexed(self, source_id: str) -> bool:
        """Whether every block of the source has its lexical row and a vector of this model."""
        return self.vectors.unindexed(source_id) == 0

    def sync_derived(self) -> None:
        """Bring the derived files (HNSW, bm25 postings) up to date. They are rebuilt from the
        store whenever missing or stale, so failing to write one (disk full) is logged, never
        fatal: the store, the source of truth, is already committed."""
        for name, sync in (("vector", self.vectors.sync), ("lexical", self.lexical.sync)):
            try:
                sync()
            except OSError as exc:
                log.warning("%s index file not written (%s); it is rebuilt next time", name, exc)

    def remove_source(self, source_id: str) -> None:
        """Drop a source's index entries (also safe after `store.delete_source`)."""
        self.lexical.remove_source(source_id)
        self.sync_derived()

    def reindex_all(
        self, progress: Progress | None = None, *, lexical: bool = True
    ) -> list[IndexStats]:
        """Rebuild after a model or tokenizer change: drop other models' vectors, rewrite the
        FTS rows (when `lexical`), then index every source, superseded versions included."""
        self.vectors.purge_other_models()
        if lexical:
            self.lexical.rebuild()
        sources = self.store.list_sources(include_superseded=True)
        out = []
        for n, rec in enumerate(sources):
            out.append(self.index_source(rec.source.id))
            if progress:
                progress(n + 1, len(sources))
        return out
