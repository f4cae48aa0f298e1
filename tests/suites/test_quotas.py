"""Quota suite (issue #31, Definition of done: "same for quotas"): every entry point that starts
a run, over HTTP and over MCP, passes the three run limits, counted over both surfaces
together: runs started per minute (`server.max_runs_per_minute`), runs one user has in flight
(`max_runs_in_flight`) and runs executing for everyone (`max_runs_total`).

The lists are the rule. The route table of the app (walked, not the OpenAPI document: a route
hidden from the schema counts too) and the MCP tool list are read at run time; a route that is
not a read (GET) and a tool must each be either in `HTTP_RUNS` / `MCP_RUNS` (tried against
every limit) or in `EXEMPT` with the reason it needs no run quota, else the suite fails; a GET
route or an exempt one whose code calls a run-starting function fails it too.

A run is held in flight by the reranker: the `rerank` role is bound to a recording
OpenAI-compatible server on loopback (`openai_recorder`) whose answers the suite can hold, so a
search-based run (a chat turn over HTTP, `search` over MCP) stays executing until released.
For each entry point E and a fresh user:
- per minute (limit 2): E (admitted), one run on the other surface (admitted), E again: refused;
- in flight (limit 1): the user's run on the other surface held, then E: refused;
- in total (limit 2): two other users' runs held, one on each surface, then E: refused.
Counted: each over-limit call (tried), refused by the right limit (blocked), admitted or
refused for another reason (lost). Real server, real SQLite, real MCP over streamable HTTP."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from openai_recorder import Recorder
from suite_support import FAST, LiveServer, tally

from footnote.mcp import mount_mcp
from footnote.pipelines.graph.sources import library_graph
from footnote.server.state import ServerDeps, ServerState
from footnote.workspace import Workspace
from footnote.workspace.research import confirm_outline, run_research, start_research

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # CI runs them (./scripts/test)
T = tally("quotas")
T0 = time.monotonic()
LIMITS = {"max_runs_per_minute": 2, "max_runs_in_flight": 1, "max_runs_total": 2,
          "max_sessions_per_minute": 1000}  # fmt: skip
DIGEST = (
    "# Public digest\n\n## Plants\n\n"
    "The Brightwater recycling plant processed 212 kilotonnes of glass in 2023 according to "
    "the public digest of municipal recyclers.\n\n"
    "| Plant | Kilotonnes |\n|---|---|\n| Brightwater | 212 |\n| Eastmoor | 48 |\n"
)
QUESTION = "How much glass did the Brightwater recycling plant process?"
RESEARCH_Q = "How much glass do municipal recycling plants process?"
GRAPH = "library"
NO_LLM = {r: {"url": ""} for r in ("understand", "compose", "judge", "summarise", "cypher")}
"""No embedded LLM loads: extractive ask, rules-only research, template-only graph QA."""
REFUSAL = {  # the quota named in a 429's detail, and the words of the MCP error
    "per minute": ("runs", "quota exceeded: runs (limit"),
    "in flight": ("runs_in_flight", "runs in flight"),
    "in total": ("runs_total", "the server is at capacity"),
}
RUN_MARKERS = re.compile(
    r"start_run|admit_run|hub\.start|hub\.resume|job_runs\.submit|settings_table|"
    r"settings_events|research_events|run_research|graph_pipeline|chat_turn|\.ask\(|\.aask\("
)
"""Calls that start (or are) a run: an endpoint classified as exempt must make none."""
EXEMPT: dict[tuple[str, str], str] = {
    ("POST", "/v1/sources"): "ingestion, not a run: bounded by `max_upload_mb` per file and "
    "`max_upload_mb_per_day` (the upload-bytes quota)",
    ("DELETE", "/v1/sources/{source_id}"): "removes the caller's own source; no model, no run",
    ("POST", "/v1/compute"): "sandboxed arithmetic over cited cells (the sandbox's own time and "
    "memory limits); no model, no run",
    ("POST", "/v1/sessions"): "creates an empty session: `max_sessions_per_minute`",
    ("PATCH", "/v1/sessions/{session_id}"): "renames the caller's session",
    ("DELETE", "/v1/sessions/{session_id}"): "deletes the caller's session",
    ("POST", "/v1/runs/{run_id}/cancel"): "stops a run (frees a slot)",
    ("POST", "/v1/feedback"): "stores a rating",
    ("POST", "/v1/graphs/library"): "rebuilds the caller's library graph from the store: no "
    "model, no run; its size is bounded by the sources the caller may read",
    ("POST", "/v1/research/{run_id}/review/seen"): "records that the reviewer saw a claim",
    ("POST", "/v1/research/{run_id}/review/claims/{claim_id}"): "a reviewer's decision on a "
    "claim of their own finished run; an edit re-checks that one claim (code, and the judge "
    "role when bound), not a run",
    ("POST", "/v1/research/{run_id}/review/ticks/{claim_id}"): "ticks a key figure",
    ("POST", "/v1/research/{run_id}/review/conflicts/{conflict_id}"): "records a resolution",
    ("POST", "/v1/research/{run_id}/review/signoff"): "records the sign-off",
    ("POST", "/v1/research/{run_id}/review/origins/{group_id}"): "records the analyst's "
    "attribution decision on a group of their own finished run: no model, no run",
    ("ANY", "/mcp"): "the MCP endpoint: its tools are classified one by one (`MCP_RUNS`)",
    ("ANY", "/"): "the web app's static files",
    ("MCP", "read_block"): "reads one stored block (the ACL applies); no model, no run",
    ("MCP", "read_section"): "reads one stored section (the ACL applies); no model, no run",
}


class HeldModel(Recorder):
    """The recording server, whose answers wait while `held` (a run calling it stays in
    flight); `waiting` counts the requests held now."""

    def __init__(self) -> None:
        super().__init__()
        self.free = threading.Event()
        self.free.set()
        self.waiting = 0
        self._lock = threading.Lock()

    def reply(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.waiting += 1
        try:
            self.free.wait(120)
        finally:
            with self._lock:
                self.waiting -= 1
        return super().reply(body)


@dataclass
class Caller:
    """One user: an HTTP client and an MCP client with the user's key, and what the entry
    points need of theirs (a session, proposed and failed research runs)."""

    user: str
    http: httpx.AsyncClient
    mcp: Client
    session: str = ""
    proposed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass
class Site:
    srv: LiveServer
    ws: Workspace
    model: HeldModel
    source: str
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    count: int = 0

    @property
    def state(self) -> ServerState:
        state: ServerState = self.srv.app.state.footnote
        return state

    async def caller(self, prep: str = "") -> Caller:
        """A fresh user (a key of their own: fresh per-minute windows)."""
        self.count += 1
        user = f"u{self.count}"
        key = self.ws.auth.add_key(user, ("staff",))
        http = await self.stack.enter_async_context(httpx.AsyncClient(
            base_url=self.srv.url, headers={"X-API-Key": key}, timeout=30))  # fmt: skip
        transport = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(60.0)
        )
        mcp = await self.stack.enter_async_context(
            Client(streamable_http_client(self.srv.url + "/mcp", http_client=transport))
        )
        c = Caller(user, http, mcp)
        if prep == "session":
            made = await http.post("/v1/sessions", json={"title": "quotas"})
            c.session = made.json()["id"]
        for _ in range(2 if prep == "proposed" else 0):
            made = await http.post("/v1/research", json={"question": RESEARCH_Q, "web": False})
            assert made.status_code == 201, made.text
            c.proposed.append(made.json()["id"])
        for _ in range(2 if prep == "failed" else 0):
            c.failed.append(await self.failed_run(user))
        return c

    async def failed_run(self, user: str) -> str:
        """A research run of `user` started outside the server and stopped after its first
        event (a terminal closed mid-run), so it may be resumed."""
        run_id, _ = start_research(self.ws, RESEARCH_Q, web=False, user_id=user,
                                   user_groups=("staff", f"user:{user}"))  # fmt: skip
        confirm_outline(self.ws, run_id)
        events = run_research(self.ws, run_id, user_id=user)
        await anext(aiter(events))
        await events.aclose()  # type: ignore[attr-defined]
        rec = self.state.ws.research_store.get_research(run_id)
        assert rec is not None and rec.state in ("running", "failed"), rec
        return run_id

    async def idle(self, user: str = "*") -> None:
        """Until no run of `user` (`*`: of anyone) executes."""
        for _ in range(1200):
            if self.state.quotas.in_flight(user) == 0:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"runs of {user} still in flight")

    @asynccontextmanager
    async def holding(self) -> AsyncIterator[None]:
        """The model's answers wait inside this block (released, and every run ended, after)."""
        self.model.free.clear()
        try:
            yield
        finally:
            self.model.free.set()
            await self.idle()

    async def held(self, n: int) -> None:
        """Until `n` requests wait at the held model."""
        for _ in range(600):
            if self.model.waiting >= n:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{self.model.waiting} of {n} runs reached the model")


