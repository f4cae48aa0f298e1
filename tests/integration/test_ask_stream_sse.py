"""Issue #34 item 3 over real SSE: a chat turn on a live server sends the evidence board before
the answer is written, then each checked sentence as its own `sentence` event as soon as it
passes — before the next sentence is checked — and never a sentence the answer drops. The model
is the scripted compose + judge server on loopback (`scripted_model`: one supported, one weak
and one unsupported sentence); the server, the pipeline and the checks are real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live import LiveServer
from scripted_model import QUESTION, SUPPORTED, UNSUPPORTED, WEAK, ScriptedModel
from test_surfaces_gate import make_workspace, sse_frames

from footnote.server import create_app
from footnote.server.state import ServerDeps

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with ScriptedModel() as model:
        ws = make_workspace(Path(tmp_path_factory.mktemp("stream")), model.url)
        with LiveServer(create_app(ws, ServerDeps(use_models=False))) as srv:
            yield srv.url
        ws.close()


def test_evidence_then_checked_sentences_one_by_one_over_sse(url: str) -> None:
    with httpx.Client(base_url=url, timeout=120) as c:
        sid = c.post("/v1/sessions", json={}).json()["id"]
        turn = c.post(f"/v1/sessions/{sid}/messages", json={"content": QUESTION}).json()
        frames = sse_frames(c, turn["stream_url"])
    kinds = [f["event"] for f in frames]
    [final] = [f["data"]["answer"] for f in frames if f["event"] == "final"]
    sent = [(i, f["data"]) for i, f in enumerate(frames) if f["event"] == "sentence"]

    # the board as found: before the composer writes and before any sentence
    evidence = kinds.index("evidence")
    composing = next(
        i
        for i, f in enumerate(frames)
        if f["event"] == "status" and f["data"]["stage"] == "compose"
    )
    assert evidence < composing < sent[0][0]
    passages = frames[evidence]["data"]["passages"]
    assert any("0.74" in p["text"] for p in passages) and all(p["page"] for p in passages)

    # each sentence is the final answer's, at its index, sent once, weak ones marked
    assert [d["index"] for _, d in sent] == list(range(len(final["sentences"])))
    assert [d["sentence"]["text"] for _, d in sent] == [s["text"] for s in final["sentences"]]
    # in the public contract of `final` (citation `id`, `insufficient`), field for field
    assert [d["sentence"] for _, d in sent] == final["sentences"]
    texts = {d["sentence"]["text"]: d["sentence"] for _, d in sent}
    assert texts[SUPPORTED]["insufficient"] is False
    assert texts[WEAK]["insufficient"] is True
    assert UNSUPPORTED not in str([d for _, d in sent])

    # the supported sentence went out before the weak one was checked: one by one
    first_at = sent[0][0]
    later_checks = [
        i
        for i, f in enumerate(frames)
        if f["event"] == "verification" and f["data"]["sentence"] == 1
    ]
    assert later_checks and first_at < min(later_checks) < kinds.index("final")
