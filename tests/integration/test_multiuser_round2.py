"""Many users, one server, round two (#31 findings 1, 2, 7, 8, 9, 10, 11, 12): a real server on
loopback (real SQLite, WordLlama, extractive ask) with the MCP endpoint mounted and several
keyed users. Each test is one finding, tried from the outside as a second user would."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from live import LiveServer, add_films, study_workspace
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from footnote.errors import NotFound
from footnote.mcp import mount_mcp
from footnote.pipelines.graph.sources import library_graph
from footnote.server import create_app
from footnote.server.runner import LiveRun
from footnote.server.sources import job_id, resume_uploads
from footnote.server.state import ServerDeps, ServerState
from footnote.store.graph.base import GraphSpec
from footnote.store.records import User
from footnote.workspace import Workspace
from footnote.workspace.api import Library
from footnote.workspace.research import research_store

pytestmark = pytest.mark.integration
USERS = {"alice": ("staff",), "bob": (), "carol": (), "dave": (), "erin": (), "frank": (),
         "gina": ()}  # fmt: skip
FILMS_Q = "When was Ada Stone born?"
DATA = Path(__file__).resolve().parents[1] / "data"
PLAN = b"# Acquisition plan\n\n## Terms\n\nThe ZEBRAQUARTZ acquisition closes at 4417 million.\n"


@dataclass
class Site:
    url: str
    keys: dict[str, str]
    ws: Workspace
    state: ServerState
    root: Path

    def http(self, user: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-API-Key": self.keys[user]}, timeout=60)

    def mcp(self, user: str) -> Client:
        headers = {"Authorization": f"Bearer {self.keys[user]}"}
        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60.0))
        return Client(streamable_http_client(self.url + "/mcp", http_client=client))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("round2")
    study_workspace(root, secret=True).close()
    limits = {"max_runs_per_minute": 2, "max_runs_total": 3}
    ws = Workspace.open(root / "ws", overrides={"server": limits})
    add_films(ws)
    films = ws.graph_catalog().spec("films")
    staff = GraphSpec.model_validate(
        {**films.model_dump(), "name": "staff-films", "acl_groups": ["staff"]}
    )
    catalog = ws.graph_catalog()
    films_data = sys.modules["graph_films"]  # loaded by add_films
    catalog.create(staff, films_data.NODES, films_data.RELS, replace=True)
    everyone = library_graph(ws.store, None)  # the admin's `library`: every source
    catalog.create(everyone.spec("library"), everyone.nodes, everyone.rels, replace=True)
    keys = {user: ws.auth.add_key(user, groups) for user, groups in USERS.items()}
    app = create_app(ws, ServerDeps(use_models=False))
    mount_mcp(app, ws)
    with LiveServer(app) as srv:
        yield Site(srv.url, keys, ws, app.state.footnote, root)
    ws.close()


def _error(result: Any) -> str:
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    return text


def _shape(resp: httpx.Response, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text[:300]
    body: dict[str, Any] = resp.json()["error"]
    assert set(body) == {"code", "message", "detail"}
    return body


def _keyed(ws: Workspace, user: str) -> Library:
    return Library(ws, User(user, (*USERS[user], f"user:{user}")), owns=False)


# -- 1: every path that opens a graph applies its ACL -------------------------------------
async def test_graph_acl_holds_on_mcp_and_the_python_library(site: Site) -> None:
    async with site.mcp("bob") as bob:
        hidden = _error(await bob.call_tool("graph_ask", {"graph": "staff-films",
                                                          "question": FILMS_Q}))  # fmt: skip
        missing = _error(await bob.call_tool("graph_ask", {"graph": "no-such-graph",
                                                           "question": FILMS_Q}))  # fmt: skip
    assert "1970" not in hidden
    assert hidden.replace("staff-films", "G") == missing.replace("no-such-graph", "G")
    async with site.mcp("alice") as alice:  # a member of the graph's group still asks it
        answer = await alice.call_tool("graph_ask", {"graph": "staff-films", "question": FILMS_Q})
        assert not answer.is_error and "1970" in answer.structured_content["answer"]
    bob_lib = _keyed(site.ws, "bob")
    for name in ("staff-films", "library"):  # the admin's library graph too
        with pytest.raises(NotFound) as exc:
            await bob_lib.agraph_ask(name, FILMS_Q)
        assert str(exc.value) == f"no graph {name!r} (see `footnote graph ls`)"
        with pytest.raises(NotFound):
            site.ws.graph(name, user_groups=bob_lib.user.groups)
    assert {"staff-films", "library"}.isdisjoint(bob_lib.graphs()) and "films" in bob_lib.graphs()
    operator = await Library(site.ws, owns=False).agraph_ask("staff-films", FILMS_Q)
    assert "1970" in operator["answer"]


# -- 2: a deleted upload stays deleted ------------------------------------------------------
def _ready(client: httpx.Client, source_id: str) -> dict[str, Any]:
    for _ in range(600):
        got: dict[str, Any] = client.get(f"/v1/sources/{source_id}").json()
        if got.get("status") != "processing":
            return got
        time.sleep(0.05)
    raise AssertionError("the upload did not settle")


def test_a_deleted_upload_never_comes_back(site: Site) -> None:
    alice = site.http("alice")
    up = alice.post("/v1/sources", files={"file": ("plan.md", PLAN)},
                    data={"acl_groups": "user:alice"}).json()  # fmt: skip
    sid = up["id"]
    assert _ready(alice, sid)["status"] == "ready"
    kept = site.root / "ws" / "uploads" / sid
    assert (kept / "upload.json").is_file()
    payload = site.state.queue.status(job_id(sid)).payload  # type: ignore[union-attr]
    assert alice.delete(f"/v1/sources/{sid}").status_code == 204
    _shape(alice.get(f"/v1/sources/{sid}"), 404)  # not "processing"
    assert not kept.exists()  # the kept file and its ticket
    assert resume_uploads(site.state) == 0  # a restart resumes nothing
    # a retry of the upload's job (a lost worker, a duplicate delivery) stores nothing
    site.state.queue.submit("ingest", payload, job_id=job_id(sid), rerun=True)
    done = site.state.queue.wait(job_id(sid), timeout_s=60)
    assert done.state == "done" and site.ws.store.get_source(sid) is None
    _shape(alice.get(f"/v1/sources/{sid}"), 404)
    assert all(s["id"] != sid for s in alice.get("/v1/sources").json())
    hits = site.ws.searcher.search("ZEBRAQUARTZ acquisition", k=5)
    assert all(h.block.source_id != sid for h in hits)
    again = alice.post("/v1/sources", files={"file": ("plan.md", PLAN)},
                       data={"acl_groups": "user:alice"}).json()  # fmt: skip
    assert again["id"] == sid and _ready(alice, sid)["status"] == "ready"  # uploading it anew


# -- 5: an older version's /file never serves what is now at its path -----------------------
def _make_pdfs() -> Any:
    spec = importlib.util.spec_from_file_location("make_pdfs", DATA / "make_pdfs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_old_versions_file_is_its_own_bytes_or_gone(site: Site) -> None:
    pdfs, path = _make_pdfs(), site.root / "report.pdf"
    pdfs.two_column(path, pages=1)
    v1 = site.ws.ingest([path], public=True).results[0].source
    pdfs.references(path)  # the file changes at the same path; v2 is for staff only
    v2 = site.ws.ingest([path], acl_groups=["staff"]).results[0].source
    assert v1 is not None and v2 is not None and v1.id != v2.id
    bob, alice = site.http("bob"), site.http("alice")
    gone = _shape(bob.get(f"/v1/sources/{v1.id}/file"), 410)  # not v2's bytes
    assert gone["code"] == "gone"
    _shape(bob.get(f"/v1/sources/{v2.id}/file"), 404)
    served = alice.get(f"/v1/sources/{v2.id}/file")
    assert served.status_code == 200 and served.content == path.read_bytes()


# -- 7: MCP runs pass the same quotas as HTTP runs -------------------------------------------
RUN_TOOLS = {
    "ask": {"question": "What is BM25?"},
    "search": {"query": "fusion"},
    "graph_ask": {"graph": "films", "question": FILMS_Q},
    "research": {"question": "How well did hybrid retrieval perform?", "web": False},
}
"""MCP tools that run the pipeline or the search: each passes the run quotas."""
READ_TOOLS = {"read_block", "read_section"}
"""MCP tools that only read stored evidence (the ACL applies; no quota)."""


async def test_mcp_runs_count_against_the_per_minute_quota(site: Site) -> None:
    async with site.mcp("carol") as carol:
        tools = {t.name for t in (await carol.list_tools()).tools}
        assert tools == set(RUN_TOOLS) | READ_TOOLS, "a new tool: declare whether it is a run"
        first = await carol.call_tool("ask", {"question": "What recall@10 did hybrid reach?"})
        assert not first.is_error
        assert not (await carol.call_tool("search", {"query": "fusion"})).is_error
        for tool, args in RUN_TOOLS.items():  # two runs this minute: every run tool refused
            refused = _error(await carol.call_tool(tool, args))
            assert "quota exceeded: runs" in refused and "retry in" in refused, tool
    chat = {"model": "footnote", "messages": [{"role": "user", "content": "What is BM25?"}]}
    body = _shape(site.http("carol").post("/v1/chat/completions", json=chat), 429)
    assert body["detail"]["quota"] == "runs"


async def test_mcp_runs_wait_for_the_server_total_and_count_in_flight(site: Site) -> None:
    hub = site.state.hub
    busy = [LiveRun(f"run_busy{i}", f"x{i}", None) for i in range(3)]  # max_runs_total runs
    hub.live.update({r.run_id: r for r in busy})
    try:
        async with site.mcp("gina") as gina:
            refused = _error(await gina.call_tool("ask", {"question": "What is BM25?"}))
        assert "capacity" in refused
    finally:
        for r in busy:
            hub.live.pop(r.run_id)
    with site.state.admit_run("x1"), site.state.admit_run("x2"), site.state.admit_run("x3"):
        assert hub.in_flight("x1") == 1 and hub.in_flight("*") >= 3  # an MCP call in flight
        chat = {"model": "footnote", "messages": [{"role": "user", "content": "What is BM25?"}]}
        body = _shape(site.http("gina").post("/v1/chat/completions", json=chat), 429)
        assert body["detail"]["quota"] == "runs_total"
    assert hub.in_flight("x1") == 0


def test_research_budgets_of_a_user_are_clamped_to_the_server_maxima(site: Site) -> None:
    cfg = site.ws.settings.research
    run_id, _ = _keyed(site.ws, "frank").research_outline(
        "How well did hybrid retrieval perform?", web=False, budget_tokens=999_999_999_999,
        budget_minutes=10**9,
    )  # fmt: skip
    options = research_store(site.ws).get_research(run_id).options  # type: ignore[union-attr]
    assert options["budget_tokens"] == cfg.budget_tokens
    assert options["budget_minutes"] == cfg.budget_minutes
    run_id, _ = _keyed(site.ws, "frank").research_outline("Q?", web=False, budget_tokens=500)
    assert research_store(site.ws).get_research(run_id).options["budget_tokens"] == 500  # type: ignore[union-attr]


# -- 8: /v1/chat/completions is bounded before anything is stored ----------------------------
def test_chat_completions_limits_are_checked_before_anything_is_stored(site: Site) -> None:
    frank = site.http("frank")
    before = frank.get("/v1/sessions").json()
    long_turn = [{"role": "user", "content": "x" * 8001}]
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"}
               for i in range(201)]  # fmt: skip
    for messages in (long_turn, history):
        body = _shape(frank.post("/v1/chat/completions",
                                 json={"model": "footnote", "messages": messages}), 422)  # fmt: skip
        assert body["code"] == "invalid_request"
    huge = {"model": "footnote", "messages": [{"role": "system", "content": "y" * (5 * 2**20)},
                                              {"role": "user", "content": "What is BM25?"}]}  # fmt: skip
    _shape(frank.post("/v1/chat/completions", json=huge), 413)
    assert frank.get("/v1/sessions").json() == before


# -- 9: unvalidated input is a 4xx in the error shape, never a 500 ----------------------------
def test_odd_input_gets_a_4xx_in_the_error_shape(site: Site) -> None:
    erin = site.http("erin")
    session = erin.post("/v1/sessions", json={}).json()["id"]
    turn = erin.post(f"/v1/sessions/{session}/messages", json={"content": "What is BM25?"}).json()
    run = turn["run_id"]
    for _ in range(600):
        if erin.get(f"/v1/runs/{run}").json()["status"] != "running":
            break
        time.sleep(0.05)
    events = f"/v1/runs/{run}/events"
    for header in ("²".encode("latin-1"), b"1" * 23, b"-1"):  # a superscript digit, > int64
        _shape(erin.get(events, headers={"Last-Event-ID": header}), 422)
    _shape(erin.get(events, params={"after": "1" * 23}), 422)
    assert "event: done" in erin.get(events, headers={"Last-Event-ID": "1"}).text
    lone = '{"model": "footnote", "messages": [{"role": "user", "content": "BM25 \\ud800?"}]}'
    headers = {"Content-Type": "application/json"}
    _shape(erin.post("/v1/chat/completions", content=lone, headers=headers), 422)
    feedback = json.dumps({"rating": "down", "run_id": run, "comment": "x"}).replace(
        '"x"', '"\\udc00"'
    )
    _shape(erin.post("/v1/feedback", content=feedback, headers=headers), 422)
    name = "a" * 296 + ".md"
    _shape(erin.post("/v1/sources", files={"file": (name, b"# T\n\nText.\n")}), 422)


# -- 10: the web app's Content-Security-Policy ------------------------------------------------
def test_the_web_app_forbids_remote_images_and_foreign_scripts(site: Site) -> None:
    for path in ("/", "/assets/app.js"):
        csp = httpx.get(site.url + path, timeout=30).headers.get("content-security-policy", "")
        directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
        assert directives.get("img-src") == ["'self'", "data:"], csp
        assert directives.get("script-src") == ["'self'"], csp


# -- 11: labels given over HTTP are normalised, or refused ------------------------------------
def test_upload_labels_are_normalised_or_refused(site: Site) -> None:
    alice = site.http("alice")
    note = b"# Licensed note\n\nThe licensed panel counted 77 harbour cranes.\n"
    up = alice.post("/v1/sources", files={"file": ("licensed-note.md", note)},
                    data={"labels": "No_External_Model, Internal"}).json()  # fmt: skip
    ready = _ready(alice, up["id"])
    assert ready["status"] == "ready" and ready["labels"] == ["no-external-model", "internal"]
    bad = alice.post("/v1/sources", files={"file": ("other.md", note + b"More.\n")},
                     data={"labels": "no-external-models"})  # fmt: skip
    assert "no-external-model" in _shape(bad, 422)["message"]


# -- 12: keyed users never resolve server paths and see file names only -----------------------
async def test_keyed_users_never_resolve_or_see_server_paths(site: Site) -> None:
    ingested = str(site.root / "study.md")
    probes = [ingested, str(site.root / "ws" / "config.toml"), str(site.root / "absent.md")]
    async with site.mcp("dave") as dave:
        answers = []
        for path in probes:
            text = _error(await dave.call_tool("read_section", {"source": path,
                                                                "section": "Method"}))  # fmt: skip
            answers.append(text.replace(path, "P"))
        listing = await dave.read_resource("footnote://sources")
        uris = [s["uri"] for s in json.loads(listing.contents[0].text)]  # type: ignore[union-attr]
    assert len(set(answers)) == 1 and "ingested" not in answers[0]
    assert uris == ["study.md"]
    paper = next(r.source.id for r in site.ws.store.list_sources() if not r.source.acl_groups)
    doc = site.http("dave").get(f"/v1/sources/{paper}/document").json()
    assert doc["source"]["uri"] == "study.md"
    mine = library_graph(site.ws.store, ("user:dave",))
    assert [p["uri"] for p in mine.nodes["Paper"]] == ["study.md"]
    local = Library(site.ws, owns=False)  # the operator still names files by path
    assert local.source(ingested).uri == ingested