Outcome = tuple[bool, str]
"""(admitted, what came back: the 429's quota name, or the MCP error text)."""


async def _within(call: Awaitable[Outcome], seconds: float = 20) -> Outcome:
    """An over-limit call: one still running after `seconds` was admitted."""
    try:
        return await asyncio.wait_for(call, seconds)
    except (TimeoutError, httpx.TimeoutException):
        return True, f"admitted: still running after {seconds} s"


async def _http(resp: Awaitable[httpx.Response]) -> Outcome:
    r = await resp
    if r.status_code == 429:
        return False, str(r.json()["error"]["detail"]["quota"])
    return r.status_code < 400, f"{r.status_code} {r.text[:300]}"


async def _mcp(c: Caller, tool: str, args: dict[str, Any]) -> Outcome:
    out = await c.mcp.call_tool(tool, args)
    text = json.dumps([x.model_dump() for x in out.content])
    return not out.is_error, text


EntryPoint = Callable[[Site, Caller], Awaitable[Outcome]]
HTTP_RUNS: dict[tuple[str, str], tuple[str, EntryPoint]] = {
    ("POST", "/v1/sessions/{session_id}/messages"): ("session", lambda s, c: _http(c.http.post(
        f"/v1/sessions/{c.session}/messages", json={"content": QUESTION}))),
    ("POST", "/v1/chat/completions"): ("", lambda s, c: _http(c.http.post(
        "/v1/chat/completions", json={"model": "footnote", "messages": [
            {"role": "user", "content": QUESTION}]}))),
    ("POST", "/v1/research"): ("", lambda s, c: _http(c.http.post(
        "/v1/research", json={"question": RESEARCH_Q, "web": False, "confirm": True}))),
    ("POST", "/v1/research/{run_id}/start"): ("proposed", lambda s, c: _http(c.http.post(
        f"/v1/research/{c.proposed.pop()}/start", json={}))),
    ("POST", "/v1/research/{run_id}/resume"): ("failed", lambda s, c: _http(c.http.post(
        f"/v1/research/{c.failed.pop()}/resume"))),
    ("POST", "/v1/graph/ask"): ("", lambda s, c: _http(c.http.post(
        "/v1/graph/ask", json={"graph": GRAPH, "question": "Which papers are there?"}))),
    ("POST", "/v1/sources/{source_id}/settings"): ("", lambda s, c: _http(c.http.post(
        f"/v1/sources/{s.source}/settings"))),
}  # fmt: skip
MCP_RUNS: dict[str, tuple[str, EntryPoint]] = {
    "ask": ("", lambda s, c: _mcp(c, "ask", {"question": QUESTION})),
    "search": ("", lambda s, c: _mcp(c, "search", {"query": "glass recycling plant"})),
    "graph_ask": ("", lambda s, c: _mcp(c, "graph_ask", {"graph": GRAPH,
                                                         "question": "Which papers are there?"})),
    "research": ("", lambda s, c: _mcp(c, "research", {"question": RESEARCH_Q, "web": False})),
}  # fmt: skip


