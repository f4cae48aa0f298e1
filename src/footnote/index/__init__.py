"""Retrieval: SQLite FTS5 (stemmed English, jieba-segmented Chinese) + vectors (exact numpy,
usearch HNSW above a threshold), fused with weighted RRF, MMR-deduplicated, with context.

    indexer = Indexer(store, embedder, settings.retrieval, index_dir)
    indexer.index_source(source_id)
    hits = Searcher(store, embedder, settings.retrieval, index_dir).search("question")
"""

from footnote.index.base import IndexStats, LexicalBackend, Reranker, VectorBackend
from footnote.index.filters import SearchFilters, SearchFn
from footnote.index.indexer import Indexer
from footnote.index.search import Searcher

__all__ = [
    "IndexStats",
    "Indexer",
    "LexicalBackend",
    "Reranker",
    "SearchFilters",
    "SearchFn",
    "Searcher",
    "VectorBackend",
]
