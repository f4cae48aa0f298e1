"""`retrieval.rerank` against the default, same run, same hits: is gold evidence in the top 4?

For each development case with gold evidence (the half and the number per type chosen below)
the paper's top 12 hybrid hits are taken once with reranking off (the default order), then the
same 12 are reordered by the reranker `retrieval.rerank` composes (the `rerank` role when
bound, else the `judge` role: P(the passage answers the query), one model call per hit). A
case is a hit when a shown block (top 4) holds a gold quote on its page
(`eval.metrics.evidence_found`). Printed: hit@4 for both orders, the cases each order alone
finds, the model calls and seconds the reranker spent per question.

The papers are ingested into `bench/out/rerank_quality/dev` (once).

    .venv/bin/python bench/rerank_quality.py [--half test] [--per-type 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.loaders import default_data_dir, dev_half, load_dataset
from footnote.eval.metrics import evidence_found
from footnote.eval.runner import ingest_papers
from footnote.index import SearchFilters
from footnote.types import Hit

SHOWN, POOL = 4, 12


def found(case: object, hits: list[Hit]) -> bool:
    blocks = [{"page": h.block.page, "text": h.block.text} for h in hits[:SHOWN]]
    return any(evidence_found(g, b) for g in case.evidence for b in blocks)  # type: ignore[attr-defined]


def main() -> None:
    from footnote.workspace import Workspace

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--half", default="test", choices=("fit", "test"))
    ap.add_argument("--per-type", type=int, default=2)
    a = ap.parse_args()
    path = OUT / "rerank_quality" / "dev"
    ds = load_dataset("footnote-dev", data_dir=default_data_dir(), cache_dir=path / "cache")
    counts: dict[str, int] = {}
    cases = []
    for c in ds.cases:
        if dev_half(c.id) != a.half or c.unanswerable or not c.evidence:
            continue
        if counts.get(c.type, 0) < a.per_type:
            counts[c.type] = counts.get(c.type, 0) + 1
            cases.append(c)
    ws = Workspace.open(path, overrides={"retrieval": {"rerank": True}})
    sources = ingest_papers(ws, ds, cases)
    reranker = ws._reranker()
    if reranker is None:
        raise SystemExit("no rerank or judge role is bound: nothing to measure")
    searcher = ws.searcher
    searcher.reranker = None  # the default order first; the same hits are reranked below
    default_hits = reranked_hits = 0
    only: dict[str, list[str]] = {"default": [], "rerank": []}
    seconds: list[float] = []
    for c in cases:
        sid = sources.get(str(ds.paper_path(c)))
        if sid is None:
            print(f"{c.id}: paper not ingested (counted as a miss for both)")
            continue
        hits = searcher.search(c.question, k=POOL, filters=SearchFilters(source_ids=(sid,)))
        t0 = time.perf_counter()
        ordered = reranker(c.question, list(hits))
        seconds.append(time.perf_counter() - t0)
        d, r = found(c, hits), found(c, ordered)
        default_hits += d
        reranked_hits += r
        if d != r:
            only["default" if d else "rerank"].append(c.id)
        print(f"{c.id} {c.type}: default {d} rerank {r} ({seconds[-1]:.1f} s)", flush=True)
    n = len(cases)
    print(f"\nn={n} ({a.half} half, {a.per_type} per type); hit@{SHOWN}: default "
          f"{default_hits}/{n} = {default_hits / n:.2f}, rerank {reranked_hits}/{n} = "
          f"{reranked_hits / n:.2f} (ratio {reranked_hits / max(default_hits, 1):.2f}×)")  # fmt: skip
    print(f"found only by default: {only['default']}; only by rerank: {only['rerank']}")
    role = "rerank" if ws.models.is_bound("rerank") else "judge"
    print(f"reranker: {POOL} model calls per question, {sum(seconds) / max(len(seconds), 1):.1f} s "
          f"per question (the {role} role: {ws.models.binding(role).url})")  # fmt: skip
    ws.close()


if __name__ == "__main__":
    main()
