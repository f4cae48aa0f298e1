"""The same ask pipeline against a real OpenAI-compatible server, chosen by config alone.

The server is llama-cpp-python's (`python -m llama_cpp.server`) with the embedded 0.5B model on
loopback; only `models.compose.url` / `models.judge.url` change. The licence gate is exercised
end to end: text labelled `no-external-model` never reaches the (external) server.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from llama_server import LlamaServer

from footnote.events import Error, Event, Final, Verification
from footnote.types import Answer
from footnote.workspace import Workspace

pytestmark = [pytest.mark.slow, pytest.mark.integration]

PAPER = """# A corpus of annotated papers

## Data

The corpus contains 1,213 annotated papers collected from the ACL Anthology between 2016 and 2020.

## Method

We fine-tune a transformer encoder with a citation-informed triplet loss.
"""


def _workspace(tmp_path: Path, server: LlamaServer) -> Workspace:
    return Workspace.open(
        tmp_path / "ws",
        overrides={
            "models": {
                "embed": {"url": "local:wordllama"},
                "compose": {"url": server.url, "timeout_s": 120},
                "judge": {"url": server.url, "timeout_s": 120},
            },
            "ask": {"mode": "cite"},
        },
    )


def _ask(ws: Workspace, question: str) -> tuple[Answer, list[Event]]:
    events: list[Event] = []

    async def go() -> None:
        async for e in ws.ask(question):
            events.append(e)

    asyncio.run(go())
    final = next(e for e in events if isinstance(e, Final))
    return final.answer, events


def test_pipeline_runs_against_the_server_by_config_alone(
    tmp_path: Path, server: LlamaServer
) -> None:
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER, encoding="utf-8")
    with _workspace(tmp_path, server) as ws:
        assert not ws.ingest([paper]).failed
        answer, events = _ask(ws, "How many annotated papers does the corpus contain?")
        calls = ws.models.ledger.records(ws.last_run_id)
    assert calls, "the pipeline made no model call"
    assert all("model=qwen-0.5b" in r.model for r in calls), [r.model for r in calls]
    assert any(isinstance(e, Verification) for e in events)
    # whatever the small model wrote, nothing unchecked is in the output
    for sentence in answer.sentences:
        for c in sentence.citations:
            assert c.verdict in ("supported", "weak")
            assert c.quote
    if answer.status == "answered":
        assert "1,213" in answer.text or "1213" in answer.text
    assert answer.usage.model_calls == len([r for r in calls if not r.cache_hit])


def test_licence_gate_stops_labelled_text_reaching_the_server(
    tmp_path: Path, server: LlamaServer
) -> None:
    paper = tmp_path / "secret.md"
    paper.write_text(PAPER, encoding="utf-8")
    with _workspace(tmp_path, server) as ws:
        assert not ws.ingest([paper], labels=["no-external-model"]).failed
        answer, events = _ask(ws, "How many annotated papers does the corpus contain?")
        calls = ws.models.ledger.records(ws.last_run_id)
    assert answer.status == "refused"
    errors = [e for e in events if isinstance(e, Error)]
    assert errors and errors[0].code == "LicenceRefused"
    assert "no-external-model" in (answer.reason or "")
    assert not [r for r in calls if r.ok], "labelled text reached the external model"
