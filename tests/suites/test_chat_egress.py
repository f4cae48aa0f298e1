"""Licence-label suite, the conversation surfaces (issue #31, Definition of done): every model role
a conversation can reach — the question rewrite and the running summary (`summarise`), the
reranker (`rerank`), the support judge (`judge`) and the agent (`compose`) — is bound to the
recording OpenAI-compatible server on loopback (`openai_recorder`), marked external, under
default settings otherwise. A `no-external-model` memo is asked about over the SSE chat route
and `/v1/chat/completions` (with the history an OpenAI client resends), in ask and agent mode;
it is then deleted mid-conversation and a copy re-labelled `internal`, and the conversation
goes on. The recorder must hold 0 bytes of the memo; an unlabelled control document asked about
in the same conversations must reach it (the zero is not a server nobody called). Counted: each
conversation step (tried), those after which nothing labelled was sent (blocked), labelled
bytes sent (lost). Real pipeline, real HTTP, real SQLite; research and embeddings are in
`test_label_egress`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai_recorder import Recorder
from suite_support import LiveServer, tally

from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
T = tally("label_egress")
MEMO = (
    "# Orvanta client memo\n\n"
    "The Quellfast battery recycling plant processed 731 kilotonnes of cells in 2023, "
    "according to the Orvanta internal audit of the Quellfast site.\n"
)
CONTROL = (
    "# Public digest\n\n"
    "The Brightwater recycling plant processed 212 kilotonnes of glass in 2023 according to "
    "the public digest of municipal recyclers.\n"
)
WORD = re.compile(r"\w+(?:[.,]\w+)*%?")


def shingles(text: str, n: int = 4) -> set[str]:
    words = WORD.findall(text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def leaked(text: str, sent: list[str], public: str = "") -> int:
    """Bytes of `text` in what was sent: its 4-word shingles (none shared with `public`)."""
    hay = " ".join(" ".join(WORD.findall(s.lower())) for s in sent)
    return sum(len(s) for s in shingles(text) - shingles(public) if s in hay)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Workspace, Recorder, str]]:
    rec = Recorder()
    external = {"url": rec.url}
    ws = Workspace.open(tmp_path / "ws", overrides={
        "models": {"embed": {"url": "local:wordllama"}, "summarise": external,
                   "rerank": external, "judge": external, "compose": external},
        "ask": {"mode": "extractive", "use_judge": False},
        "retrieval": {"rerank": True},
        "chat": {"history_turns": 1},
    })  # fmt: skip
    (tmp_path / "memo.md").write_text(MEMO, encoding="utf-8")
    (tmp_path / "digest.md").write_text(CONTROL, encoding="utf-8")
    [memo] = ws.ingest([tmp_path / "memo.md"], labels=["no-external-model"]).results
    assert not ws.ingest([tmp_path / "digest.md"]).failed and memo.source is not None
    with LiveServer(ws, ServerDeps(use_models=True)) as srv:
        yield srv.url, ws, rec, memo.source.id
    rec.stop()
    ws.close()


def _turn(client: httpx.Client, sid: str, content: str, **extra: Any) -> str:
    started = client.post(f"/v1/sessions/{sid}/messages", json={"content": content, **extra})
    assert started.status_code == 202, started.text
    with client.stream("GET", started.json()["stream_url"]) as r:
        body = "".join(r.iter_text())
    assert "event: done" in body, body[-500:]
    return body


def test_no_labelled_byte_leaves_through_a_conversation(
    site: tuple[str, Workspace, Recorder, str], tmp_path: Path
) -> None:
    url, ws, rec, memo_id = site
    steps: list[tuple[str, int]] = []

    def step(name: str) -> None:
        steps.append((name, leaked(MEMO, rec.prompts(), CONTROL)))

    with httpx.Client(base_url=url, timeout=120) as client:
        sid = client.post("/v1/sessions", json={"title": "plants"}).json()["id"]
        said = _turn(client, sid, "How many kilotonnes did the Quellfast plant process?")
        assert "731 kilotonnes" in said, said[-1500:]  # the memo was answered from
        step("sse ask")
        _turn(client, sid, "What about the Brightwater plant?")
        step("sse follow-up (rewrite)")
        _turn(client, sid, "And how much did it process in 2023?")
        step("sse follow-up (summary)")
        _turn(client, sid, "How many kilotonnes did the Quellfast plant process?", mode="agent")
        step("sse agent")
        first = client.post("/v1/chat/completions", json={"model": "footnote", "messages": [
            {"role": "user", "content": "How many kilotonnes did the Quellfast plant process?"}]})  # fmt: skip
        reply = first.json()["choices"][0]["message"]["content"]
        history = [
            {"role": "user", "content": "How many kilotonnes did the Quellfast plant process?"},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": "And the Brightwater plant?"},
            {"role": "assistant", "content": MEMO},  # a client may resend anything
            {"role": "user", "content": "What about it in 2023?"},
        ]
        resent = client.post(
            "/v1/chat/completions", json={"model": "footnote", "messages": history}
        )
        assert resent.status_code == 200, resent.text
        step("openai route, resent history")
        ws.delete_source(memo_id)  # mid-conversation
        _turn(client, sid, "What about the glass plant then?")
        step("sse after the memo was deleted")
        relabelled = tmp_path / "memo-internal.md"
        relabelled.write_text(MEMO, encoding="utf-8")
        assert not ws.ingest([relabelled], labels=["internal"]).failed
        digest = next(s for s in ws.store.list_sources() if s.source.title == "Public digest")
        _turn(client, sid, "And what did it process?", sources=[digest.source.id])
        step("sse after re-labelling (scoped to the control)")
    sent = rec.prompts()
    lost = leaked(MEMO, sent, CONTROL)
    T.add(tried=len(steps), blocked=sum(1 for _n, b in steps if b == 0), lost=lost)
    print("\nconversation egress:", json.dumps(dict(steps)), f"control bytes sent "
          f"{leaked(CONTROL, sent, MEMO)}, {len(rec.requests)} requests to the external model")  # fmt: skip
    assert lost == 0, steps
    assert leaked(CONTROL, sent, MEMO) > 0  # the external roles were called


GRAPH_MEMO = (
    "# Orvanta client memo on the Quellfast site\n\n"
    "## Findings\n\n"
    "The Quellfast battery recycling plant processed 731 kilotonnes of cells in 2023, "
    "according to the Orvanta internal audit of the Quellfast site.\n\n"
    "## References\n\n"
    "1. Marrowdale, K. (2022). Orvanta confidential survey of Quellfast cell throughput. "
    "Orvanta Internal Reports.\n"
)
QUESTIONS = [
    "How many kilotonnes did the Quellfast plant process?",
    "And how much did it process in 2023?",
    "What about the Brightwater plant?",
    "And what did it process?",
]
GRAPH_QUESTIONS = ["Which papers are in the library?", "Which references do they cite?"]
SRC = Path(__file__).resolve().parents[2] / "src"


class CypherRecorder(Recorder):
    """The recording server, also writing a valid query when asked for Cypher (so rows come
    back and the graph answer is composed from them: the titles would go out)."""

    def reply(self, body: dict[str, Any]) -> str:
        if "into ONE read-only Cypher query" in json.dumps(body.get("messages", [])):
            return "MATCH (p:Paper) RETURN p.title AS title"
        return super().reply(body)


def _config(url: str) -> str:
    """Every chat role on the recording server (external); vectors stay local: an external
    embedder refuses to index the labelled memo at all (`test_label_egress`)."""
    roles = "".join(
        f'[models.{r}]\nurl = "{url}"\n\n'
        for r in ("understand", "compose", "judge", "summarise", "cypher", "rerank")
    )
    return (
        roles + '[models.embed]\nurl = "local:wordllama"\n\n'
        '[ask]\nmode = "extractive"\nuse_judge = false\n\n[retrieval]\nrerank = true\n\n'
        '[chat]\nhistory_turns = 1\nrewrite = "always"\n'
    )


def test_no_labelled_byte_leaves_through_graph_cli_or_python_chat(tmp_path: Path) -> None:
    """Graph QA over a library graph that holds the memo, the Python `Library` chat and the
    terminal chat (`footnote chat`, its real entry point, turns on stdin), every chat role
    bound to the recording server: none of the memo's bytes reach it; the control's do."""
    rec = CypherRecorder()
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "config.toml").write_text(_config(rec.url), encoding="utf-8")
    (tmp_path / "memo.md").write_text(GRAPH_MEMO, encoding="utf-8")
    (tmp_path / "digest.md").write_text(CONTROL, encoding="utf-8")
    ws = Workspace.open(folder)
    assert not ws.ingest([tmp_path / "memo.md"], labels=["no-external-model"]).failed
    assert not ws.ingest([tmp_path / "digest.md"]).failed
    public = " ".join([CONTROL, *QUESTIONS, *GRAPH_QUESTIONS])
    steps: list[tuple[str, int]] = []
    seen = 0

    def step(name: str) -> None:
        """The memo's bytes (and memo-only words) in the requests since the last step."""
        nonlocal seen
        sent = rec.prompts()[seen:]
        seen += len(sent)
        words = sum(w in " ".join(sent).lower() for w in ("orvanta", "marrowdale"))
        steps.append((name, leaked(GRAPH_MEMO, sent, public) + words))

    from footnote.pipelines.graph.sources import library_graph
    from footnote.workspace.api import Library

    g = library_graph(ws.store, None)
    assert "no-external-model" in g.labels
    ws.graph_catalog().create(g.spec("library"), g.nodes, g.rels, replace=True)
    lib = Library(ws, owns=False)
    first = lib.graph_ask("library", GRAPH_QUESTIONS[0])
    lib.graph_ask("library", GRAPH_QUESTIONS[1], session=first.get("session"))
    step("graph QA over the library graph")
    chat = lib.chat(title="plants")
    replies = [chat.send(q) for q in QUESTIONS]
    said = [r.text for r in replies]
    assert "731" in said[0], [
        (r.status, r.answer.reason) for r in replies
    ]  # the memo was answered from
    chat.send(QUESTIONS[0], mode="agent")
    step("python Library chat (ask, rewrite, summary, agent)")
    ws.close()

    stdin = "\n".join([*QUESTIONS, "/agent", QUESTIONS[0], "/quit"]) + "\n"
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-m", "footnote.cli", "chat", "-w", str(folder)],
        input=stdin, capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "731 kilotonnes" in done.stdout, done.stdout[-2000:]
    step("terminal chat (footnote chat on stdin)")
    sent = rec.prompts()
    lost = leaked(GRAPH_MEMO, sent, public)
    rec.stop()
    words = [w for w in ("orvanta", "marrowdale") if w in " ".join(sent).lower()]
    T.add(tried=len(steps), blocked=sum(1 for _n, b in steps if b == 0), lost=lost + len(words))
    print("\ngraph / terminal / python egress:", json.dumps(dict(steps)), f"memo-only words "
          f"sent {words}, {len(rec.requests)} requests to the external model")  # fmt: skip
    assert lost == 0 and not words, (steps, words)
    assert leaked(CONTROL, sent, GRAPH_MEMO) > 0  # the external roles were called
