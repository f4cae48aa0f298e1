"""Suite 1, cross-user: two attackers (another team's user, a user with no groups) try every
route of the OpenAPI document and every agent tool with the victim's real ids and with guessed
ones, against a real server on loopback (real ingestion, real extractive ask). Counted: every
request or tool call (tried), those refused or answered without the victim's data (blocked),
and any read of the victim's data or change to it (lost: must be 0)."""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

import httpx
import pytest
from suite_support import LiveServer, tally

from footnote.agent.library_tools import LibraryContext, library_tools
from footnote.errors import ToolRetry
from footnote.events import Final
from footnote.serialize import answer_to_dict
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # CI runs them (./scripts/test)
CANARY = "ZEBRAQUARTZ"
PRIVATE = (f"# Acquisition plan\n\n## Terms\n\nThe {CANARY} acquisition closes at 4417 million.\n\n"
           "| Item | Value |\n|---|---|\n| price | 4417 |\n| date | March |\n").encode()  # fmt: skip
TEAM = f"# Team notes\n\n## Margins\n\nThe {CANARY} margin target is 38 percent.\n".encode()


def _wait(client: httpx.Client, url: str, key: str = "status", done: tuple[str, ...] = ()) -> Any:
    for _ in range(600):
        got = client.get(url).json()
        if got.get(key) not in ("processing", "running") and (not done or got.get(key) in done):
            return got
        time.sleep(0.05)
    raise AssertionError(f"{url} did not settle")


def _victim(client: httpx.Client) -> dict[str, Any]:
    """Alice's library, conversation, run and feedback; returns every id and secret."""
    ids: dict[str, Any] = {}
    up = client.post("/v1/sources", files={"file": ("alice-private-plan.md", PRIVATE)},
                     data={"acl_groups": "user:alice"}).json()  # fmt: skip
    team = client.post("/v1/sources", files={"file": ("alice-team-notes.md", TEAM)}).json()
    for key, sid in (("private", up["id"]), ("team", team["id"])):
        assert _wait(client, f"/v1/sources/{sid}")["status"] == "ready"
        ids[key] = sid
    doc = client.get(f"/v1/sources/{ids['private']}/document").json()
    ids["blocks"] = [b["id"] for b in doc["blocks"]]
    table = next(b["id"] for b in doc["blocks"] if b["kind"] == "table")
    ids["cell"] = f"{table}#r1c1"
    ids["table"] = table
    session = client.post("/v1/sessions", json={"title": "alice's deal"}).json()
    ids["session"] = session["id"]
    turn = client.post(f"/v1/sessions/{session['id']}/messages",
                       json={"content": f"When does the {CANARY} acquisition close?"}).json()  # fmt: skip
    ids["run"], ids["messages"] = turn["run_id"], [turn["message"]["id"], turn["reply"]["id"]]
    _wait(client, f"/v1/runs/{turn['run_id']}")
    trace = client.get(f"/v1/runs/{turn['run_id']}/trace").json()
    ids["child_runs"] = [r["id"] for r in trace["runs"][1:]]
    fb = client.post("/v1/feedback", json={"rating": "up", "message_id": turn["reply"]["id"]})
    assert fb.status_code == 201
    ids["feedback"] = fb.json()["id"]
    return ids


def _secrets(ids: dict[str, Any]) -> list[str]:
    out = [CANARY, "alice-private-plan", "alice-team-notes", "alice's deal"]
    out += [ids["private"], ids["team"], ids["private"][:8], ids["team"][:8], ids["session"],
            ids["run"], ids["feedback"], *ids["messages"], *ids["child_runs"]]  # fmt: skip
    return out


