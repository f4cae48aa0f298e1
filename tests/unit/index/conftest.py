"""Fixtures for index tests: a temporary store with hand-made documents, HashEmbedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from footnote.config import RetrievalSettings
from footnote.index import Indexer, Searcher
from footnote.models.fake import HashEmbedder
from footnote.store import SqliteStore
from footnote.types import Block, Document, Source, Table, make_block_id, sha256_hex

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
    """A store, an indexer and a searcher sharing one settings object."""

    def __init__(self, tmp: Path, settings: RetrievalSettings) -> None:
        self.store = SqliteStore(tmp / "f.db")
        self.embedder = HashEmbedder()
        self.settings = settings
        self.index_dir = tmp / "index"
        self.indexer = Indexer(self.store, self.embedder, settings, self.index_dir)
        self.searcher = Searcher(self.store, self.embedder, settings, self.index_dir)

    def add(self, doc: Document) -> str:
        assert self.store.save_document(doc)
        self.indexer.index_source(doc.source.id)
        return doc.source.id


@pytest.fixture(params=["fts", "memory"])
def lexical_mode(request: pytest.FixtureRequest) -> str:
    """Every index test runs with lexical search in SQLite FTS5 and in the in-memory index."""
    return str(request.param)


@pytest.fixture
def make_env(tmp_path: Path, lexical_mode: str) -> Iterator[Callable[..., Env]]:
    envs: list[Env] = []

    def factory(**overrides: object) -> Env:
        overrides.setdefault("lexical_memory_threshold", 0 if lexical_mode == "memory" else 10**9)
        env = Env(tmp_path / str(len(envs)), RetrievalSettings(**overrides))  # type: ignore[arg-type]
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
