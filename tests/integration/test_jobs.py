"""The job queue on both backends (huey on SQLite, huey on a real redis-server): `jobs.url`
chooses it, jobs run to a result, errors retry then fail, finished stages are skipped on a
retry, and a worker process killed with SIGKILL mid-ingest is replaced by another that finishes
the job with nothing stored twice. No model runs: the embeddings server is a loopback stub."""

from __future__ import annotations

import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jobs_support import (
    EmbedServer,
    counts,
    document_text,
    paper,
    redis_url,
    spawn_worker,
    wait_for,
    write_config,
)

from footnote.errors import ConfigError
from footnote.jobs import JobContext, JobQueue
from footnote.jobs.ledger import RedisLedger, SqliteLedger
from footnote.workspace import Workspace
from footnote.workspace.jobs import open_queue, register_tasks

pytestmark = pytest.mark.integration


@pytest.fixture()
def embed() -> Iterator[EmbedServer]:
    server = EmbedServer()
    yield server
    server.stop()


def _cleanup(url: str, name: str) -> None:
    import redis

    r = redis.Redis.from_url(url)
    keys = list(r.scan_iter(f"footnote:jobs:{name}:*")) + list(r.scan_iter(f"huey.*.{name}"))
    if keys:
        r.delete(*keys)


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """`jobs.*` settings of a fresh queue: embedded, or on Redis under a name of its own."""
    name = f"t{uuid.uuid4().hex[:12]}"
    if request.param == "sqlite":
        yield {"name": name, "lease_s": 1.0, "retry_delay_s": 0.0}
        return
    url = redis_url()
    yield {"url": url, "name": name, "lease_s": 1.0, "retry_delay_s": 0.0}
    _cleanup(url, name)


def _open(tmp_path: Path, jobs: dict[str, Any], embed: EmbedServer) -> tuple[Workspace, JobQueue]:
    write_config(tmp_path / "ws", jobs, embed.url)
    ws = Workspace.open(tmp_path / "ws")
    queue = open_queue(ws.settings)
    register_tasks(queue, ws)
    return ws, queue


def test_jobs_url_selects_the_queue(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "ws")
    embedded = open_queue(ws.settings)
    assert isinstance(embedded.ledger, SqliteLedger)
    assert embedded.url == f"sqlite:///{tmp_path / 'ws' / 'jobs.db'}"
    job = embedded.submit("ingest", {"paths": []})
    assert (tmp_path / "ws" / "jobs.db").is_file() and embedded.pending() == 1
    embedded.close()

    url, name = redis_url(), f"t{uuid.uuid4().hex[:12]}"
    ws2 = Workspace.open(tmp_path / "ws2", overrides={"jobs": {"url": url, "name": name}})
    distributed = open_queue(ws2.settings)
    try:
        assert isinstance(distributed.ledger, RedisLedger)
        job = distributed.submit("ingest", {"paths": []})
        import redis

        r = redis.Redis.from_url(url)
        assert r.hget(f"footnote:jobs:{name}:job:{job}", "state") == b"queued"
        assert r.llen(f"huey.redis.{name}") == 1 and distributed.pending() == 1
        assert not (tmp_path / "ws2" / "jobs.db").exists()
    finally:
        distributed.close()
        _cleanup(url, name)
    with pytest.raises(ConfigError, match=r"unsupported jobs\.url"):
        open_queue(
            Workspace.open(tmp_path / "ws3", overrides={"jobs": {"url": "amqp://x"}}).settings
        )


