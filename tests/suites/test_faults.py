"""Suite 4, faults: Redis killed mid-run, the model server killed mid-stream, the footnote
server process killed mid-run and mid-upload, a full disk (a small tmpfs), an ingest
interrupted by Ctrl-C. Afterwards nothing acknowledged is lost, nothing half-written is
visible, and the run or file reports a clear error. Counted: acknowledged items checked after
each fault (tried), faults met with a clear error or recovery (blocked), items lost or left
half-written (lost: must be 0). Every process is real and listens on loopback only."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from suite_support import FAST, LiveServer, free_port, tally

from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # CI runs them (./scripts/test)
ROOT = Path(__file__).resolve().parents[2]
PAPER = ("# Retrieval study\n\n## Results\n\nHybrid retrieval reached a recall of 0.74 on the "
         "benchmark, ahead of BM25 at 0.61.\n")  # fmt: skip
CLI = "from footnote.cli import main; main()"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOOTNOTE_")}
    return {**env, "PYTHONPATH": str(ROOT / "src"), "OMP_WAIT_POLICY": "PASSIVE",
            "FOOTNOTE_MODELS__EMBED__URL": "local:wordllama", "FOOTNOTE_ASK__USE_JUDGE": "false",
            **extra}  # fmt: skip


def _wait_for(check: Any, timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, OSError, sqlite3.Error, ValueError):
            got = check()
            if got:
                return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def _process(
    args: list[str], env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    # Ctrl-C as in a terminal: a suite started in the background by a non-interactive shell
    # inherits SIGINT ignored, and Python then keeps ignoring it in every child
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


@contextlib.contextmanager
def _model_server(delay: float) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    args = [sys.executable, str(ROOT / "tests/suites/model_server.py"), "--port", str(port),
            "--delay", str(delay)]  # fmt: skip
    with _process(args) as proc:
        url = f"http://127.0.0.1:{port}"
        _wait_for(lambda: httpx.get(f"{url}/v1/models", timeout=1).status_code == 200,
                  what="the model server")  # fmt: skip
        yield f"openai+{url}/v1?model=slow", proc


def _turn(c: httpx.Client, sid: str, text: str) -> dict[str, Any]:
    resp = c.post(f"/v1/sessions/{sid}/messages", json={"content": text})
    assert resp.status_code == 202, resp.text
    return resp.json()  # type: ignore[no-any-return]


def _settle(c: httpx.Client, run_id: str) -> dict[str, Any]:
    return _wait_for(lambda: (r := c.get(f"/v1/runs/{run_id}").json())["status"] != "running"
                     and r, what=f"run {run_id}")  # fmt: skip


def _events(c: httpx.Client, run_id: str) -> list[str]:
    with c.stream("GET", f"/v1/runs/{run_id}/events", timeout=30) as resp:
        return [ln[7:] for ln in resp.iter_lines() if ln.startswith("event: ")]


def test_redis_killed_mid_run(tmp_path: Path) -> None:
    t = tally("faults")
    port = free_port()
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no"]  # fmt: skip
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    with _model_server(0.15) as (model, _), _process(args) as redis:
        over = {**FAST, "ask": {"mode": "attach", "use_judge": False},
                "models": {**FAST["models"], "compose": {"url": model, "external": False}},
                "server": {"redis_url": f"redis://127.0.0.1:{port}/0"}}  # fmt: skip
        ws = Workspace.open(tmp_path / "ws", overrides=over)
        (tmp_path / "p.md").write_text(PAPER)
        ws.ingest([tmp_path / "p.md"])
        with (
            LiveServer(ws, ServerDeps(use_models=False)) as srv,
            httpx.Client(base_url=srv.url, timeout=30) as c,
        ):
            _wait_for(lambda: c.get("/v1/health").json()["window_available"], what="redis")
            sid = c.post("/v1/sessions", json={}).json()["id"]
            first = _turn(c, sid, "What recall did hybrid retrieval reach?")
            _wait_for(lambda: c.get(f"/v1/runs/{first['run_id']}").json()["events"] >= 3,
                      what="the run to start streaming")  # fmt: skip
            redis.send_signal(signal.SIGKILL)  # mid-run
            redis.wait(10)
            runs = [first]
            for i in range(2):  # more turns while Redis is down
                _settle(c, runs[-1]["run_id"])
                runs.append(_turn(c, sid, f"And what about BM25, turn {i}?"))
            _settle(c, runs[-1]["run_id"])
            msgs = c.get(f"/v1/sessions/{sid}/messages").json()
            acked = {m for r in runs for m in (r["message"]["id"], r["reply"]["id"])}
            stored = {m["id"]: m for m in msgs}
            lost = [m for m in acked if m not in stored or stored[m]["status"] == "pending"]
            t.add(tried=len(acked), blocked=len(acked) - len(lost), lost=len(lost))
            assert not lost
            assert all(stored[r["reply"]["id"]]["status"] == "completed" for r in runs)
            assert c.get("/v1/health").json()["window_available"] is False
        ws.close()


def test_model_server_killed_mid_stream(tmp_path: Path) -> None:
    t = tally("faults")
    with _model_server(0.3) as (model, proc):
        over = {**FAST, "ask": {"mode": "attach", "use_judge": False},
                "models": {**FAST["models"], "compose": {"url": model, "external": False}}}  # fmt: skip
        ws = Workspace.open(tmp_path / "ws", overrides=over)
        (tmp_path / "p.md").write_text(PAPER)
        ws.ingest([tmp_path / "p.md"])
        with (
            LiveServer(ws, ServerDeps(use_models=False)) as srv,
            httpx.Client(base_url=srv.url, timeout=30) as c,
        ):
            sid = c.post("/v1/sessions", json={}).json()["id"]
            turn = _turn(c, sid, "What recall did hybrid retrieval reach?")
            _wait_for(lambda: '"thinking"' in json.dumps(c.get(
                f"/v1/runs/{turn['run_id']}/trace").json()) or c.get(
                f"/v1/runs/{turn['run_id']}").json()["events"] >= 4, what="streaming")  # fmt: skip
            proc.kill()
            run = _settle(c, turn["run_id"])
            events = _events(c, turn["run_id"])
            reply = next(m for m in c.get(f"/v1/sessions/{sid}/messages").json()
                         if m["id"] == turn["reply"]["id"])  # fmt: skip
        ws.close()
    answer = run["output"] or {}
    clear = "error" in events and answer.get("status") == "refused" and answer.get("reason")
    half = reply["status"] == "pending" or "0.74" in reply["content"]
    t.add(tried=1, blocked=int(bool(clear) and not half), lost=int(half or not clear))
    assert clear, (events, answer)
    assert not half, reply


def test_server_process_killed_mid_run_and_mid_upload(tmp_path: Path) -> None:
    t = tally("faults")
    ws_dir = tmp_path / "ws"
    with _model_server(0.4) as (model, _):
        env = _env(FOOTNOTE_ASK__MODE="attach", FOOTNOTE_MODELS__COMPOSE__URL=model,
                   FOOTNOTE_MODELS__COMPOSE__EXTERNAL="false")  # fmt: skip
        (tmp_path / "p.md").write_text(PAPER)
        subprocess.run([sys.executable, "-c", CLI, "ingest", str(tmp_path / "p.md"), "-w",
                        str(ws_dir)], env=env, check=True, capture_output=True, timeout=300)  # fmt: skip
        port = free_port()
        serve = [sys.executable, "-c", CLI, "serve", "--port", str(port), "-w", str(ws_dir)]
        url = f"http://127.0.0.1:{port}"
        with _process(serve, env) as proc, httpx.Client(base_url=url, timeout=30) as c:
            _wait_for(lambda: c.get("/v1/health").status_code == 200, 120, "footnote serve")
            sid = c.post("/v1/sessions", json={}).json()["id"]
            turn = _turn(c, sid, "What recall did hybrid retrieval reach?")
            big = "\n\n".join(f"## Part {i}\n\nParagraph {i} on glaciers." for i in range(3000))
            up = c.post("/v1/sources", files={"file": ("long.md", big.encode())}).json()
            assert up["status"] == "processing"  # acknowledged
            _wait_for(lambda: c.get(f"/v1/runs/{turn['run_id']}").json()["events"] >= 3,
                      what="the run to start streaming")  # fmt: skip
            mid_upload = c.get(f"/v1/sources/{up['id']}").json()["status"] == "processing"
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        with _process(serve, env), httpx.Client(base_url=url, timeout=30) as c:
            _wait_for(lambda: c.get("/v1/health").status_code == 200, 120, "footnote serve")
            run = c.get(f"/v1/runs/{turn['run_id']}").json()
            events = _events(c, turn["run_id"])
            msgs = {m["id"]: m for m in c.get(f"/v1/sessions/{sid}/messages").json()}
            src = _wait_for(lambda: (s := c.get(f"/v1/sources/{up['id']}").json())["status"]
                            != "processing" and s, 240, "the resumed upload")  # fmt: skip
            again = _turn(c, sid, "And BM25?")
            _settle(c, again["run_id"])
    problems = []
    if run["status"] != "failed" or events[-2:] != ["error", "done"]:
        problems.append(("run", run["status"], events[-3:]))
    if turn["message"]["id"] not in msgs or msgs[turn["reply"]["id"]]["status"] != "failed":
        problems.append(("messages", msgs))
    if src["status"] != "ready" or src["blocks"] != 6000:
        problems.append(("upload", src, mid_upload))
    t.add(tried=3, blocked=3 - len(problems), lost=len(problems))
    assert not problems, problems
    assert mid_upload, "the upload finished before the kill: the test did not interrupt it"


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                        capture_output=True).returncode == 0  # fmt: skip
    return ok


def test_full_disk(tmp_path: Path) -> None:
    t = tally("faults")
    disk = tmp_path / "disk"
    if shutil.which("mount") is None or not _mount_tmpfs(disk, "12m"):
        pytest.skip("cannot mount a small tmpfs here (needs root / CAP_SYS_ADMIN)")
    try:
        papers = tmp_path / "papers"
        papers.mkdir()
        for i in range(12):
            body = "\n\n".join(f"## Part {i}.{j}\n\nFinding {i}.{j}: glacier {j} retreated "
                               f"{j * 3} metres in year {i}." for j in range(120))  # fmt: skip
            (papers / f"p{i:02}.md").write_text(f"# Paper {i}\n\n{body}\n")
        with Workspace.open(disk / "ws", overrides=FAST) as ws:
            ws.ingest([papers / "p00.md"])  # the store exists and works
            filler = disk / "filler"
            with contextlib.suppress(OSError), filler.open("wb") as f:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            filler.write_bytes(filler.read_bytes()[:-1_500_000])  # leave ~1.5 MB
            report = ws.ingest([papers])
            failed = [r for r in report.results if r.outcome == "failed"]
            assert failed, "the disk never filled"
            unclear = [r for r in failed if not r.error or "Traceback" in r.error]
            ok_ids = {r.source.id for r in report.results if r.outcome in ("added", "unchanged")
                      and r.source}  # fmt: skip
            filler.unlink()  # space again
            half = _half_written(ws, ok_ids)
            t.add(tried=len(report.results), blocked=len(report.results) - len(unclear) - len(half),
                  lost=len(unclear) + len(half))  # fmt: skip
            assert not unclear and not half, (unclear, half)
            again = ws.ingest([papers])
            assert not again.failed, [r.error for r in again.failed]
            assert not _half_written(ws, {r.source.id for r in again.results if r.source})
            assert ws.searcher.search("glacier 7 retreated in year 11", k=1)
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def _half_written(ws: Workspace, acknowledged: set[str]) -> list[str]:
    """Sources whose rows are incomplete, or acknowledged ones missing or not fully indexed."""
    bad = []
    assert ws.store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for rec in ws.store.list_sources(include_superseded=True):
        doc = ws.store.get_document(rec.source.id)
        if doc is None or not doc.blocks or len(doc.blocks) != rec.blocks:
            bad.append(rec.source.id)
    for sid in acknowledged:
        if ws.store.get_source(sid) is None or not ws.indexer.is_indexed(sid):
            bad.append(sid)
    return bad


def test_ingest_interrupted_by_ctrl_c(tmp_path: Path) -> None:
    t = tally("faults")
    papers = tmp_path / "papers"
    papers.mkdir()
    files = 30
    for i in range(files):
        body = "\n\n".join(f"## Part {j}\n\nPaper {i} finding {j}: glacier retreat of {j} m."
                           for j in range(60))  # fmt: skip
        (papers / f"p{i:02}.md").write_text(f"# Paper {i}\n\n{body}\n")
    ws_dir = tmp_path / "ws"
    env = _env()
    cmd = [sys.executable, "-c", CLI, "ingest", str(papers), "-w", str(ws_dir)]
    with _process(cmd, env) as proc:
        db = ws_dir / "footnote.db"

        def some_stored() -> bool:
            with contextlib.closing(sqlite3.connect(db, timeout=1)) as conn:
                return int(conn.execute("SELECT count(*) FROM sources").fetchone()[0]) >= 3

        _wait_for(some_stored, 180, "the ingest to store a few files")
        assert proc.poll() is None, "the ingest ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=60)[0].decode(errors="replace")
        code = proc.returncode
    clear = code != 0 and "Traceback" not in out
    with Workspace.open(ws_dir, overrides=FAST) as ws:
        half = [r.source.id for r in ws.store.list_sources() if not r.blocks]
        again = ws.ingest([papers])
        done = {r.path.name for r in again.results if r.outcome in ("added", "unchanged")}
        missing = files - len(done)
        dupes = len(ws.store.list_sources(include_superseded=True)) - files
        not_indexed = [r.source.id for r in ws.store.list_sources()
                       if not ws.indexer.is_indexed(r.source.id)]  # fmt: skip
    lost = len(half) + missing + max(0, dupes) + len(not_indexed) + int(not clear)
    t.add(tried=files + 1, blocked=files + 1 - lost, lost=lost)
    assert clear, (code, out[-2000:])
    assert lost == 0, (half, missing, dupes, not_indexed)
