"""SSRF / egress suite (issue #17): every way a fetched page, a search result or a redirect can
point the research fetcher somewhere it must not go — loopback and private ranges, DNS names
that resolve there, `file:`/`gopher:` and other schemes, IPv6 and decimal/octal/hex IP
spellings, IPv4 embedded in IPv6 (mapped, 6to4, NAT64) — and every limit (size, declared size,
decompressed size, slow bodies, slow headers, silent servers, redirect loops).

All servers are real HTTP on loopback. The "internal" server stands for what an attacker wants
reached (a metadata endpoint, an admin port): any request it receives is a loss. The fetcher
is the real one, with the production policy except that the operator's fixed `resolve` table
pins the fixture hosts to 127.0.0.1 (`allow_loopback` covers pinned hosts only). Counts are
printed at the end of the run: tried / blocked / lost, and the suite asserts lost == 0."""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from suite_support import tally

from footnote.config import IngestSettings, ResearchSettings
from footnote.errors import EgressRefused, FetchError
from footnote.ingest.web.fetch import Fetcher, FetchPolicy
from footnote.models.budget import Budget
from footnote.pipelines.research.sources import SourceLog, Sources

pytestmark = pytest.mark.integration
T = tally("ssrf_egress")

Handler = Callable[[BaseHTTPRequestHandler], None]


class Server:
    """A loopback HTTP server with raw handlers per path; records every request it gets."""

    def __init__(self, routes: dict[str, Handler]) -> None:
        self.routes = routes
        self.hits: list[tuple[str, str]] = []
        server = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_a: Any) -> None:
                return

            def do_GET(self) -> None:
                server.hits.append((self.headers.get("Host", ""), self.path))
                route = server.routes.get(self.path.split("?")[0])
                if route is None:
                    send(self, 200, b"internal secret: CANARY-INTERNAL-7f3a", "text/plain")
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send(h: BaseHTTPRequestHandler, code: int, body: bytes, ctype: str,
         extra: dict[str, str] | None = None) -> None:  # fmt: skip
    h.send_response(code)
    h.send_header("Content-Type", ctype)
    for k, v in (extra or {}).items():
        h.send_header(k, v)
    if "Transfer-Encoding" not in (extra or {}):
        h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def redirect(location: str) -> Handler:
    return lambda h: send(h, 302, b"", "text/html", {"Location": location})


@pytest.fixture(scope="module")
def internal() -> Iterator[Server]:
    """What the attacker wants reached: every request here is a loss."""
    srv = Server({})
    yield srv
    srv.stop()


PAGE = b"<html><body><p>A public page about battery recycling.</p></body></html>"


def slow_body(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Content-Length", "4000")
    h.end_headers()
    for _ in range(400):
        h.wfile.write(b"y" * 10)
        h.wfile.flush()
        time.sleep(0.05)


def slow_headers(h: BaseHTTPRequestHandler) -> None:
    """Slowloris on the header block: one byte every 0.1 s, never more than the read timeout."""
    raw = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + b"X-Pad: " + b"p" * 200 + b"\r\n\r\nok"
    )
    for i in range(len(raw)):
        h.wfile.write(raw[i : i + 1])
        h.wfile.flush()
        time.sleep(0.1)


def silent(h: BaseHTTPRequestHandler) -> None:
    time.sleep(8)


def gzip_bomb(h: BaseHTTPRequestHandler) -> None:
    body = gzip.compress(b"z" * 3_000_000)
    send(h, 200, body, "text/plain", {"Content-Encoding": "gzip"})


