"""Suite 1, cross-user, the MCP surface (issue #31, Definition of done): the attacker's MCP
client lists the tools and resource templates and calls every one with the victim's real ids
and library graph names. The list is the rule: a tool or resource template without an entry in
`TOOL_CALLS` / `RESOURCE_READS` fails the suite, so a new one cannot ship without its
authorisation test. Counted like `test_cross_user`: every call (tried), those refused or
answered without the victim's data (blocked), any of her text, ids or graph rows seen (lost)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from suite_support import FAST, LiveServer, tally

from footnote.mcp import mount_mcp
from footnote.pipelines.graph.sources import library_graph
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
CANARY = "ZEBRAQUARTZ"
PRIVATE = f"# Acquisition plan\n\n## Terms\n\nThe {CANARY} acquisition closes at 4417 million.\n"
Ids = dict[str, Any]
TOOL_CALLS: dict[str, Callable[[Ids], list[dict[str, Any]]]] = {
    "ask": lambda ids: [{"question": "What is the acquisition price in the plan?"},
                        {"question": "What does the plan say?", "sources": [ids["source"]]}],
    "search": lambda ids: [{"query": "acquisition closes million", "k": 50},
                           {"query": "acquisition", "sources": [ids["source"]]}],
    "read_block": lambda ids: [{"block_id": b} for b in ids["blocks"]],
    "read_section": lambda ids: [{"source": ids["source"], "section": "Terms"},
                                 {"source": ids["source"][:6], "section": "Terms"}],
    "graph_ask": lambda ids: [{"graph": g, "question": "Which papers are there?"}
                              for g in ids["graphs"]],
    "research": lambda ids: [{"question": "What is the acquisition price in the plan?",
                              "web": False, "template": "literature_review"}],
}  # fmt: skip
RESOURCE_READS: dict[str, Callable[[Ids], list[str]]] = {
    "footnote://sources{?kind}": lambda ids: ["footnote://sources"],
    "footnote://sources/{source_id}": lambda ids: [f"footnote://sources/{ids['source']}"],
    "footnote://blocks/{block_id}": lambda ids: [f"footnote://blocks/{b}" for b in ids["blocks"]],
}
RESEARCH = {"select": "rules", "writer": "extractive"}


def _client(url: str, key: str) -> Client:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(120.0)
    )
    return Client(streamable_http_client(url + "/mcp", http_client=http))


async def test_no_mcp_tool_or_resource_reaches_another_users_data(tmp_path: Path) -> None:
    t = tally("cross-user")
    ws = Workspace.open(tmp_path / "ws", overrides={**FAST, "research": RESEARCH})
    plan = tmp_path / "plan.md"
    plan.write_text(PRIVATE, encoding="utf-8")
    [done] = ws.ingest([plan], owner="alice", acl_groups=["user:alice"]).results
    assert done.source is not None
    keys = {u: ws.auth.add_key(u, g) for u, g in (("alice", ("team-a",)), ("bob", ("team-b",)))}
    mine = library_graph(ws.store, ("user:alice",))  # alice's library graph and the admin's
    alice_graph = f"library-alice-{hashlib.sha256(b'alice').hexdigest()[:6]}"
    everyone = library_graph(ws.store, None)
    catalog = ws.graph_catalog()
    for name, g in ((alice_graph, mine), ("library", everyone)):
        catalog.create(g.spec(name), g.nodes, g.rels, replace=True)
    document = ws.store.get_document(done.source.id)
    assert document is not None
    ids: Ids = {
        "source": done.source.id,
        "blocks": [b.id for b in document.blocks],
        "graphs": [alice_graph, "library"],
    }
    hidden = [CANARY, "4417", *ids["blocks"], done.source.id]
    leaks: list[str] = []
    served = LiveServer(ws, ServerDeps(use_models=False))
    mount_mcp(served.app, ws)  # before the server starts: its session manager runs with it
    with served as srv:
        async with _client(srv.url, keys["bob"]) as bob:
            tools = {x.name for x in (await bob.list_tools()).tools}
            templates = (await bob.list_resource_templates()).resource_templates
            fixed = (await bob.list_resources()).resources
            listed = {r.uri_template for r in templates} | {str(r.uri) for r in fixed}
            assert tools == set(TOOL_CALLS), f"add cross-user calls for: {tools ^ set(TOOL_CALLS)}"
            assert listed <= set(RESOURCE_READS), f"add reads for: {listed - set(RESOURCE_READS)}"
            for tool in sorted(tools):
                for args in TOOL_CALLS[tool](ids):
                    out = await bob.call_tool(tool, args)
                    text = json.dumps([c.model_dump() for c in out.content])
                    text += json.dumps(out.structured_content or {})
                    echo = json.dumps(args)  # an error may name what the attacker sent
                    found = [h for h in hidden if h in text and h not in echo]
                    if found:
                        leaks.append(f"{tool}({args}): {found}")
                    t.add(tried=1, blocked=int(not found), lost=int(bool(found)))
            for template in sorted(listed):
                for uri in RESOURCE_READS[template](ids):
                    try:
                        got = await bob.read_resource(uri)
                        text = json.dumps([c.model_dump() for c in got.contents])
                    except Exception as exc:  # refused: an MCP error, like a missing one
                        text = str(exc)
                    found = [h for h in hidden if h in text and h not in uri]
                    if found:
                        leaks.append(f"{uri}: {found}")
                    t.add(tried=1, blocked=int(not found), lost=int(bool(found)))
        async with _client(srv.url, keys["alice"]) as alice:  # the calls can reach her data
            own = await alice.call_tool(
                "read_section", {"source": ids["source"], "section": "Terms"}
            )
            assert CANARY in json.dumps(own.structured_content)
    ws.close()
    assert not leaks, leaks
