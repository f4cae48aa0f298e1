"""Hybrid search: lexical + vector candidates, fusion, optional rerank, MMR, context."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from footnote.config import RetrievalSettings
from footnote.errors import UsageError
from footnote.index.base import LexicalBackend, Reranker, VectorBackend
from footnote.index.filters import SearchFilters
from footnote.index.fusion import Fused, linear, mmr, rrf
from footnote.index.indexer import embedded_backends
from footnote.models.base import LabelledEmbedder
from footnote.store.base import DocumentStore
from footnote.types import Hit

METHODS = ("lexical", "vector")
_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="footnote-lexical")
"""Lexical searches run here while the calling thread embeds the query and searches vectors."""


class Searcher:
    """Answers `search` over the store's indexed blocks."""

    def __init__(
        self,
        store: DocumentStore,
        embedder: LabelledEmbedder,
        settings: RetrievalSettings,
        index_dir: Path,
        *,
        reranker: Reranker | None = None,
        lexical: LexicalBackend | None = None,
        vectors: VectorBackend | None = None,
    ) -> None:
        self.store, self.embedder, self.settings = store, embedder, settings
        self.reranker = reranker
        if lexical is None or vectors is None:
            own_lexical, own_vectors = embedded_backends(store, embedder, settings, index_dir)
            lexical, vectors = lexical or own_lexical, vectors or own_vectors
        self.lexical, self.vectors = lexical, vectors

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        filters: SearchFilters | None = None,
        methods: Sequence[str] = METHODS,
        expand: bool = True,
        mmr_enabled: bool = True,
    ) -> list[Hit]:
        """Top-k hits. Every filter (ACL included) is applied inside each method's query."""
        unknown = set(methods) - set(METHODS)
        if unknown or not methods:
            raise UsageError(f"unknown search methods {sorted(unknown)}; use {METHODS}")
        k = k or self.settings.k
        n = max(self.settings.candidates, k)
        f = filters or SearchFilters()
        lexical = _LEGS.submit(self.lexical.search, query, n, f) if "lexical" in methods else None
        vector = None
        if "vector" in methods and query.strip():
            labels = self.query_labels(f)
            vector = self.vectors.search(self.embedder.embed_query(query, labels=labels), n, f)
        rankings: dict[str, list[tuple[int, float]]] = {}
        if lexical is not None:
            rankings["lexical"] = lexical.result()
        if vector is not None:
            rankings["vector"] = vector
        weights = {"lexical": self.settings.lexical_weight, "vector": self.settings.vector_weight}
        if self.settings.fusion == "linear":
            fused = linear(rankings, weights)
        else:
            fused = rrf(rankings, weights, self.settings.rrf_k)
        pool = n if self._reranking else k
        if mmr_enabled and len(fused) > 1:
            vecs = self.vectors.vectors([x.key for x in fused])
            fused = mmr(fused, vecs, pool, self.settings.mmr_lambda, self.settings.duplicate_cosine)
        hits = self._hits(query, fused, pool)
        if self._reranking and self.reranker is not None:
            hits = self.reranker(query, hits)
        hits = hits[:k]
        return self._expand(hits) if expand else hits

    def query_labels(self, f: SearchFilters) -> tuple[str, ...]:
        """The labels a query carries to the embedder: those the filters require and those of
        the sources it is confined to (a question about a `no-external-model` paper may quote
        it)."""
        labels = dict.fromkeys(f.labels)
        for source_id in f.source_ids:
            record = self.store.get_source(source_id)
            labels.update(dict.fromkeys(record.source.labels if record else ()))
        return tuple(labels)

    @property
    def _reranking(self) -> bool:
        return self.reranker is not None and self.settings.rerank

    def _hits(self, query: str, fused: list[Fused], rerank_pool: int) -> list[Hit]:
        fused = fused[:rerank_pool]
        ids = self.lexical.block_ids([x.key for x in fused])
        blocks = self.store.get_blocks(list(ids.values()))
        marked = self.lexical.highlight(query, [x.key for x in fused])
        out = []
        for x in fused:
            block = blocks.get(ids.get(x.key, ""))
            if block is None:
                continue
            out.append(
                Hit(
                    block,
                    x.score,
                    scores=dict(x.scores),
                    ranks=dict(x.ranks),
                    snippet=marked.get(x.key, block.text),
                )
            )
        return out

    def _expand(self, hits: list[Hit]) -> list[Hit]:
        """Attach each hit's section heading and `neighbours` adjacent blocks (the store's
        `context_ids`: two queries for all hits)."""
        if not hits:
            return hits
        context = self.store.context_ids([h.block for h in hits], self.settings.neighbours)
        blocks = self.store.get_blocks(sorted({i for ids in context.values() for i in ids}))
        out = []
        for h in hits:
            ctx = sorted(
                (blocks[i] for i in context.get(h.block.id, []) if i in blocks),
                key=lambda x: x.order,
            )
            out.append(
                Hit(
                    h.block,
                    h.score,
                    scores=h.scores,
                    ranks=h.ranks,
                    snippet=h.snippet,
                    context=tuple(ctx),
                )
            )
        return out