def chunked_big(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b"c" * 65536
    for _ in range(40):
        h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
    h.wfile.write(b"0\r\n\r\n")


def lying_length(h: BaseHTTPRequestHandler) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Content-Length", "999999999")
    h.end_headers()
    h.wfile.write(b"small")


@pytest.fixture(scope="module")
def public(internal: Server) -> Iterator[Server]:
    """An allowed site (pinned to 127.0.0.1 by the operator's resolve table) that misbehaves."""
    ip = f"127.0.0.1:{internal.port}"
    routes: dict[str, Handler] = {
        "/page": lambda h: send(h, 200, PAGE, "text/html"),
        "/slow-body": slow_body,
        "/slow-headers": slow_headers,
        "/silent": silent,
        "/gzip-bomb": gzip_bomb,
        "/chunked-big": chunked_big,
        "/declared-big": lying_length,
        "/loop": redirect("/loop"),
    }
    targets = {
        "loopback": f"http://{ip}/latest/meta-data/",
        "localhost": f"http://localhost:{internal.port}/admin",
        "decimal": f"http://2130706433:{internal.port}/admin",
        "hex": f"http://0x7f000001:{internal.port}/admin",
        "octal": f"http://0177.0.0.1:{internal.port}/admin",
        "short": f"http://127.1:{internal.port}/admin",
        "ipv6-loopback": f"http://[::1]:{internal.port}/admin",
        "ipv6-mapped": f"http://[::ffff:127.0.0.1]:{internal.port}/admin",
        "ipv6-mapped-hex": f"http://[::ffff:7f00:1]:{internal.port}/admin",
        "6to4": f"http://[2002:7f00:1::]:{internal.port}/admin",
        "nat64": f"http://[64:ff9b::7f00:1]:{internal.port}/admin",
        "metadata": "http://169.254.169.254/latest/meta-data/iam/",
        "cgnat": "http://100.64.0.1/",
        "private10": "http://10.0.0.1/",
        "unspecified": f"http://0.0.0.0:{internal.port}/admin",
        "file": "file:///etc/passwd",
        "gopher": f"gopher://127.0.0.1:{internal.port}/_GET%20/admin",
        "dict": f"dict://127.0.0.1:{internal.port}/info",
        "ftp": "ftp://127.0.0.1/",
        "data": "data:text/plain,hello",
        "protocol-relative": f"//127.0.0.1:{internal.port}/admin",
        "credentials": f"http://public.example@127.0.0.1:{internal.port}/admin",
        "rebind-name": f"http://rebind.attacker.test:{internal.port}/admin",
        "private-name": f"http://intranet.attacker.test:{internal.port}/admin",
        "off-allowlist": f"http://attacker.test:{internal.port}/collect",
    }
    for name, target in targets.items():
        routes[f"/to/{name}"] = redirect(target)
    srv = Server(routes)
    srv.targets = targets  # type: ignore[attr-defined]
    yield srv
    srv.stop()


def attacker_dns(host: str, port: int) -> list[str]:
    """The attacker's DNS: names under attacker.test answer with internal addresses."""
    answers = {
        "rebind.attacker.test": ["93.184.216.34", "127.0.0.1"],  # one public, one loopback
        "intranet.attacker.test": ["10.20.30.40"],
        "attacker.test": ["127.0.0.1"],
        "meta.attacker.test": ["169.254.169.254"],
        "v6.attacker.test": ["::1"],
        "mapped.attacker.test": ["::ffff:127.0.0.1"],
    }
    if host in answers:
        return answers[host]
    from footnote.ingest.web.fetch import system_resolver

    return system_resolver(host, port)


def fetcher(allowed: tuple[str, ...], **kw: Any) -> Fetcher:
    policy = FetchPolicy(allowed_domains=allowed, allow_loopback=True,
                         resolve={"public.example": "127.0.0.1"}, timeout_s=kw.pop("timeout_s", 2.0),
                         max_bytes=kw.pop("max_bytes", 200_000), **kw)  # fmt: skip
    return Fetcher(policy, resolver=attacker_dns)


def attempt(f: Fetcher, url: str, internal: Server) -> tuple[bool, str]:
    """(blocked, why): blocked when the egress policy refused it (not a connection that happened
    to fail) and the internal server saw nothing."""
    before = len(internal.hits)
    why = ""
    try:
        f.fetch(url)
        refused = False
    except EgressRefused as exc:
        refused, why = True, str(exc)
    except FetchError as exc:
        refused, why = False, f"not refused by the policy: {exc}"
    reached = len(internal.hits) > before
    blocked = refused and not reached
    T.add(tried=1, blocked=int(blocked), lost=int(not blocked))
    return blocked, why


DIRECT = [
    "loopback", "localhost", "decimal", "hex", "octal", "short", "ipv6-loopback", "ipv6-mapped",
    "ipv6-mapped-hex", "6to4", "nat64", "metadata", "cgnat", "private10", "unspecified", "file",
    "gopher", "dict", "ftp", "data", "credentials", "rebind-name", "private-name",
]  # fmt: skip


@pytest.mark.parametrize("allowed", [("example",), ("*",)], ids=["allowlist", "any-public-host"])
@pytest.mark.parametrize("name", DIRECT)
def test_direct_urls_are_refused(name: str, allowed: tuple[str, ...], public: Server,
                                 internal: Server) -> None:  # fmt: skip
    url = public.targets[name]  # type: ignore[attr-defined]
    blocked, why = attempt(fetcher(allowed), url, internal)
    assert blocked, f"{url} was fetched ({why or 'no error'})"


@pytest.mark.parametrize("allowed", [("example",), ("*",)], ids=["allowlist", "any-public-host"])
@pytest.mark.parametrize("name", [*DIRECT, "protocol-relative", "off-allowlist"])
def test_redirects_are_checked_at_every_hop(name: str, allowed: tuple[str, ...], public: Server,
                                            internal: Server) -> None:  # fmt: skip
    url = f"http://public.example:{public.port}/to/{name}"
    blocked, why = attempt(fetcher(allowed), url, internal)
    assert blocked, f"the redirect to {name} was followed ({why or 'no error'})"


@pytest.mark.parametrize(
    "host", ["meta.attacker.test", "v6.attacker.test", "mapped.attacker.test", "attacker.test"]
)
def test_dns_names_resolving_inside_are_refused(host: str, internal: Server) -> None:
    blocked, why = attempt(fetcher(("*",)), f"http://{host}:{internal.port}/admin", internal)
    assert blocked and "forbidden address" in why


def test_the_allowed_page_is_fetched(public: Server) -> None:
    """The control: the same fetcher does fetch what it may (so the refusals above mean something)."""
    result = fetcher(("example",)).fetch(f"http://public.example:{public.port}/page")
    assert result.status == 200 and b"battery recycling" in result.body


@pytest.mark.parametrize(
    "path, why",
    [
        ("/declared-big", "over the limit"),
        ("/chunked-big", "over the limit"),
        ("/gzip-bomb", "over the limit"),
        ("/loop", "redirects"),
        ("/slow-body", "timed out"),
        ("/slow-headers", "timed out"),
        ("/silent", "timed out"),
    ],
)
def test_limits_are_enforced(path: str, why: str, public: Server) -> None:
    timeout = 1.0
    f = fetcher(("example",), timeout_s=timeout, max_bytes=100_000, max_redirects=3)
    start = time.monotonic()
    try:
        f.fetch(f"http://public.example:{public.port}{path}")
        enforced, message = False, "fetched"
    except (EgressRefused, FetchError) as exc:
        enforced, message = why in str(exc), str(exc)
    elapsed = time.monotonic() - start
    # a time limit that holds: the whole fetch, not each read, ends near `timeout_s`
    enforced = enforced and elapsed < timeout + 1.5
    T.add(tried=1, blocked=int(enforced), lost=int(not enforced))
    assert enforced, f"{path}: {message} after {elapsed:.1f} s"


def test_research_sources_refuse_and_log_every_bad_result(
    tmp_path: Any, public: Server, internal: Server
) -> None:
    """Through the research job's own path (search result URLs and scholarly PDF links): each
    forbidden URL is refused, logged, charged, and never reaches the internal server."""
    from footnote.ingest.web.search import WebResult
    from footnote.store.sqlite import SqliteResearchStore, SqliteStore

    urls = [public.targets[n] for n in DIRECT] + [  # type: ignore[attr-defined]
        f"http://public.example:{public.port}/to/{n}" for n in DIRECT
    ]

    class Results:
        name = "fixture"

        def __init__(self) -> None:
            self.batch: list[str] = []

        def search(self, query: str, k: int) -> list[WebResult]:
            return [WebResult(u, "t", "s", "fixture") for u in self.batch]

    store = SqliteStore(tmp_path / "s.db")
    results = Results()
    settings = ResearchSettings(results_per_search=20, fetches_per_search=20)
    sources = Sources(store=store, research=SqliteResearchStore(store), settings=settings,
                      ingest=IngestSettings(), web=results,  # type: ignore[arg-type]
                      fetcher=fetcher(("example",)))  # fmt: skip
    before = len(internal.hits)
    log = SourceLog()
    found = []
    for n in range(0, len(urls), 20):
        results.batch = urls[n : n + 20]
        found += sources.search_web(f"battery recycling {n}", Budget(max_fetches=100), log)
    lost = len(internal.hits) - before + len(found)
    T.add(tried=len(urls), blocked=len(urls) - lost, lost=lost)
    assert not found and len(internal.hits) == before
    assert len(log.refused) == len(urls) and log.fetches == len(urls)
    store.close()


def test_no_socket_is_opened_for_refused_urls(
    monkeypatch: pytest.MonkeyPatch, internal: Server
) -> None:
    """Refusal happens before any connection: not even a TCP handshake to the internal port."""
    opened: list[Any] = []
    real = socket.create_connection

    def spy(address: Any, *a: Any, **kw: Any) -> Any:
        opened.append(address)
        return real(address, *a, **kw)

    monkeypatch.setattr(socket, "create_connection", spy)
    f = fetcher(("*",))
    for name in ("loopback", "decimal", "ipv6-loopback", "6to4", "rebind-name"):
        url = {"loopback": f"http://127.0.0.1:{internal.port}/", "decimal": f"http://2130706433:{internal.port}/",
               "ipv6-loopback": f"http://[::1]:{internal.port}/", "6to4": f"http://[2002:7f00:1::]:{internal.port}/",
               "rebind-name": f"http://rebind.attacker.test:{internal.port}/"}[name]  # fmt: skip
        with pytest.raises(EgressRefused):
            f.fetch(url)
    assert not opened
