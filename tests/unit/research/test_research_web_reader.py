"""#32: "the web reader holds no library handle; a paywalled page records retrieval time and
fields for a manual check". A real HTTP server on loopback serves a search API and pages behind
a paywall, a login wall, a teaser, schema.org's paywall mark and an ordinary free page; the real
fetcher, a real SQLite store and the research pipeline read them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from footnote.config import IngestSettings, ResearchSettings
from footnote.ingest.web.search import SearxngSearch
from footnote.models.budget import Budget
from footnote.pipelines.research.sources import SourceLog, Sources, WebReader
from footnote.store.sqlite import SqliteResearchStore, SqliteStore
from footnote.workspace.research import fetcher

pytestmark = pytest.mark.integration

TEASER = (
    "<html><head><title>Battery Insider: Veldmark recycling</title></head><body><article>"
    "<h1>Veldmark recycling grows</h1><p>The Veldmark battery recycling market was worth USD 1.2 "
    "billion in 2023, the report says.</p><p>Subscribe to continue reading this article.</p>"
    "</article></body></html>"
)
JSONLD = (
    "<html><head><title>Ledger</title><script type='application/ld+json'>"
    '{"@type": "NewsArticle", "isAccessibleForFree": false}</script></head><body><p>Battery '
    "recycling in Veldmark reached 41,200 tonnes in 2023.</p></body></html>"
)
FREE = (
    "<html><head><title>Free wire</title></head><body><p>Battery recycling in Veldmark grew 12% "
    "in 2023.</p><p>Subscribe to our newsletter. Already a subscriber? Log in.</p>"
    "<p>Only operators authorised to treat waste batteries may accept them.</p></body></html>"
)
PAGES: dict[str, tuple[int, str]] = {
    "/walled": (402, "<html><body><form>Pay to read battery recycling news</form></body></html>"),
    "/login": (403, "<html><body><form>Please sign in</form></body></html>"),
    "/teaser": (200, TEASER),
    "/jsonld": (200, JSONLD),
    "/free": (200, FREE),
    "/gone": (404, "<html><body>Not found</body></html>"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/search":
            port = self.server.server_address[1]
            results = [{"url": f"http://pay.example:{port}{p}", "title": p, "content": ""}
                       for p in PAGES]  # fmt: skip
            status, body, kind = 200, json.dumps({"results": results}), "application/json"
        else:
            status, body = PAGES.get(path, (404, "no"))
            kind = "text/html; charset=utf-8"
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://pay.example:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _settings(base: str) -> ResearchSettings:
    return ResearchSettings(
        search_url=f"searxng+{base}", allowed_domains=("example",), allow_loopback=True,
        resolve={"*.example": "127.0.0.1"}, results_per_search=10, fetches_per_search=10,
    )  # fmt: skip


@pytest.fixture()
def sources(tmp_path: Path, server: str) -> Iterator[Sources]:
    settings = _settings(server)
    store = SqliteStore(tmp_path / "s.db")
    f = fetcher(settings)
    assert f is not None
    yield Sources(store=store, research=SqliteResearchStore(store), settings=settings,
                  ingest=IngestSettings(), library=lambda q, k, flt: [],
                  web=SearxngSearch(server.replace("pay.example", "127.0.0.1")),
                  fetcher=f)  # fmt: skip
    f.close()
    store.close()


def test_paywalled_pages_are_kept_with_when_and_what_to_check(
    sources: Sources, server: str
) -> None:
    log = SourceLog()
    passages = sources.search_web("battery recycling", Budget(max_fetches=20), log)
    walled = {p["url"].removeprefix(server): p for p in log.paywalled}
    assert set(walled) == {"/walled", "/login", "/teaser", "/jsonld"}  # not /free, not /gone
    assert walled["/walled"]["status"] == "402" and walled["/login"]["status"] == "403"
    assert "HTTP 402" in walled["/walled"]["check"] and "nothing from it is cited" in walled[
        "/walled"]["check"]  # fmt: skip
    assert "Subscribe to continue reading" in walled["/teaser"]["check"]
    assert "isAccessibleForFree" in walled["/jsonld"]["check"]
    assert any("/gone: HTTP 404" in f for f in log.failed)
    # a refused page gives nothing to cite; a teaser's visible text stays evidence, marked
    quoted = {p.url.removeprefix(server) for p in passages}
    assert quoted == {"/teaser", "/jsonld", "/free"}
    for page in walled.values():
        assert page["retrieved_at"].endswith("Z") and page["retrieved_at"][:2] == "20"
        snap = next(s for u, s in sources._fetched.items() if u == page["url"])
        assert snap is not None
        kept = sources.research.get_snapshot(snap.id)
        assert kept is not None and kept.paywalled and kept.fetched_at == page["retrieved_at"]
        assert kept.manual_check == page["check"] and kept.final_url == page["url"]
        assert sources.research.snapshot_raw(snap.id)  # the page's bytes, for the record
    free = next(s for u, s in sources._fetched.items() if u.endswith("/free"))
    assert free is not None and not free.paywalled and not free.manual_check
    # another sub-question meeting the same page (fetched once) lists it too
    again = SourceLog()
    sources.search_web("battery recycling", Budget(max_fetches=20), again)
    assert again.fetches == 0 and len(again.paywalled) == 4


def _reachable(root: object, depth: int = 8) -> list[object]:
    """Every object reachable from `root` through attributes, containers, closures and bound
    methods (what code holding `root` could get at)."""
    seen: set[int] = set()
    out: list[object] = []
    frontier = [root]
    for _ in range(depth):
        nxt: list[object] = []
        for obj in frontier:
            if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None))):
                continue
            seen.add(id(obj))
            out.append(obj)
            if isinstance(obj, dict):
                nxt += [*obj.keys(), *obj.values()]
            elif isinstance(obj, (list, tuple, set, frozenset)):
                nxt += list(obj)
            if hasattr(obj, "__self__"):
                nxt.append(obj.__self__)
            for cell in getattr(obj, "__closure__", None) or ():
                nxt.append(cell.cell_contents)
            if hasattr(obj, "__dict__") and not isinstance(obj, type):
                nxt += list(vars(obj).values())
            for slot in getattr(type(obj), "__slots__", ()):
                if isinstance(slot, str) and hasattr(obj, slot):
                    nxt.append(getattr(obj, slot))
        frontier = nxt
    return out


def _internal(objs: list[object]) -> list[str]:
    """The library-side objects among them: stores, the workspace, the index, a library search."""
    names = []
    for obj in objs:
        module = type(obj).__module__
        if module.startswith(("footnote.store", "footnote.workspace", "footnote.index")):
            names.append(type(obj).__qualname__)
        elif callable(obj) and "library" in getattr(obj, "__qualname__", ""):
            names.append(obj.__qualname__)
    return names


def test_the_web_reader_holds_no_library_handle(sources: Sources) -> None:
    # the check can see a handle: from the executor, the store and the library are in reach
    assert {"SqliteStore", "SqliteResearchStore"} <= set(_internal(_reachable(sources)))
    reader = sources.web_reader
    assert isinstance(reader, WebReader) and reader.fetcher is sources.fetcher
    assert _internal(_reachable(reader)) == []
    # and it cannot be given one: its constructor takes only the outside-facing parts
    with pytest.raises(TypeError):
        WebReader(web=None, fetcher=None, papers=(), ingest=IngestSettings(),  # type: ignore[call-arg]
                  results_per_search=5, store=sources.store)  # fmt: skip


def test_the_checklist_lists_the_paywalled_pages(tmp_path: Path, server: str) -> None:
    import asyncio

    from footnote.types import Brief
    from footnote.workspace import Workspace
    from footnote.workspace.research import confirm_outline, run_research, start_research

    settings = _settings(server).model_dump()
    settings["search_url"] = f"searxng+{server.replace('pay.example', '127.0.0.1')}"
    overrides = {"research": {**settings, "writer": "extractive", "select": "rules"},
                 "models": {"judge": {"url": ""}, "compose": {"url": ""},
                            "understand": {"url": ""}}}  # fmt: skip
    with Workspace.open(tmp_path / "ws", overrides=overrides) as ws:
        run_id, _ = start_research(ws, "How large is Veldmark's battery recycling market?",
                                   template="market_size", budget_tokens=5000)  # fmt: skip
        confirm_outline(ws, run_id, {"items": [{"id": "size", "title": "Market size",
                                                "asks": "How large is the market?"}]})  # fmt: skip

        async def go() -> Brief | None:
            brief = None
            async for event in run_research(ws, run_id):
                brief = getattr(event, "brief", brief)
            return brief

        brief = asyncio.run(go())
    assert brief is not None
    (item,) = brief.checklist
    by_hand = [r for r in item.reasons if r.startswith("check by hand:")]
    assert len(by_hand) == 4
    walled = next(r for r in by_hand if "/walled" in r)
    assert "(paywalled; retrieved 20" in walled and "HTTP 402" in walled
    # nothing is cited from the page that refused access
    assert all(not c.url.endswith(("/walled", "/login")) for c in brief.cards)
