"""Fixtures for index tests: a temporary store with hand-made documents, HashEmbedder."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from footnote.config import RetrievalSettings
from footnote.index import Indexer, Searcher
from footnote.models.fake import HashEmbedder
from footnote.models.roles import RoleEmbedder
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, Document, Source, Table, make_block_id, sha256_hex

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/pgtest.py

Spec = tuple[str, str] | tuple[str, str, dict[str, object]]


def make_doc(
    name: str,
    paras: list[Spec],
    *,
    acl: tuple[str, ...] = (),
    labels: tuple[str, ...] = (),
    uri: str | None = None,
    salt: str = "",
) -> Document:
    """A document from (section, text[, block overrides]) triples; page = 1 + i // 3."""
    sha = sha256_hex(f"{name}{salt}{paras}".encode())
    source = Source(
        id=sha[:12],
        kind="text",
        title=name,
        uri=uri or f"file:///{name}",
        sha256=sha,
        labels=labels,
        acl_groups=acl,
    )
    blocks = []
    for i, spec in enumerate(paras):
        section, text = spec[0], spec[1]
        extra: dict[str, object] = dict(spec[2]) if len(spec) == 3 else {}  # type: ignore[misc]
        page = int(extra.pop("page", 1 + i // 3))  # type: ignore[call-overload]
        blocks.append(
            Block(
                id=make_block_id(sha, page, i, text),
                source_id=source.id,
                kind=extra.pop("kind", "paragraph"),  # type: ignore[arg-type]
                text=text,
                page=page,
                section_path=(section,) if section else (),
                order=i,
                **extra,  # type: ignore[arg-type]
            )
        )
    return Document(source=source, blocks=tuple(blocks))


class Env:
    """A store, an indexer and a searcher sharing one settings object: the embedded SQLite
    store, or (`postgres`) the PostgreSQL store with its full-text and pgvector backends."""

    def __init__(self, tmp: Path, settings: RetrievalSettings, *, postgres: bool = False) -> None:
        self.embedder = HashEmbedder()
        self.settings = settings
        self.index_dir = tmp / "index"
        self.postgres = postgres
        gated = RoleEmbedder(self.embedder, url=self.embedder.name, external=False)
        if postgres:
            from footnote.index.postgres import PgLexical, PgVectors
            from footnote.store.postgres import PgDatabase, PgStore
            from pgtest import fresh_database

            self.store = PgStore(PgDatabase(fresh_database()))
            backends = {
                "lexical": PgLexical(self.store),
                "vectors": PgVectors(self.store, gated.name, gated.dim, settings),
            }
        else:
            self.store = SqliteStore(tmp / "f.db")
            backends = {}
        self.indexer = Indexer(self.store, gated, settings, self.index_dir, **backends)
        self.searcher = Searcher(self.store, gated, settings, self.index_dir, **backends)

    def count(self, table: str) -> int:
        """Rows of a table (SQLite's `blocks_fts` is `index_blocks` in PostgreSQL)."""
        if self.postgres:
            table = {"blocks_fts": "index_blocks"}.get(table, table)
            row = self.store.db.one(f"SELECT count(*) AS n FROM {table}")
            return int(row["n"]) if row else 0
        return int(self.store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def models(self) -> set[str]:
        """Embedding models with stored vectors."""
        if self.postgres:
            return {
                r["model"] for r in self.store.db.all("SELECT DISTINCT model FROM block_vectors")
            }
        return {r[0] for r in self.store.conn.execute("SELECT model FROM block_vectors")}

    def add(self, doc: Document) -> str:
        assert self.store.save_document(doc)
        self.indexer.index_source(doc.source.id)
        return doc.source.id


@pytest.fixture(params=["fts", "memory", "postgres"])
def lexical_mode(request: pytest.FixtureRequest) -> str:
    """Every index test runs with lexical search in SQLite FTS5, in the in-memory index, and
    on PostgreSQL (full-text + pgvector; skipped, with the reason, if it cannot start)."""
    return str(request.param)


@pytest.fixture
def make_env(tmp_path: Path, lexical_mode: str) -> Iterator[Callable[..., Env]]:
    envs: list[Env] = []

    def factory(**overrides: object) -> Env:
        overrides.setdefault("lexical_memory_threshold", 0 if lexical_mode == "memory" else 10**9)
        settings = RetrievalSettings(**overrides)  # type: ignore[arg-type]
        env = Env(tmp_path / str(len(envs)), settings, postgres=lexical_mode == "postgres")
        envs.append(env)
        return env

    yield factory
    for env in envs:
        env.store.close()


TABLE = Table(
    header=(("Model", "Accuracy"),),
    rows=(("BiLSTM", "81.2"), ("Transformer", "88.9")),
    caption="Table 2: Results on the sentiment benchmark",
)
