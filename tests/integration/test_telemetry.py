"""Telemetry with in-process collectors: an OTLP/HTTP receiver on loopback gets the spans of
real runs (run → stages, checks, model and tool calls; chat turn → its ask), and `/metrics`
is scraped and parsed with prometheus_client's own parser."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import LiveServer, study_workspace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.store.records import Span
from footnote.workspace import Workspace
from footnote.workspace.telemetry import Metrics

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer, Response

pytestmark = pytest.mark.integration


class Collector:
    """A minimal OTLP/HTTP trace receiver (protobuf), keeping every span it is sent."""

    def __init__(self) -> None:
        ok = Response(200, b"", {"Content-Type": "application/x-protobuf"})
        self.server = LoopbackServer(lambda _path, _body: ok, models=False)
        self.url = f"http://127.0.0.1:{self.server.port}/v1/traces"
        self.cleared = 0
        """How many requests came before the last `clear()`."""

    @property
    def spans(self) -> list[dict[str, Any]]:
        """The spans of every request since the last `clear()`, in order."""
        out: list[dict[str, Any]] = []
        for r in self.server.requests[self.cleared :]:
            request = ExportTraceServiceRequest.FromString(r.raw)
            for resource in request.resource_spans:
                service = {a.key: a.value.string_value for a in resource.resource.attributes}
                for scope in resource.scope_spans:
                    for s in scope.spans:
                        out.append({
                            "name": s.name, "id": s.span_id.hex(),
                            "parent": s.parent_span_id.hex(), "trace": s.trace_id.hex(),
                            "service": service.get("service.name"),
                            "attrs": {a.key: _value(a.value) for a in s.attributes},
                            "start": s.start_time_unix_nano, "end": s.end_time_unix_nano,
                        })  # fmt: skip
        return out

    def clear(self) -> None:
        self.cleared = len(self.server.requests)

    def close(self) -> None:
        self.server.stop()


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def agent_script(messages: Sequence[Message]) -> str:
    """A scripted agent model: search, then answer citing the block the search returned."""
    last = messages[-1].content
    if "Observation from search_library" in last:
        block = re.search(r"[0-9a-f]{8}-p\d+-[0-9a-f]{6,}", last)
        assert block is not None
        return json.dumps({"thought": "found it", "final":
                           f"Hybrid retrieval reached a recall@10 of 0.74 [{block[0]}]."})  # fmt: skip
    return json.dumps({"thought": "search", "tool": "search_library",
                       "arguments": {"query": "hybrid retrieval recall@10"}})  # fmt: skip


@pytest.fixture()
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def wait_done(client: httpx.Client, run_id: str) -> dict[str, Any]:
    for _ in range(300):
        run: dict[str, Any] = client.get(f"/v1/runs/{run_id}").json()
        if run["status"] != "running":
            return run
        time.sleep(0.05)
    raise AssertionError("run did not finish")


def test_spans_reach_an_otlp_collector_and_metrics_are_scraped(
    tmp_path: Path, collector: Collector
) -> None:
    folder = tmp_path
    study_workspace(folder).close()
    with (folder / "ws" / "config.toml").open("a") as f:
        f.write(f'\n[telemetry]\notlp_endpoint = "{collector.url}"\nservice_name = "fn-test"\n')
    ws = Workspace.open(folder / "ws")
    agent = RoleModel("compose", FakeChatModel(agent_script), ledger=Ledger(), external=False)
    app = create_app(ws, ServerDeps(agent_model=agent, use_models=False))
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as client:
        session = client.post("/v1/sessions", json={}).json()["id"]
        for mode, question in (("ask", "What recall@10 did hybrid retrieval reach?"),
                               ("agent", "What recall did hybrid retrieval reach?")):  # fmt: skip
            turn = client.post(f"/v1/sessions/{session}/messages",
                               json={"content": question, "mode": mode}).json()  # fmt: skip
            assert wait_done(client, turn["run_id"])["status"] == "completed"
        empty = client.post(f"/v1/sessions/{session}/messages",
                            json={"content": "Which hospital provided the patient records?"}).json()  # fmt: skip
        wait_done(client, empty["run_id"])
        scraped = client.get("/metrics")
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    samples = metric_samples(scraped.text)
    assert samples[("footnote_runs_total", (("kind", "chat"), ("status", "answered")))] >= 1
    assert samples[("footnote_runs_total", (("kind", "ask"), ("status", "answered")))] >= 1
    assert samples[("footnote_runs_total", (("kind", "agent"), ("status", "answered")))] == 1
    assert samples[("footnote_tool_calls_total", (("tool", "search_library"),))] == 1
    assert samples[("footnote_citation_checks_total", (("verdict", "supported"),))] >= 1
    assert (
        samples[("footnote_model_calls_total", (("purpose", "agent_step"), ("role", "compose")))]
        >= 1
    )
    refused = [v for (n, lab), v in samples.items() if n == "footnote_refusals_total"]
    assert sum(refused) >= 1, "the question with no answer in the library counts as a refusal"
    assert samples[("footnote_run_seconds_count", (("kind", "chat"),))] >= 2
    assert ("footnote_fabricated_ids_total", ()) in samples
    assert not [k for k in samples if k[0] == "footnote_errors_total"], "no error happened"
    ws.close()  # flushes the exporter

    spans = collector.spans
    assert spans and {s["service"] for s in spans} == {"fn-test"}
    by_id = {s["id"]: s for s in spans}
    chats = [s for s in spans if s["name"] == "footnote.chat"]
    asks = [s for s in spans if s["name"] == "footnote.ask"]
    assert len(chats) == 2 and asks
    first_ask = next(
        a for a in asks if a["parent"] == chats[0]["id"] or a["parent"] == chats[1]["id"]
    )
    assert first_ask["trace"] == by_id[first_ask["parent"]]["trace"]
    children = {s["name"] for s in spans if s["parent"] == first_ask["id"]}
    assert {"retrieve hybrid", "check citation"} <= children
    check = next(s for s in spans if s["name"] == "check citation")
    assert check["attrs"]["footnote.verdict"] in {"supported", "weak", "unsupported"}
    assert check["start"] <= check["end"]
    agent_run = next(s for s in spans if s["name"] == "footnote.agent")
    agent_children = {s["name"] for s in spans if s["parent"] == agent_run["id"]}
    assert "tool search_library" in agent_children and any(
        n.startswith("model ") for n in agent_children
    )
    assert agent_run["attrs"]["footnote.status"] == "answered"


def test_metrics_count_fabricated_ids_and_errors_from_check_spans() -> None:
    """The counters read the spans as the verification gate writes them."""
    m = Metrics.create()
    m.span(
        Span("r", 0, "check", "citation", {"verdict": "unsupported", "fabricated": True}, 0.0, 0.0)
    )
    m.span(Span("r", 1, "check", "citation", {"verdict": "weak", "fabricated": False}, 0.0, 0.0))
    m.span(Span("r", 2, "error", "fold", {"message": "boom"}, 0.0, 0.0))
    m.finished("ask", "failed", 1.0)
    from prometheus_client import generate_latest

    samples = metric_samples(generate_latest(m.registry).decode())
    assert samples[("footnote_fabricated_ids_total", ())] == 1
    assert samples[("footnote_citation_checks_total", (("verdict", "fabricated"),))] == 1
    assert samples[("footnote_citation_checks_total", (("verdict", "weak"),))] == 1
    assert samples[("footnote_errors_total", (("where", "error:fold"),))] == 1
    assert samples[("footnote_errors_total", (("where", "run:ask"),))] == 1


def test_telemetry_is_off_by_default_and_metrics_can_be_turned_off(tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "a") as ws:
        assert ws.telemetry.tracer is None and ws.telemetry.metrics is not None
    with Workspace.open(tmp_path / "b", overrides={"telemetry": {"metrics": False}}) as ws:
        app = create_app(ws, ServerDeps(use_models=False))
        from fastapi.testclient import TestClient

        with TestClient(app, base_url="http://127.0.0.1") as client:
            resp = client.get("/metrics")
        assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_span_text_stays_home_unless_export_text_is_on(
    tmp_path: Path, collector: Collector
) -> None:
    """The collector is an egress: by default it gets names, numbers and lengths, not text."""
    question = "What recall@10 did hybrid retrieval reach?"
    for export_text in (False, True):
        folder = tmp_path / str(export_text)
        study_workspace(folder).close()
        with (folder / "ws" / "config.toml").open("a") as f:
            f.write(f'\n[telemetry]\notlp_endpoint = "{collector.url}"\n'
                    f"export_text = {str(export_text).lower()}\n")  # fmt: skip
        collector.clear()
        ws = Workspace.open(folder / "ws")
        app = create_app(ws, ServerDeps(use_models=False))
        with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=60) as client:
            session = client.post("/v1/sessions", json={}).json()["id"]
            turn = client.post(
                f"/v1/sessions/{session}/messages", json={"content": question}
            ).json()
            wait_done(client, turn["run_id"])
        ws.close()
        values = [str(v) for s in collector.spans for v in s["attrs"].values()]
        leaked = [v for v in values if "hybrid retrieval" in v.lower()]
        assert bool(leaked) is export_text
        if not export_text:
            assert any(k.endswith(".chars") for s in collector.spans for k in s["attrs"])
            verdicts = [s["attrs"].get("footnote.verdict") for s in collector.spans]
            assert any(v in {"supported", "weak", "unsupported"} for v in verdicts)