def _guesses(ids: dict[str, Any]) -> dict[str, list[str]]:
    hexes = secrets.token_hex
    return {
        "source_id": [
            ids["private"],
            ids["team"],
            ids["private"][:6],
            ids["private"][:1],
            ids["team"][:2],
            "~nobody",
            "%2Fetc%2Fpasswd",
            hexes(6),
            "..%2F..",
            ids["private"].upper(),
        ],
        "evidence_id": [
            *ids["blocks"][:4],
            ids["cell"],
            f"{ids['private'][:8]}-p1-{hexes(3)}",
            f"{hexes(4)}-p1-{hexes(3)}#r0c0",
        ],
        "session_id": [ids["session"], f"ses_{hexes(12)}", ids["session"][:10]],
        "run_id": [ids["run"], *ids["child_runs"], f"run_{hexes(12)}", f"{ids['run']}.ask9"],
    }


def _attack_bodies(ids: dict[str, Any], own_session: str) -> dict[tuple[str, str], list[Any]]:
    return {
        ("POST", "/v1/sessions"): [{"title": "mine"}],
        ("PATCH", "/v1/sessions/{session_id}"): [{"title": "pwned"}],
        ("POST", "/v1/sessions/{session_id}/messages"): [
            {"content": f"What is the {CANARY} price?", "sources": [s]}
            for s in (ids["private"], ids["team"], ids["private"][:6])
        ]
        + [{"content": f"What is the {CANARY} acquisition price?"}],
        ("POST", "/v1/chat/completions"): [
            {
                "model": "footnote",
                "messages": [
                    {"role": "user", "content": f"What is the {CANARY} acquisition price?"}
                ],
            },
            {
                "model": "footnote",
                "stream": True,
                "messages": [{"role": "user", "content": f"What is the {CANARY} margin target?"}],
            },
        ],
        ("POST", "/v1/compute"): [
            {"code": "result = x * 1", "inputs": {"x": cell}}
            for cell in (ids["cell"], f"{ids['table']}#r1c0", ids["blocks"][0])
        ],
        ("POST", "/v1/feedback"): [{"rating": "down", "message_id": m} for m in ids["messages"]]
        + [{"rating": "down", "run_id": r} for r in [ids["run"], *ids["child_runs"]]],
    }


def test_no_route_and_no_tool_reads_or_writes_another_users_data(fast_ws: Workspace) -> None:
    t = tally("cross-user")
    state_keys: dict[str, str] = {}
    with LiveServer(fast_ws, ServerDeps(use_models=False)) as srv:
        auth = srv.app.state.footnote.auth
        for user, groups in (("alice", ("team-a",)), ("bob", ("team-b",)), ("mallory", ())):
            state_keys[user] = auth.add_key(user, groups)
        alice = httpx.Client(base_url=srv.url, headers={"X-API-Key": state_keys["alice"]},
                             timeout=30)  # fmt: skip
        ids = _victim(alice)
        before = _alice_state(alice, ids)
        hidden = _secrets(ids)
        spec = alice.get("/openapi.json").json()
        operations = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
        covered: set[tuple[str, str]] = set()
        leaks: list[str] = []
        for attacker in ("bob", "mallory"):
            c = httpx.Client(base_url=srv.url, headers={"X-API-Key": state_keys[attacker]},
                             timeout=30)  # fmt: skip
            own = c.post("/v1/sessions", json={}).json()["id"]
            bodies = _attack_bodies(ids, own)
            for method, path in sorted(operations):
                covered.add((method, path))
                for url, body in _requests(method, path, ids, own, bodies):
                    resp = _send(c, method, url, body)
                    wrote = _wrote(method, url, body, resp, ids)
                    if resp.status_code == 202 and "run_id" in resp.text:  # a run of its own
                        run = resp.json()["run_id"]
                        _wait(c, f"/v1/runs/{run}")
                        trace = c.get(f"/v1/runs/{run}/trace")
                        _note(t, leaks, f"{attacker} {method} {url} {body} -> own run trace",
                              trace, hidden, False)  # fmt: skip
                    _note(t, leaks, f"{attacker} {method} {url} {body}", resp, hidden, wrote)
            _tools(
                fast_ws, t, leaks, attacker, auth.user_for_key(state_keys[attacker]), ids, hidden
            )
            _dedup(c, t, leaks, ids)
        after = _alice_state(alice, ids)
    changed = [k for k in before if before[k] != after[k]]
    t.add(lost=len(changed))
    assert covered == operations
    assert not leaks, leaks[:5]
    assert not changed, {k: (before[k], after[k]) for k in changed}