def test_an_ingest_job_runs_to_its_result_once(
    tmp_path: Path, backend: dict[str, Any], embed: EmbedServer
) -> None:
    ws, queue = _open(tmp_path, backend, embed)
    doc = paper(tmp_path / "paper.md")
    worker = queue.worker(2)
    worker.start()
    try:
        job = queue.submit("ingest", {"paths": [str(doc)]}, job_id="paper-1")
        rec = queue.wait(job, 180)
        assert rec.state == "done" and rec.attempts == 1, rec.error
        assert rec.result is not None and rec.result["failed"] == 0
        (file,) = rec.result["files"]
        assert file["outcome"] == "added" and file["blocks"] > 20
        # the same id again queues nothing; a new job over the same bytes stores nothing new
        assert queue.submit("ingest", {"paths": [str(doc)]}, job_id="paper-1") == "paper-1"
        again = queue.wait(queue.submit("ingest", {"paths": [str(doc)]}), 180)
        assert again.result is not None and again.result["files"][0]["outcome"] == "unchanged"
        assert queue.status("paper-1").attempts == 1  # type: ignore[union-attr]
    finally:
        worker.stop()
        queue.close()
        ws.close()
    n = counts(tmp_path / "ws")
    assert n["sources"] == 1 and n["blocks"] == file["blocks"]
    assert n["index_blocks"] == n["blocks"] == n["block_vectors"]


def test_an_ingest_whose_indexing_stopped_is_retried_and_resumed(
    tmp_path: Path, embed: EmbedServer
) -> None:
    ws, queue = _open(tmp_path, {"name": "i", "retry_delay_s": 0.0}, embed)
    embed.refuse = 1  # the first index write fails after the paper was stored
    worker = queue.worker(1)
    worker.start()
    try:
        rec = queue.wait(queue.submit("ingest", {"paths": [str(paper(tmp_path / "p.md"))]}), 180)
    finally:
        worker.stop()
        queue.close()
        ws.close()
    assert rec.state == "done" and rec.attempts == 2, rec.error
    assert rec.result is not None and rec.result["files"][0]["outcome"] == "unchanged"
    n = counts(tmp_path / "ws")
    assert n["sources"] == 1 and n["index_blocks"] == n["blocks"] == n["block_vectors"] > 20


