"""The server search backends: PostgreSQL full-text ranked by BM25 (`lexical`) and pgvector
HNSW (`vectors`), every filter inside the SQL."""

from footnote.index.postgres.lexical import PgLexical
from footnote.index.postgres.vectors import PgVectors

__all__ = ["PgLexical", "PgVectors"]