def _requests(method: str, path: str, ids: dict[str, Any], own: str,
              bodies: dict[tuple[str, str], list[Any]]) -> list[tuple[str, Any]]:  # fmt: skip
    guesses = _guesses(ids)
    params = [p for p in guesses if "{" + p + "}" in path]
    urls = [path]
    for p in params:
        urls = [u.replace("{" + p + "}", v) for u in urls for v in guesses[p]]
    if (method, path) == ("POST", "/v1/sessions/{session_id}/messages"):
        urls = [*urls, path.replace("{session_id}", own)]  # the attacker's own session, too
    if (method, path) == ("POST", "/v1/sources"):
        return [(path, {"files": {"file": ("probe.md", TEAM + b" probe")},
                        "data": {"acl_groups": "team-a"}})]  # fmt: skip
    body_list = bodies.get((method, path), [None])
    if (method, path) == ("GET", "/v1/runs/{run_id}/events"):
        return [(u + "?after=0", None) for u in urls]
    return [(u, b) for u in urls for b in body_list]


def _send(c: httpx.Client, method: str, url: str, body: Any) -> httpx.Response:
    if isinstance(body, dict) and "files" in body:
        return c.request(method, url, files=body["files"], data=body["data"])
    return c.request(method, url, json=body)


def _wrote(method: str, url: str, body: Any, resp: httpx.Response, ids: dict[str, Any]) -> bool:
    """Whether a state-changing request touching the victim (or her groups) succeeded."""
    if method == "GET" or resp.status_code >= 400:
        return False
    if url == "/v1/sources":  # an upload shared into a group the attacker is not in
        return True
    victim = [ids["private"], ids["team"], ids["session"], ids["run"], *ids["messages"],
              *ids["child_runs"], ids["private"][:6]]  # fmt: skip
    text = url + json.dumps(body if not isinstance(body, dict) or "files" not in body else "")
    return any(v in text for v in victim)


def _note(t: Any, leaks: list[str], what: str, resp: httpx.Response, hidden: list[str],
          wrote: bool) -> None:  # fmt: skip
    sent = what  # the request itself (an echo of the attacker's own input is no leak)
    found = [s for s in hidden if s in resp.text and s not in sent]
    if "/v1/compute" in what and "4417" in resp.text:  # the value of the victim's cell
        found.append("4417")
    if re.search(r"matches \d+ sources|has not been ingested", resp.text):  # counts, paths
        found.append("existence")
    if found or wrote:
        leaks.append(f"{what}: {resp.status_code} {found} wrote={wrote}")
        t.add(tried=1, lost=1)
    else:
        t.add(tried=1, blocked=1)