def test_errors_retry_then_fail_and_finished_stages_are_skipped(
    tmp_path: Path, backend: dict[str, Any], embed: EmbedServer
) -> None:
    ws, queue = _open(tmp_path, {**backend, "max_attempts": 3}, embed)
    ran: list[str] = []

    def staged(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        first = ctx.stage("first", lambda: ran.append(f"first{ctx.attempt}") or ctx.attempt)
        if ctx.attempt < payload["succeed_on"]:
            raise RuntimeError(f"attempt {ctx.attempt} broke")
        return {"first": first, "attempt": ctx.attempt}

    queue.register("staged", staged)
    worker = queue.worker(1)
    worker.start()
    try:
        ok = queue.wait(queue.submit("staged", {"succeed_on": 2}), 180)
        assert ok.state == "done" and ok.attempts == 2
        assert ok.result == {"first": 1, "attempt": 2}  # the first stage ran once, on attempt 1
        ran.clear()
        bad = queue.wait(queue.submit("staged", {"succeed_on": 9}), 180)
        assert bad.state == "failed" and bad.attempts == 3
        assert bad.error == "RuntimeError: attempt 3 broke" and ran == ["first1"]
    finally:
        worker.stop()
        queue.close()
        ws.close()


def test_a_job_whose_worker_vanished_is_reaped_and_finished(
    tmp_path: Path, backend: dict[str, Any], embed: EmbedServer
) -> None:
    """A worker that claimed a job and stopped renewing (its process gone): the reaper hands
    the job to a live worker once, and after `max_attempts` losses the job fails."""
    ws, queue = _open(tmp_path, {**backend, "max_attempts": 2, "lease_s": 0.5}, embed)
    queue.register("noop", lambda payload, ctx: {"attempt": ctx.attempt})
    try:
        lost = queue.submit("noop", {})
        for n in (1, 2):  # a worker takes the message, claims the job, and dies
            queue.huey.flush()
            assert queue.ledger.claim(lost, f"dead-{n}", 0.2, queue.clock()) == n
            assert queue.reap() == []  # its lease is still live
            time.sleep(0.3)
            assert queue.reap() == ([lost] if n == 1 else [])  # sent again once, then failed
        failed = queue.status(lost)
        assert failed is not None and failed.state == "failed"
        assert "lost 2 time(s)" in (failed.error or "") and queue.pending() == 0

        orphan = queue.submit("noop", {})
        queue.huey.flush()  # a worker took the message and died before claiming the job
        assert queue.reap() == []  # not yet: it has been queued for less than a lease
        time.sleep(0.6)
        assert queue.reap() == [orphan] and queue.pending() == 1  # sent again, once
        assert queue.reap() == [] and queue.status(orphan).state == "queued"  # type: ignore[union-attr]

        job = queue.submit("noop", {})
        queue.huey.flush()
        assert queue.ledger.claim(job, "dead-worker", 0.5, queue.clock()) == 1
        worker = queue.worker(1)
        worker.start()  # its reaper hands the job back after the lease, its threads run it
        try:
            rec = queue.wait(job, 180)
        finally:
            worker.stop()
        assert rec.state == "done" and rec.result == {"attempt": 2} and rec.worker != "dead-worker"
    finally:
        queue.close()
        ws.close()


def _kill_and_resume(tmp_path: Path, jobs: dict[str, Any], store_url: str = "") -> None:
    """SIGKILL a `footnote worker` while it embeds a stored paper; a second worker takes the
    job after the lease and finishes it: one source, each block once, each vector once."""
    server = EmbedServer(hold=document_text)
    ws_dir = tmp_path / "ws"
    write_config(ws_dir, {**jobs, "lease_s": 1.5}, server.url, store_url=store_url)
    doc = paper(tmp_path / "paper.md", paragraphs=30)
    ws = Workspace.open(ws_dir)
    queue = open_queue(ws.settings)
    first = spawn_worker(ws_dir, "--threads", "1")
    second = None
    try:
        job = queue.submit("ingest", {"paths": [str(doc)]})
        wait_for(server.held.is_set, 180, "the first worker to embed the paper")
        rec = queue.status(job)
        assert rec is not None and rec.state == "running" and rec.attempts == 1
        stored = counts(ws_dir, store_url)
        assert stored["sources"] == 1 and stored["blocks"] > 25 and stored["block_vectors"] == 0
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        server.release()
        second = spawn_worker(ws_dir, "--threads", "1", "--idle-exit", "1")
        rec = queue.wait(job, 180)
        assert second.wait(180) == 0
        assert rec.state == "done" and rec.attempts == 2, rec.error
        assert rec.result is not None and rec.result["files"][0]["outcome"] == "unchanged"
        after = counts(ws_dir, store_url)
        assert after["sources"] == 1 and after["blocks"] == stored["blocks"]
        assert after["index_blocks"] == after["blocks"] == after["block_vectors"]
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        server.stop()
        queue.close()
        ws.close()


def test_a_killed_worker_process_is_replaced_and_nothing_is_stored_twice(
    tmp_path: Path, backend: dict[str, Any]
) -> None:
    _kill_and_resume(tmp_path, backend)


def test_scaled_out_redis_queue_and_postgresql_store_survive_a_killed_worker(
    tmp_path: Path,
) -> None:
    """The distributed configuration: the queue on Redis, the store on PostgreSQL (pgvector)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pgtest.py
    from pgtest import fresh_database

    url, name = redis_url(), f"t{uuid.uuid4().hex[:12]}"
    try:
        _kill_and_resume(tmp_path, {"url": url, "name": name}, fresh_database())
    finally:
        _cleanup(url, name)


@pytest.mark.parametrize("workers", [1, 2])
def test_jobs_workers_is_how_many_jobs_run_at_once(
    tmp_path: Path, embed: EmbedServer, workers: int
) -> None:
    """Two jobs that each wait for the other finish only when two run at once."""
    jobs = {"name": "w", "workers": workers, "max_attempts": 1}
    ws, queue = _open(tmp_path, jobs, embed)
    both = threading.Barrier(2, timeout=1.5)
    queue.register("meet", lambda payload, ctx: {"turn": both.wait()})
    worker = queue.worker()
    worker.start()
    try:
        ids = [queue.submit("meet", {}) for _ in range(2)]
        recs = [queue.wait(job, 180) for job in ids]
    finally:
        worker.stop()
        queue.close()
        ws.close()
    states = [r.state for r in recs]
    assert states == (["done", "done"] if workers == 2 else ["failed", "failed"])


def test_jobs_retry_delay_s_spaces_the_tries(tmp_path: Path, embed: EmbedServer) -> None:
    ws, queue = _open(tmp_path, {"name": "d", "retry_delay_s": 1.5, "max_attempts": 2}, embed)
    started: list[float] = []

    def fails_once(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        started.append(time.monotonic())
        if ctx.attempt == 1:
            raise RuntimeError("first try breaks")
        return {}

    queue.register("fails_once", fails_once)
    worker = queue.worker(1)
    worker.start()
    try:
        rec = queue.wait(queue.submit("fails_once", {}), 180)
    finally:
        worker.stop()
        queue.close()
        ws.close()
    assert rec.state == "done" and rec.attempts == 2
    assert 1.4 <= started[1] - started[0] <= 4.0


def test_a_job_this_process_cannot_run_is_left_to_one_that_can(
    tmp_path: Path, backend: dict[str, Any], embed: EmbedServer
) -> None:
    """The API server works the embedded queue but has no `eval` task: it sends such a job
    back, and a worker that has the task runs it."""
    ws, server_side = _open(tmp_path, backend, embed)
    cli_side = open_queue(ws.settings)
    cli_side.register("eval", lambda payload, ctx: {"ran_by": "worker"})
    first = server_side.worker(1)
    first.start()
    second = None
    try:
        job = server_side.submit("eval", {"dataset": "x"})
        wait_for(lambda: server_side.pending() == 0, 180, "the server to take the message")
        time.sleep(0.3)
        assert server_side.status(job).state == "queued"  # type: ignore[union-attr]
        second = cli_side.worker(1)
        second.start()
        rec = cli_side.wait(job, 180)
        assert rec.state == "done" and rec.result == {"ran_by": "worker"} and rec.attempts == 1
    finally:
        first.stop()
        if second is not None:
            second.stop()
        server_side.close()
        cli_side.close()
        ws.close()


def test_cancel_drops_a_queued_job_and_stops_a_running_one(
    tmp_path: Path, backend: dict[str, Any], embed: EmbedServer
) -> None:
    """A queued job is failed at once (`cancelled`) and never runs; a running one sees the
    request (at its next check, or through `on_cancel` from the heartbeat) and ends itself."""
    ws, queue = _open(tmp_path, {**backend, "lease_s": 0.6}, embed)
    started, ran = threading.Event(), []

    def slow(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
        ran.append(payload["n"])
        stopped = threading.Event()
        ctx.on_cancel = stopped.set
        started.set()
        assert stopped.wait(30), "the heartbeat never passed the cancel request on"
        return {"cancelled": ctx.cancel_requested()}

    queue.register("slow", slow)
    waiting = queue.submit("slow", {"n": 1})
    assert queue.cancel(waiting) == "queued"
    rec = queue.status(waiting)
    assert rec is not None and rec.state == "failed" and rec.error == "cancelled"
    assert queue.cancel(waiting) is None  # finished: nothing to cancel
    worker = queue.worker(1)
    worker.start()
    try:
        job = queue.submit("slow", {"n": 2})
        wait_for(started.is_set, 60, "the job to start")
        assert queue.cancel(job) == "running"
        done = queue.wait(job, 60)
        assert done.state == "done" and done.result == {"cancelled": True}
        assert ran == [2]  # the cancelled queued job never ran
    finally:
        worker.stop()
        queue.close()
        ws.close()
