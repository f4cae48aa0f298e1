"""Incremental indexing, deletion, exact vs HNSW, MMR, context, progress."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_doc

from footnote.index import SearchFilters
from footnote.index.fusion import Fused, linear, mmr, rrf
from footnote.models.roles import RoleEmbedder

TOPICS = [
    "protein folding",
    "speech recognition",
    "graph databases",
    "solar panels",
    "tax policy",
    "bird migration",
    "coffee roasting",
    "glacier melt",
]


def _corpus(n: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(0)
    return [
        (
            TOPICS[i % 8],
            f"{TOPICS[i % 8]} note {i} "
            + " ".join(rng.choice([*TOPICS[i % 8].split(), "data", "model", "study", f"w{i}"], 6)),
        )
        for i in range(n)
    ]


def test_incremental_skip_by_content_hash(make_env):
    env = make_env()
    doc = make_doc("a", _corpus(10))
    env.store.save_document(doc)
    calls = []
    first = env.indexer.index_source(doc.source.id, progress=lambda d, t: calls.append((d, t)))
    assert (first.embedded, first.lexical_added, first.skipped) == (10, 10, 0)
    assert calls[-1] == (10, 10)
    again = env.indexer.index_source(doc.source.id)
    assert (again.embedded, again.lexical_added, again.skipped) == (0, 0, 10)
    # a new version sharing 9 blocks' text: their vectors are copied, one is embedded
    paras = _corpus(10)
    paras[3] = ("x", "brand new paragraph about volcanoes")
    v2 = make_doc("a", paras, uri=doc.source.uri, salt="v2")
    env.store.save_document(v2)
    st = env.indexer.index_source(v2.source.id)
    assert (st.embedded, st.reused) == (1, 9)


def test_deletion_removes_entries(make_env):
    env = make_env()
    keep = env.add(make_doc("keep", [("S", "alpha beta gamma")]))
    gone = env.add(make_doc("gone", [("S", "alpha beta delta"), ("S", "alpha epsilon")]))
    assert env.count("blocks_fts") == 3
    env.store.delete_source(gone)
    env.indexer.remove_source(gone)
    for table in ("blocks_fts", "index_blocks", "block_vectors"):
        assert env.count(table) == 1, table
    assert {h.block.source_id for h in env.searcher.search("alpha delta")} == {keep}
    env.indexer.remove_source(keep)  # without store deletion
    assert env.searcher.search("alpha") == []


def test_exact_and_ann_agree(make_env, tmp_path, lexical_mode):
    if lexical_mode == "postgres":
        pytest.skip("the HNSW file is the embedded backend's (pgvector: test_index_pgvector.py)")
    exact = make_env(ann_threshold=10_000, k=10)
    ann = make_env(ann_threshold=5, k=10, filtered_exact_max=0)
    docs = [make_doc(f"d{i}", _corpus(40)[i::4], acl=("g",) if i == 0 else ()) for i in range(4)]
    for env in (exact, ann):
        for d in docs:
            env.add(d)
    assert ann.indexer.vectors.ann.path.exists()  # the indexer built the HNSW file
    for q in TOPICS:
        for f in (
            SearchFilters(),
            SearchFilters(user_groups=()),
            SearchFilters(kinds=("caption",)),
            SearchFilters(kinds=("paragraph",)),
        ):
            a = exact.searcher.search(q, methods=("vector",), filters=f, mmr_enabled=False)
            b = ann.searcher.search(q, methods=("vector",), filters=f, mmr_enabled=False)
            # same scores (ties among zero-cosine blocks may order differently)
            sa = [h.scores["vector"] for h in a]
            sb = [h.scores["vector"] for h in b]
            assert len(a) == len(b) and np.allclose(sa, sb, atol=1e-4), (q, f)
    assert not exact.searcher.vectors._use_ann and ann.searcher.vectors._use_ann
    # deletion reaches the HNSW file
    ann.store.delete_source(docs[1].source.id)
    ann.indexer.remove_source(docs[1].source.id)
    ids = {h.block.source_id for q in TOPICS for h in ann.searcher.search(q, methods=("vector",))}
    assert docs[1].source.id not in ids


def test_mmr_drops_near_duplicates(make_env):
    env = make_env(k=3)
    text = "transformer attention heads improve translation quality on WMT"
    env.add(
        make_doc(
            "dup",
            [
                ("A", text),
                ("A", text + "!"),
                ("A", text + " ."),
                ("C", "attention heads in translation transformers differ"),
            ],
        )
    )
    hits = env.searcher.search("transformer attention translation")
    texts = [h.block.text.rstrip("!. ") for h in hits]
    assert texts.count(text) == 1 and len(hits) == 2
    plain = env.searcher.search("transformer attention translation", mmr_enabled=False)
    assert len(plain) == 3


def test_mmr_unit():
    v = {
        1: np.array([1, 0], np.float32),
        2: np.array([1, 0], np.float32),
        3: np.array([0, 1], np.float32),
    }
    out = mmr([Fused(1, 1.0), Fused(2, 0.9), Fused(3, 0.5)], v, 3)
    assert [f.key for f in out] == [1, 3]


def test_fusion_rrf_and_linear():
    r = {"lexical": [(1, 9.0), (2, 5.0)], "vector": [(2, 0.9), (3, 0.8)]}
    assert next(f.key for f in rrf(r, {"lexical": 1, "vector": 1})) == 2
    lin = linear(r, {"lexical": 1, "vector": 1})
    assert lin[0].key in (1, 2) and lin[0].scores["fused"] == lin[0].score


def test_hit_fields_and_context(make_env):
    env = make_env(neighbours=1)
    env.add(
        make_doc(
            "c",
            [
                ("Sec", "Heading text", {"kind": "heading"}),
                ("Sec", "before"),
                ("Sec", "the needle paragraph"),
                ("Sec", "after"),
                ("Sec", "far"),
            ],
        )
    )
    hit = env.searcher.search("needle", k=1)[0]
    assert hit.block.text == "the needle paragraph"
    assert [b.text for b in hit.context] == ["Heading text", "before", "after"]
    assert set(hit.scores) >= {"lexical", "vector", "fused"} and hit.score == hit.scores["fused"]
    assert hit.snippet == "the «needle» paragraph"
    assert env.searcher.search("needle", k=1, expand=False)[0].context == ()


def test_reranker_hook(make_env):
    env = make_env(rerank=True)
    env.add(make_doc("r", [("S", "apple banana"), ("S", "apple cherry")]))
    env.searcher.reranker = lambda q, hits: list(reversed(hits))
    a = env.searcher.search("apple", mmr_enabled=False)
    env.searcher.reranker = None
    b = env.searcher.search("apple", mmr_enabled=False)
    assert [h.block.id for h in a] == [h.block.id for h in reversed(b)]


def test_reindex_all_new_model(make_env):
    env = make_env()
    sid = env.add(make_doc("m", _corpus(5)))
    from footnote.index import Indexer
    from footnote.models.fake import HashEmbedder

    other = RoleEmbedder(HashEmbedder(name="fake:other"), url="fake:other", external=False)
    backends = {}
    if env.postgres:
        from footnote.index.postgres import PgLexical, PgVectors

        backends = {
            "lexical": PgLexical(env.store),
            "vectors": PgVectors(env.store, other.name, other.dim, env.settings),
        }
    idx = Indexer(env.store, other, env.settings, env.index_dir, **backends)
    stats = idx.reindex_all()
    assert [s.source_id for s in stats] == [sid] and stats[0].embedded == 5
    assert env.models() == {"fake:other"}