def route_table(app: Any) -> dict[tuple[str, str], Any]:
    """Every (method, path) the app routes (`ANY` for a mount or a method-less route), with its
    endpoint; included routers are walked, whatever the FastAPI version keeps them as."""
    out: dict[tuple[str, str], Any] = {}

    def walk(routes: list[Any], prefix: str) -> None:
        for r in routes:
            inner = getattr(r, "original_router", None)
            if inner is not None:
                walk(list(inner.routes), prefix + r.include_context.prefix)
                continue
            path = prefix + (getattr(r, "path", "") or "/")
            for method in sorted(set(getattr(r, "methods", None) or {"ANY"}) - {"HEAD"}):
                out[(method, path)] = getattr(r, "endpoint", None)

    walk(list(app.routes), "")
    return out


def _starts_runs(endpoint: Any) -> list[str]:
    try:
        return RUN_MARKERS.findall(inspect.getsource(endpoint))
    except (TypeError, OSError):
        return []


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    model = HeldModel()
    ws = Workspace.open(tmp_path / "ws", overrides={
        **FAST, "models": {**FAST["models"], **NO_LLM, "rerank": {"url": model.url}},
        "retrieval": {"rerank": True},
        "research": {"select": "rules", "writer": "extractive"},
        "server": LIMITS,
    })  # fmt: skip
    (tmp_path / "digest.md").write_text(DIGEST, encoding="utf-8")
    [done] = ws.ingest([tmp_path / "digest.md"]).results
    assert done.source is not None
    g = library_graph(ws.store, None)
    ws.graph_catalog().create(g.spec(GRAPH), g.nodes, g.rels, replace=True)
    srv = LiveServer(ws, ServerDeps(use_models=False))
    mount_mcp(srv.app, ws)
    with srv:
        yield Site(srv, ws, model, done.source.id)
    model.free.set()
    model.stop()
    ws.close()


