"""Entity alignment at scale (issue #33 item 5): the persisted alias table + HNSW index
against the former per-request index (a dict built from every name, brute-force cosine),
in one process, on synthetic names.

For each size: the build time (once, at import), the time a request spends opening the
index, and p95 lookup latency over exact, keyword (words reordered) and vector (a typo)
mentions; the baseline's per-request rebuild and p95 beside it, with ratios. Embeddings
are the hashed bag-of-words fake (`HashEmbedder`, `--dim`), the same for both sides, so
the comparison is the index, not the model. Target: p95 ≤ 20 ms at 1M names. Beside the
wall-clock p95, `p95_cpu_ms` is this process's CPU time per lookup (on a loaded machine the
wall-clock tail is mostly waiting for a core).

    .venv/bin/python bench/graph_align_scale.py --sizes 10000 100000 [1000000]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from footnote.index.graph.aliases import TABLE_FILE, AliasTable, NameVectors
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import HashEmbedder
from footnote.textnorm import normalise, tokens

SYLLABLES = "ka lo mi ra ten sul vor bel an dri fa gon hel is jo kur lin mar nor pe qui ros tav"


def synthetic_names(n: int, seed: int = 7) -> list[str]:
    """`n` distinct two-word names from random syllables."""
    rng = random.Random(seed)
    syl = SYLLABLES.split()
    out: set[str] = set()
    while len(out) < n:
        first = "".join(rng.choice(syl) for _ in range(rng.randint(2, 3))).capitalize()
        last = "".join(rng.choice(syl) for _ in range(rng.randint(2, 4))).capitalize()
        out.add(f"{first} {last}")
    return sorted(out)


def queries(names: list[str], k: int, seed: int = 11) -> dict[str, list[str]]:
    """Mentions per tier: exact names, reordered words (keyword), a typo (vector)."""
    rng = random.Random(seed)
    picks = rng.sample(names, k)
    typo = [n[:2] + "x" + n[3:] for n in picks]
    return {"exact": picks, "keyword": [" ".join(n.split()[::-1]) for n in picks], "vector": typo}


class Baseline:
    """The former index, rebuilt for every request: dicts over all names, brute-force cosine."""

    def __init__(self, names: list[str], vectors: np.ndarray[Any, Any]) -> None:
        self.names, self.mat = names, vectors
        self.exact: dict[str, list[int]] = {}
        self.toks: dict[str, set[int]] = {}
        for i, name in enumerate(names):
            self.exact.setdefault(normalise(name), []).append(i)
            for t in tokens(name):
                self.toks.setdefault(t, set()).add(i)

    def align(self, mention: str, emb: HashEmbedder) -> int | None:
        hit = self.exact.get(normalise(mention))
        if hit:
            return hit[0]
        toks = tokens(mention)
        found = set.intersection(*(self.toks.get(t, set()) for t in toks)) if toks else set()
        if found:
            return min(found)
        scores = self.mat @ emb.embed_query(mention)
        return int(np.argsort(-scores)[0])


def p95_ms(times: list[float]) -> float:
    return round(float(np.percentile(np.asarray(times) * 1000, 95)), 2)


def run(n: int, dim: int, k: int) -> dict[str, Any]:
    emb = HashEmbedder(dim=dim)
    names = synthetic_names(n)
    qs = queries(names, k)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        table = AliasTable(folder / TABLE_FILE)
        table.build(("Person", nm, nm, ()) for nm in names)
        t_table = time.perf_counter() - t0
        t0 = time.perf_counter()
        NameVectors(table, emb, folder).ready()
        t_vectors = time.perf_counter() - t0
        table.close()
        t0 = time.perf_counter()  # a request: open the table and the mmapped HNSW file
        idx = EntityIndex.open(AliasTable(folder / TABLE_FILE), emb, folder, min_cosine=-1.0)
        idx.align(qs["vector"][0])
        t_open = time.perf_counter() - t0
        new: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}  # this process's CPU time: apart from a loaded machine
        right = 0
        for tier, mentions in qs.items():
            for m, want in zip(mentions, qs["exact"], strict=True):
                t0, c0 = time.perf_counter(), time.process_time()
                a = idx.align(m)
                new.setdefault(tier, []).append(time.perf_counter() - t0)
                cpu.setdefault(tier, []).append(time.process_time() - c0)
                right += bool(a.best and a.best.entity.key == want)
        idx.table.close()
    vecs = emb.embed_passages(names)
    t0 = time.perf_counter()  # what every request used to pay (vectors were cached on disk)
    base = Baseline(names, vecs)
    t_base_build = time.perf_counter() - t0
    old: dict[str, list[float]] = {}
    old_cpu: dict[str, list[float]] = {}
    base_right = 0
    for tier, mentions in qs.items():
        for m, want in zip(mentions, qs["exact"], strict=True):
            t0, c0 = time.perf_counter(), time.process_time()
            i = base.align(m, emb)
            old.setdefault(tier, []).append(time.perf_counter() - t0)
            old_cpu.setdefault(tier, []).append(time.process_time() - c0)
            base_right += names[i] == want if i is not None else 0
    every_new = [t for v in new.values() for t in v]
    every_old = [t for v in old.values() for t in v]
    return {
        "names": n,
        "dim": dim,
        "build_table_s": round(t_table, 2),
        "build_vectors_s": round(t_vectors, 2),
        "request_open_s": round(t_open, 4),
        "baseline_request_rebuild_s": round(t_base_build, 2),
        "p95_ms": {t: p95_ms(v) for t, v in new.items()} | {"all": p95_ms(every_new)},
        "baseline_p95_ms": {t: p95_ms(v) for t, v in old.items()} | {"all": p95_ms(every_old)},
        "p95_cpu_ms": {t: p95_ms(v) for t, v in cpu.items()},
        "baseline_p95_cpu_ms": {t: p95_ms(v) for t, v in old_cpu.items()},
        "p95_ratio_baseline_over_new": round(p95_ms(every_old) / max(p95_ms(every_new), 1e-3), 1),
        "request_ratio_baseline_over_new": round(t_base_build / max(t_open, 1e-6), 1),
        "right": right,
        "baseline_right": base_right,
        "lookups": len(every_new),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384, help="vector size (multilingual-e5-small)")
    ap.add_argument("--queries", type=int, default=100, help="mentions per tier")
    args = ap.parse_args()
    for n in args.sizes:
        print(json.dumps(run(n, args.dim, args.queries)), flush=True)


if __name__ == "__main__":
    main()