def _tools(ws: Workspace, t: Any, leaks: list[str], name: str, user: Any, ids: dict[str, Any],
           hidden: list[str]) -> None:  # fmt: skip
    """Every agent tool, with the victim's ids, as the attacker's agent would call them."""
    import asyncio

    def ask_sync(question: str) -> dict[str, Any]:
        async def run() -> dict[str, Any]:
            out: dict[str, Any] = {}
            async for e in ws.ask(question, user_groups=user.groups, user_id=user.id):
                if isinstance(e, Final):
                    out = answer_to_dict(e.answer)
            return out

        return asyncio.run(run())

    def search(q: str, k: int, f: Any) -> list[Any]:
        return ws.searcher.search(q, k=k, filters=f)

    for scope in ((), (ids["private"],), (ids["team"], ids["private"])):
        ctx = LibraryContext(ws.store, search, ask_sync, user.groups, scope)
        tools = library_tools(ctx, cache_ttl_s=0)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("list_sources", {}),
            ("search_library", {"query": f"{CANARY} acquisition price", "k": 10}),
            ("answer_from_library", {"question": f"What is the {CANARY} acquisition price?"}),
        ]
        for sid in (ids["private"], ids["team"], ids["private"][:6]):
            calls += [("search_library", {"query": CANARY, "source_id": sid}),
                      ("read_section", {"source_id": sid, "section": "Terms"})]  # fmt: skip
        for bid in [*ids["blocks"], ids["cell"], ids["table"]]:
            calls += [("read_block", {"block_id": bid, "neighbours": 3}),
                      ("get_table", {"block_id": bid})]  # fmt: skip
        for tool, args in calls:
            try:
                out = tools.call(tool, args)
            except ToolRetry:
                t.add(tried=1, blocked=1)
                continue
            found = [s for s in hidden if s in out] + [s for s in ctx.seen if s in ids["blocks"]]
            if found:
                leaks.append(f"{name} tool {tool}({json.dumps(args)}) scope={scope}: {found}")
                t.add(tried=1, lost=1)
            else:
                t.add(tried=1, blocked=1)


def _dedup(c: httpx.Client, t: Any, leaks: list[str], ids: dict[str, Any]) -> None:
    """The attacker uploads the victim's exact bytes: a record of their own, nothing of hers."""
    for body, name in ((PRIVATE, "alice-private-plan.md"), (TEAM, "alice-team-notes.md")):
        up = c.post("/v1/sources", files={"file": (name, body)}).json()
        got = _wait(c, f"/v1/sources/{up['id']}")
        mine = {s["id"] for s in c.get("/v1/sources").json()}
        bad = {ids["private"], ids["team"]} & ({up["id"], got.get("id")} | mine)
        shared = set(got.get("acl_groups", [])) & {"team-a", "user:alice"}
        t.add(tried=1, lost=int(bool(bad or shared)), blocked=int(not (bad or shared)))
        if bad or shared:
            leaks.append(f"dedup of {name}: {bad or shared}")


def _alice_state(alice: httpx.Client, ids: dict[str, Any]) -> dict[str, Any]:
    session = alice.get(f"/v1/sessions/{ids['session']}").json()
    trace = alice.get(f"/v1/runs/{ids['run']}/trace").json()
    return {
        "title": session.get("title"),
        "messages": session.get("messages"),
        "sources": sorted(s["id"] for s in alice.get("/v1/sources").json()),
        "feedback": len(trace.get("feedback", [])),
        "run": alice.get(f"/v1/runs/{ids['run']}").json().get("status"),
        "blocks": len(alice.get(f"/v1/sources/{ids['private']}/document").json()["blocks"]),
    }


def test_ask_does_not_reveal_how_many_sources_others_have(fast_ws: Workspace, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The ask run's status said 'searching N sources' with N counting everyone's sources."""
    t = tally("cross-user")
    for i in range(3):
        (tmp_path / f"s{i}.md").write_text(f"# Secret {i}\n\nConfidential figure {i}.\n")
        fast_ws.ingest([tmp_path / f"s{i}.md"], acl_groups=("team-a",))
    (tmp_path / "pub.md").write_text("# Public\n\nA public paper on glaciers.\n")
    fast_ws.ingest([tmp_path / "pub.md"])
    import asyncio

    async def statuses() -> list[str]:
        return [getattr(e, "message", "") async for e in
                fast_ws.ask("glaciers?", user_groups=("team-b", "user:bob"), user_id="bob")
                if e.type == "status"]  # fmt: skip

    got = asyncio.run(statuses())
    leaked = any("4 sources" in m for m in got)
    t.add(tried=1, blocked=int(not leaked), lost=int(leaked))
    assert any("searching 1 source" in m for m in got), got