async def test_every_route_and_tool_is_classified(tmp_path: Path) -> None:
    """The rule itself, without starting a server: a route or tool that is neither tried nor
    exempt (with a reason) fails here first."""
    from footnote.mcp.server import build_server

    ws = Workspace.open(tmp_path / "ws", overrides=FAST)
    srv = LiveServer(ws, ServerDeps(use_models=False))
    mount_mcp(srv.app, ws)
    tools = {t.name for t in await build_server(lambda _ctx: None).list_tools()}  # type: ignore[arg-type, return-value]
    _check_classified(srv.app, tools)
    ws.close()


def _check_classified(app: Any, tools: set[str]) -> None:
    routes = route_table(app)
    tried = set(HTTP_RUNS) | {("MCP", t) for t in MCP_RUNS}
    unclassified = [k for k in routes if k[0] != "GET" and k not in tried and k not in EXEMPT]
    unclassified += [("MCP", t) for t in sorted(tools) if ("MCP", t) not in tried | set(EXEMPT)]
    assert not unclassified, f"classify (quota test or exempt with a reason): {unclassified}"
    assert all(len(reason) > 10 for reason in EXEMPT.values())
    stale = [k for k in [*HTTP_RUNS, *EXEMPT] if k[0] != "MCP" and k not in routes]
    stale += [k for k in EXEMPT if k[0] == "MCP" and k[1] not in tools]
    stale += [("MCP", t) for t in MCP_RUNS if t not in tools]
    assert not stale, f"no longer routed: {stale}"
    hidden = {k: m for k, ep in routes.items()
              if (k[0] == "GET" or k in EXEMPT) and (m := _starts_runs(ep))}  # fmt: skip
    assert not hidden, f"classified as no run, but its code starts one: {hidden}"


async def test_every_run_entry_point_passes_every_run_quota(site: Site) -> None:
    async with site.stack:  # the clients close in this task
        await _every_limit(site)


async def _every_limit(site: Site) -> None:
    tools = {t.name for t in (await (await site.caller()).mcp.list_tools()).tools}
    _check_classified(site.srv.app, tools)
    entries = {f"{m} {p}": (True, v) for (m, p), v in HTTP_RUNS.items()}
    entries |= {f"MCP {t}": (False, v) for t, v in MCP_RUNS.items()}
    lost: list[str] = []

    def note(name: str, limit: str, got: Outcome) -> None:
        quota, words = REFUSAL[limit]
        admitted, said = got
        print(f"{time.monotonic() - T0:7.1f}s {name} {limit}: {said[:60]}")
        ok = not admitted and (said == quota or words in said)
        T.add(tried=1, blocked=int(ok), lost=int(not ok))
        if not ok:
            lost.append(f"{name} over the {limit} limit: admitted={admitted} {said[:300]}")

    async def other_run(c: Caller, http: bool) -> Outcome:
        """A run on the surface E is not on (it ends before this returns)."""
        if http:  # E is an HTTP route: the other run is an MCP search
            return await _mcp(c, "search", {"query": "glass recycling plant"})
        return await _http(c.http.post("/v1/chat/completions", json={
            "model": "footnote", "messages": [{"role": "user", "content": QUESTION}]}))  # fmt: skip

    async def hold_other(c: Caller, http: bool) -> asyncio.Task[Any] | None:
        """Start a run of `c` on the surface E is not on and leave it held at the model."""
        nonce = f"{QUESTION} (probe {c.user})"  # a new prompt: never a cached answer
        if http:
            return asyncio.create_task(_mcp(c, "search", {"query": nonce}))
        c.session = c.session or (await c.http.post("/v1/sessions", json={})).json()["id"]
        r = await c.http.post(f"/v1/sessions/{c.session}/messages", json={"content": nonce})
        assert r.status_code == 202, r.text
        return None

    for name, (http, (prep, call)) in sorted(entries.items()):
        # per minute: E, a run on the other surface, E again
        c = await site.caller(prep)
        first = await call(site, c)
        assert first[0], f"{name} was refused under every limit: {first[1]}"
        await site.idle(c.user)
        assert (await other_run(c, http))[0]
        await site.idle(c.user)
        note(name, "per minute", await call(site, c))
        await site.idle()
        # in flight: the user's run on the other surface is held, then E
        c = await site.caller(prep)
        async with site.holding():
            task = await hold_other(c, http)
            await site.held(1)
            note(name, "in flight", await _within(call(site, c)))
        if task is not None:
            assert (await task)[0]
        # in total: two other users' runs are held, one on each surface, then E
        x, y, c = await site.caller(), await site.caller(), await site.caller(prep)
        async with site.holding():
            held = await hold_other(x, False), await hold_other(y, True)
            await site.held(2)
            note(name, "in total", await _within(call(site, c)))
        for t in held:
            if t is not None:
                assert (await t)[0]
    print(f"\nquotas: {len(entries)} run entry points x 3 limits; lost: {lost}")
    assert not lost, lost
