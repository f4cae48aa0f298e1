"""The eval job and the job CLI on the embedded queue: `footnote jobs submit` then `footnote
worker` processes; an eval worker killed (SIGKILL) between two cases is replaced and the run
resumes with each case asked and stored once. No model runs (extractive mode, no judge; the
embeddings server is a loopback stub)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jobs_support import (
    RESEARCH_CONFIG,
    SRC,
    EmbedServer,
    counts,
    document_text,
    paper,
    research_library,
    spawn_worker,
    wait_for,
    write_config,
)
from typer.testing import CliRunner

from footnote.cli import app
from footnote.workspace import Workspace
from footnote.workspace.jobs import open_queue

pytestmark = pytest.mark.integration
runner = CliRunner()
PAPER = """# A study of retrieval

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61. The corpus holds 1.2 million passages.
"""
CASES = [
    {"id": "recall", "paper": "paper.md", "question": "What recall@10 did hybrid retrieval reach?",
     "type": "fact_lookup", "answer": "0.74", "accept": [0.74],
     "evidence": [{"page": 1, "quote": "Hybrid retrieval reached a recall@10 of 0.74"}], "notes": ""},
    {"id": "gpu", "paper": "paper.md", "question": "Which GPU trained the entity linking model?",
     "type": "unanswerable", "answer": None, "accept": [], "evidence": [], "notes": ""},
]  # fmt: skip


def _dataset(tmp_path: Path) -> Path:
    (tmp_path / "paper.md").write_text(PAPER, encoding="utf-8")
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CASES) + "\n", encoding="utf-8")
    return path


def _cli(*args: str) -> dict[str, object]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_worker_help_says_what_it_does() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "footnote.cli", "worker", "--help"], capture_output=True,
        text=True, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
        timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    for words in ("jobs.url", "redis://", "--threads", "--idle-exit", "jobs.lease_s", "SIGTERM"):
        assert words in out.stdout, words


def test_submitted_jobs_are_run_by_a_worker_process(tmp_path: Path) -> None:
    server = EmbedServer()
    ws = tmp_path / "ws"
    write_config(ws, {"lease_s": 2.0}, server.url)
    doc = paper(tmp_path / "paper.md")
    try:
        queued = _cli("jobs", "submit", "ingest", json.dumps({"paths": [str(doc)]}), "-w", str(ws))
        assert queued["state"] == "queued" and queued["attempts"] == 0
        bad = runner.invoke(app, ["jobs", "submit", "index", "{}", "-w", str(ws)])
        assert bad.exit_code == 1 and "unknown task" in bad.output
        worker = spawn_worker(ws, "--idle-exit", "0.5")
        assert worker.wait(180) == 0, worker.stdout.read() if worker.stdout else ""
        done = _cli("jobs", "status", str(queued["id"]), "-w", str(ws))
        assert done["state"] == "done" and done["attempts"] == 1
        result = done["result"]
        assert isinstance(result, dict) and result["files"][0]["outcome"] == "added"
    finally:
        server.stop()


def test_an_eval_worker_killed_between_cases_resumes_the_run(tmp_path: Path) -> None:
    """The worker is held embedding the second case's question, after the first case was
    stored, and killed; the next worker asks only the second case."""
    server = EmbedServer(hold=lambda texts: any("GPU" in t for t in texts))
    ws = tmp_path / "ws"
    write_config(ws, {"lease_s": 1.5}, server.url)
    dataset = _dataset(tmp_path)
    w = Workspace.open(ws)
    queue = open_queue(w.settings)
    first = spawn_worker(ws, "--threads", "1")
    second = None
    try:
        job = queue.submit("eval", {"dataset": str(dataset), "mode": "extractive", "parallel": 1})
        wait_for(server.held.is_set, 180, "the worker to reach the second case")
        cases = ws / "eval" / f"job-{job}" / "cases.jsonl"
        assert [json.loads(line)["case"]["id"] for line in cases.read_text().splitlines()] == [
            "recall"
        ]
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        asked = len(server.inputs)
        server.release()
        second = spawn_worker(ws, "--threads", "1", "--idle-exit", "1")
        rec = queue.wait(job, 180)
        assert second.wait(180) == 0
        assert rec.state == "done" and rec.attempts == 2, rec.error
        assert rec.result is not None and rec.result["cases"] == 2
        assert rec.result["run_id"] == f"job-{job}" and "answer_match" in rec.result["metrics"]
        lines = cases.read_text().splitlines()
        assert sorted(json.loads(line)["case"]["id"] for line in lines) == ["gpu", "recall"]
        later = server.inputs[asked:]
        assert not any("recall@10" in t for t in later)  # the first case was not asked again
        assert (ws / "eval" / f"job-{job}" / "report.html").is_file()
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        server.stop()
        queue.close()
        w.close()


def _research_run(ws: Workspace) -> str:
    from footnote.workspace.research import confirm_outline, research_store, start_research

    run_id, _ = start_research(ws, "How fast did the recycling market grow, and how large is it?",
                               template="market_size", web=False)  # fmt: skip
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None
    keep = [i for i in outline["items"] if i["id"] in ("size", "growth")]
    confirm_outline(ws, run_id, {"items": keep})
    return run_id


def _same(kind: str, data: str) -> str:
    """An event as a reader compares it: its type and JSON value (3 and 3.0 alike)."""
    value = json.loads(
        data, parse_float=lambda f: int(float(f)) if float(f).is_integer() else float(f)
    )
    return kind + json.dumps(value, sort_keys=True)


def test_a_research_worker_killed_mid_run_resumes_with_no_event_twice(tmp_path: Path) -> None:
    """Killed while it searches the library for the second sub-question; the next worker skips
    the finished stages and stores no event the first one stored."""
    server = EmbedServer()
    ws_dir = tmp_path / "ws"
    write_config(ws_dir, {"lease_s": 1.5}, server.url, RESEARCH_CONFIG)
    w = Workspace.open(ws_dir)
    w.ingest(research_library(tmp_path))
    run_id = _research_run(w)
    queue = open_queue(w.settings)
    server.hold = lambda texts: any("growth forecast" in t for t in texts)  # sub-question 2
    first = spawn_worker(ws_dir, "--threads", "1")
    second = None
    try:
        job = queue.submit("research", {"run_id": run_id})
        wait_for(server.held.is_set, 180, "the worker to search the library again")
        assert queue.status(job).state == "running"  # type: ignore[union-attr]
        before = w.events.events(run_id)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        server.release()
        second = spawn_worker(ws_dir, "--threads", "1", "--idle-exit", "1")
        rec = queue.wait(job, 180)
        assert second.wait(180) == 0
        assert rec.state == "done" and rec.attempts == 2, rec.error
        assert rec.result == {"research_run": run_id, "status": "completed", "state": "completed"}
        events = w.events.events(run_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert events[: len(before)] == before and len(events) > len(before)
        seen = [_same(e.type, e.data) for e in events]
        assert len(set(seen)) == len(seen), "an event was stored twice"
        resumed = [e.type for e in events[len(before) :]]
        assert resumed[0] == "status" and not {"outline", "plan"} & set(resumed)  # replays dropped
        types = [e.type for e in events]
        assert types.count("subquestion_start") == types.count("subquestion_stop") == 2
        assert [e.type for e in events].count("brief") == 1 and events[-2].type == "brief"
        assert events[-1].type == "done" and types.count("done") == 1
        assert w.research_store.get_artifact(run_id, "brief") is not None
        assert w.runs.get_run(run_id)["status"] == "completed"  # type: ignore[index]
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)
        server.stop()
        queue.close()
        w.close()


def test_sigterm_lets_the_running_job_finish(tmp_path: Path) -> None:
    server = EmbedServer(hold=document_text)
    ws = tmp_path / "ws"
    write_config(ws, {"lease_s": 30.0}, server.url)
    w = Workspace.open(ws)
    queue = open_queue(w.settings)
    worker = spawn_worker(ws, "--threads", "1")
    try:
        job = queue.submit("ingest", {"paths": [str(paper(tmp_path / "paper.md"))]})
        wait_for(server.held.is_set, 180, "the worker to embed the paper")
        later = queue.submit("ingest", {"paths": [str(paper(tmp_path / "other.md", 3))]})
        worker.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        server.release()
        assert worker.wait(180) == 0
        rec = queue.status(job)
        assert rec is not None and rec.state == "done" and rec.attempts == 1
        assert queue.status(later).state == "queued"  # type: ignore[union-attr]  # not taken
    finally:
        if worker.poll() is None:
            worker.kill()
        server.stop()
        queue.close()
        w.close()


def test_a_paused_worker_that_lost_its_job_stops_without_writing_twice(tmp_path: Path) -> None:
    """SIGSTOP a worker mid-ingest past its lease: another worker finishes the job; resumed
    (SIGCONT), the first finds its lease lost at the stage's end and records nothing."""
    server = EmbedServer(hold=document_text)
    ws = tmp_path / "ws"
    write_config(ws, {"lease_s": 1.5}, server.url)
    w = Workspace.open(ws)
    queue = open_queue(w.settings)
    paused = spawn_worker(ws, "--threads", "1")
    second = None
    try:
        job = queue.submit("ingest", {"paths": [str(paper(tmp_path / "paper.md", 30))]})
        wait_for(server.held.is_set, 180, "the worker to embed the paper")
        paused.send_signal(signal.SIGSTOP)
        second = spawn_worker(ws, "--threads", "1", "--idle-exit", "1")
        rec = queue.wait(job, 180)
        assert second.wait(180) == 0
        assert rec.state == "done" and rec.attempts == 2
        stored = counts(ws)
        server.release()
        paused.send_signal(signal.SIGCONT)
        wait_for(lambda: len(server.inputs) > 30, 180, "the paused worker to go on embedding")
        time.sleep(1.0)
        paused.send_signal(signal.SIGTERM)
        log = paused.communicate(timeout=30)[0].decode()
        assert paused.returncode == 0 and "lease lost on attempt 1" in log, log
        after = queue.status(job)
        assert after is not None and after.state == "done" and after.result == rec.result
        assert counts(ws) == stored and stored["block_vectors"] == stored["blocks"]
    finally:
        for proc in (paused, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(10)
        server.stop()
        queue.close()
        w.close()
