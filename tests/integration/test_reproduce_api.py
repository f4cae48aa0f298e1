"""The reproduction surfaces on a real uvicorn (loopback): settings tables in every export,
cross-checks, sandboxed computations, and the agent citing a computation whose inputs cite
their cells (scripted fake only for the agent's chat model)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence

import httpx
import pytest
from test_server_api import ENV, Server, sse

from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration

PAPER = """# Sentiment study

## Setup

We fine-tune BERT on the SST-2 dataset. Adam optimizer is used with a learning rate of 2e-5,
and we trained with a batch size of 32 for 3 epochs.

## Results

Table 1: Accuracy of each model on the results set.

| Model | Dev | Test | Avg. |
|---|---|---|---|
| BERT | 91.0 | 90.0 | 90.5 |
| Ours | 93.0 | 92.0 | 93.5 |
"""


def agent_script(messages: Sequence[Message]) -> str:
    """Search for the table, average the Ours row in the sandbox, answer citing the computation."""
    last = messages[-1].content
    if "Observation from run_python" in last:
        calc = re.search(r"calc-[0-9a-f]{10}", last)
        cell = re.search(r'"cite": "([^"]+#r2c1)"', last)
        assert calc and cell
        table = cell[1].split("#")[0]
        final = (f"The average of Ours computed from Dev and Test is 92.5 [{calc[0]}]. "
                 f"Table 1 states 93.5 for it [{table}#r2c3]. The average is 97.1 [{calc[0]}].")  # fmt: skip
        return json.dumps({"thought": "compare", "final": final})
    if "Observation from search_library" in last:
        hits = json.loads(last.split("\n", 2)[2].rsplit("\n", 1)[0])  # inside the data fence
        table = next((h["id"],) * 2 for h in hits if "Ours | 93.0" in h["text"])
        return json.dumps({"thought": "recompute", "tool": "run_python", "arguments": {
            "code": "avg = (dev + test) / 2",
            "inputs": {"dev": f"{table[1]}#r2c1", "test": f"{table[1]}#r2c2"}}})  # fmt: skip
    return json.dumps({"thought": "find the table", "tool": "search_library",
                       "arguments": {"query": "Table 1 accuracy Avg. Ours BERT", "k": 8}})  # fmt: skip


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[httpx.Client, Workspace, str]]:
    # the agent's final answer is judged: without a judge its paraphrases would be at most weak
    # (issue #30, finding 10); the judge is a scripted fake that says yes
    env = {**ENV, "FOOTNOTE_ASK__USE_JUDGE": "true"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    tmp = tmp_path_factory.mktemp("repro")
    ws = Workspace.open(tmp / "ws")
    doc = tmp / "study.md"
    doc.write_text(PAPER, encoding="utf-8")
    result = ws.ingest([doc]).results[0]
    assert result.outcome == "added" and result.source is not None
    agent = RoleModel("compose", FakeChatModel(agent_script), ledger=Ledger(), external=False)
    judge = RoleModel("judge", FakeChatModel(lambda m: "Yes"), ledger=Ledger(), external=False)
    deps = ServerDeps(agent_model=agent, judge_model=judge, use_models=False)
    with Server(ws, deps) as client:
        yield client, ws, result.source.id
    ws.close()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def test_settings_in_every_export(served: tuple[httpx.Client, Workspace, str]) -> None:
    client, ws, sid = served
    table = client.post(f"/v1/sources/{sid}/settings", params={"extractor": "rules"}).json()
    rows = {r["field"]: r for r in table["settings"]}
    lr = rows["learning_rate"]["values"][0]
    assert lr["value"] == "2e-5" and lr["number"] == 2e-5 and lr["verdict"] == "supported"
    assert ws.store.get_block(lr["cite"]) is not None and "2e-5" in lr["quote"]
    assert rows["seeds"]["status"] == "not_stated" and "seeds" in table["not_stated"]
    assert ws.runs.get_run(table["run_id"])["kind"] == "settings"
    config = client.post(
        f"/v1/sources/{sid}/settings", params={"format": "config", "extractor": "rules"}
    ).json()
    assert config["config"]["batch_size"] == 32 and config["_cite"]["batch_size"]
    md = client.post(
        f"/v1/sources/{sid}/settings", params={"format": "markdown", "extractor": "rules"}
    )
    assert md.headers["content-type"].startswith("text/markdown") and lr["cite"] in md.text
    csv = client.post(f"/v1/sources/{sid}/settings", params={"format": "csv", "extractor": "rules"})
    assert csv.text.splitlines()[0].startswith("field,status,value")
    missing = client.post("/v1/sources/nosuchsource/settings")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_crosschecks_and_compute(served: tuple[httpx.Client, Workspace, str]) -> None:
    client, _, sid = served
    report = client.get(f"/v1/sources/{sid}/crosschecks", params={"mismatches": True}).json()
    [wrong] = report["checks"]
    assert wrong["stated"]["value"] == 93.5 and wrong["recomputed"] == 92.5
    cell = wrong["inputs"][0]["cite"]
    out = client.post("/v1/compute", json={"code": "double = x * 2", "inputs": {"x": cell}}).json()
    assert out["status"] == "ok" and out["values"] == {"double": 186.0}
    assert out["id"].startswith("calc-") and cell in out["evidence"]
    bad = client.post(
        "/v1/compute", json={"code": "y = x", "inputs": {"x": {"cite": cell, "value": 94.0}}}
    )
    assert bad.status_code == 422 and "does not occur" in bad.json()["error"]["message"]


def test_the_agent_cites_a_computation_and_its_inputs(
    served: tuple[httpx.Client, Workspace, str],
) -> None:
    client, _, _ = served
    sid = client.post("/v1/sessions", json={}).json()["id"]
    resp = client.post(f"/v1/sessions/{sid}/messages",
                       json={"content": "Does the Avg. of Ours add up?", "mode": "agent"})  # fmt: skip
    frames = sse(client, resp.json()["stream_url"])
    calls = [f["data"] for f in frames if f["event"] == "tool_call"]
    results = [f["data"] for f in frames if f["event"] == "tool_result"]
    assert [c["tool"] for c in calls] == ["search_library", "run_python"], results
    answer = next(f for f in frames if f["event"] == "final")["data"]["answer"]
    texts = [s["text"] for s in answer["sentences"]]
    verdicts = [f["data"] for f in frames if f["event"] == "verification"]
    assert any("92.5" in t for t in texts) and not any("97.1" in t for t in texts), (
        answer,
        verdicts,
    )
    first = next(s for s in answer["sentences"] if "92.5" in s["text"])
    calc = first["citations"][0]
    assert calc["id"].startswith("calc-") and calc["verdict"] == "supported"
    board = {c["id"]: c for c in answer["evidence_board"]}
    assert "avg = 92.5" in board[calc["id"]]["quote"]
    inputs = [c for c in board.values() if "input" in c["checks"]]
    assert sorted(c["id"][-4:] for c in inputs) == ["r2c1", "r2c2"]
    assert all(calc["id"] in c["checks"]["input"] for c in inputs)
