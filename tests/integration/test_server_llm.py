"""A 2-turn conversation over HTTP with the real embedded LLM rewriting and composing."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

from footnote.server import create_app
from footnote.workspace import Workspace

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPER = """# Retrieval study

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61.
"""


def _frames(client: httpx.Client, url: str) -> list[dict[str, object]]:
    frames, cur = [], {}
    with client.stream("GET", url) as resp:
        for line in resp.iter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if cur:
                    frames.append(cur)
                cur = {}
                continue
            field, _, value = line.partition(": ")
            cur[field] = json.loads(value) if field == "data" else value
    return frames


def test_two_turns_with_the_embedded_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOOTNOTE_MODELS__EMBED__URL", "local:wordllama")
    monkeypatch.setenv("FOOTNOTE_ASK__USE_JUDGE", "false")
    doc = tmp_path / "study.md"
    doc.write_text(PAPER, encoding="utf-8")
    ws = Workspace.open(tmp_path / "ws")
    try:
        ws.ingest([doc])
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(ws), port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            sid = client.post("/v1/sessions", json={}).json()["id"]
            answers = []
            for question in ("How are the BM25 and dense vector rankings fused?",
                             "What recall did it reach?"):  # fmt: skip
                turn = client.post(f"/v1/sessions/{sid}/messages", json={"content": question})
                frames = _frames(client, turn.json()["stream_url"])
                assert frames[-1]["event"] == "done"
                final = next(f for f in frames if f["event"] == "final")
                answers.append(final["data"]["answer"])  # type: ignore[index]
            msgs = client.get(f"/v1/sessions/{sid}/messages").json()
            standalone = msgs[3]["data"]["standalone"]
            # the 1.5B model often returns a follow-up unchanged (bench/server_rewrite.py), which
            # the pipeline accepts as safe; that a rewrite was attempted is what is checked here
            assert standalone.strip()
            trace = client.get(f"/v1/sessions/{sid}/traces").json()
            assert "rewrite" in json.dumps(trace)
            assert answers[1]["status"] in ("answered", "weak_evidence", "no_evidence")
            for s in answers[1]["sentences"]:
                assert all(c["verdict"] in ("supported", "weak") for c in s["citations"])
        server.should_exit = True
        thread.join(10)
    finally:
        ws.close()
