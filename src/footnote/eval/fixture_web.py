"""The fixture web on loopback: a real HTTP server for the research dev set's fictional sites.

Pages are served by Host (`Host: vepd.example:PORT`, `GET /notices/…`) or by path prefix
(`GET /vepd/notices/…` on 127.0.0.1). The same server speaks two search APIs over the canned
search index (`datasets/research/web/search_index.json`, matched as its README says): SearXNG
JSON at `/search?q=…&format=json` and the Brave Search API at `/res/v1/web/search?q=…`. Result
URLs keep their fictional hosts with this server's port, so a fetcher told to resolve
`*.example` to 127.0.0.1 reaches this server through its ordinary egress checks.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

DATA = Path(str(resources.files("footnote.eval").joinpath("datasets/research/web")))


def manifest() -> list[dict[str, Any]]:
    """The fixture web's pages (`web/manifest.json`)."""
    data: list[dict[str, Any]] = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    return data


def search_index() -> list[dict[str, Any]]:
    """The canned search results (`web/search_index.json`)."""
    data: list[dict[str, Any]] = json.loads(
        (DATA / "search_index.json").read_text(encoding="utf-8")
    )
    return data


def fixture_search(
    query: str, pages: list[dict[str, Any]], index: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Manifest entries for `query`: the canned entry whose terms all occur (most terms, then
    first), else a keyword ranking over title + summary + topics (ties in manifest order)."""
    q = query.lower()
    by_path = {p["path"]: p for p in pages}
    matches = [e for e in index if all(t.lower() in q for t in e["query_terms"])]
    if matches:
        best = max(len(e["query_terms"]) for e in matches)
        entry = next(e for e in matches if len(e["query_terms"]) == best)
        return [by_path[p] for p in entry["results"] if p in by_path]
    words = [w for w in q.replace("?", " ").split() if len(w) > 2]
    scored = []
    for i, p in enumerate(pages):
        hay = " ".join([p["title"], p["summary"], *p["topics"]]).lower()
        n = sum(1 for w in words if w in hay)
        if n:
            scored.append((-n, i, p))
    return [p for _n, _i, p in sorted(scored)][:8]


class FixtureWeb:
    """The fixture web (and its search APIs) on a free loopback port, in a thread."""

    def __init__(self, root: Path = DATA, host: str = "127.0.0.1") -> None:
        self.root = root
        self.pages = manifest()
        self.index = search_index()
        self.requests: list[tuple[str, str]] = []
        """(Host header, path) of every request served, for tests and the injection suites."""
        handler = self._handler()
        self.server = ThreadingHTTPServer((host, 0), handler)
        self.port = int(self.server.server_address[1])
        self.base = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url_of(self, page: dict[str, Any]) -> str:
        """A page's URL on this server: its fictional host with this server's port."""
        parts = urlsplit(page["url"])
        return f"http://{parts.hostname}:{self.port}{parts.path}"

    def results(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """Search results as `{url, title, content, date}`."""
        return [
            {"url": self.url_of(p), "title": p["title"], "content": p["summary"],
             "date": p.get("published_at")}
            for p in fixture_search(query, self.pages, self.index)[:k]
        ]  # fmt: skip

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FixtureWeb:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _send(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                parts = urlsplit(self.path)
                web.requests.append((host, parts.path))
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                data: dict[str, Any]
                if host.endswith(".example"):
                    self._page(host.removesuffix(".example"), parts.path)
                elif parts.path == "/search":
                    data = {"query": params.get("q", ""), "results": [
                        {"url": r["url"], "title": r["title"], "content": r["content"],
                         "engine": "fixture", "publishedDate": r["date"]}
                        for r in web.results(params.get("q", ""))]}  # fmt: skip
                    self._send(200, json.dumps(data).encode(), "application/json")
                elif parts.path == "/res/v1/web/search":
                    if not self.headers.get("X-Subscription-Token"):
                        self._send(401, b'{"error": "missing token"}', "application/json")
                        return
                    k = int(params.get("count", "10"))
                    data = {"type": "search", "web": {"type": "search", "results": [
                        {"title": r["title"], "url": r["url"], "description": r["content"],
                         "page_age": r["date"]}
                        for r in web.results(params.get("q", ""), k)]}}  # fmt: skip
                    self._send(200, json.dumps(data).encode(), "application/json")
                else:
                    site, _, rest = parts.path.lstrip("/").partition("/")
                    self._page(site, "/" + rest)

            def _page(self, site: str, path: str) -> None:
                target = (web.root / site / path.lstrip("/")).resolve()
                if (
                    not site
                    or web.root.resolve() not in target.parents
                    or not target.is_file()
                    or target.suffix != ".html"
                ):
                    self._send(404, b"<h1>not found</h1>", "text/html")
                    return
                self._send(200, target.read_bytes(), "text/html; charset=utf-8")

        return Handler
