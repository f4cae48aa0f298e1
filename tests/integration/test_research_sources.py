"""The research job's sources over real HTTP on loopback: the fetcher's egress policy, page
snapshots, and every search adapter against a server that speaks its API's format."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_servers import ARXIV, LICENSED, OPENALEX, S2, ApiServer, json_route

from footnote.config import IngestSettings
from footnote.errors import ConfigError, EgressRefused, FetchError
from footnote.eval.fixture_web import FixtureWeb
from footnote.ingest.web.fetch import Fetcher, FetchPolicy, address_problem
from footnote.ingest.web.search import (
    ArxivSearch,
    BraveSearch,
    LicensedDatabase,
    OpenAlexSearch,
    SearxngSearch,
    SemanticScholarSearch,
    api_key,
)
from footnote.ingest.web.snapshot import make_snapshot

pytestmark = pytest.mark.integration
NOTICE = "/notices/2024/epr-batteries-notice-2024-017.html"


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def fetcher(**kw: object) -> Fetcher:
    policy = {"allowed_domains": ("example",), "allow_loopback": True,
              "resolve": {"*.example": "127.0.0.1"}, **kw}  # fmt: skip
    return Fetcher(FetchPolicy(**policy))  # type: ignore[arg-type]


def test_fetch_by_host_and_snapshot(web: FixtureWeb) -> None:
    result = fetcher().fetch(f"http://vepd.example:{web.port}{NOTICE}")
    assert result.status == 200 and result.final_url.endswith(NOTICE)
    snap, doc = make_snapshot(result, IngestSettings())
    assert "at least 45% by 31 December 2026" in snap.text
    assert snap.doc_number == "VEPD/EPR/2024-017" and snap.published_at == "2024-03-12"
    assert snap.sha256 and len(snap.id) == 16 and doc.blocks
    assert ("vepd.example", NOTICE) in web.requests


def test_hidden_text_never_reaches_the_snapshot(web: FixtureWeb) -> None:
    url = (
        f"http://marketpulse-free.example:{web.port}/veldmark-battery-recycling-market-summary.html"
    )
    raw = fetcher().fetch(url)
    assert b"4.8 billion" in raw.body  # the page hides it with display:none
    snap, _ = make_snapshot(raw, IngestSettings())
    assert "4.8 billion" not in snap.text and "USD 950 million" in snap.text


def test_loopback_is_refused_unless_allowed(web: FixtureWeb) -> None:
    with pytest.raises(EgressRefused, match="loopback"):
        fetcher(allow_loopback=False).fetch(f"http://vepd.example:{web.port}{NOTICE}")


@pytest.mark.parametrize(
    "url, why",
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://vepd.example/x", "only http and https"),
        ("http://attacker.example/x", "not on the fetch allowlist"),
        ("http://user:pw@vepd.example/x", "credentials"),
    ],
)
def test_urls_refused_before_any_request(url: str, why: str, web: FixtureWeb) -> None:
    before = len(web.requests)
    f = Fetcher(FetchPolicy(allowed_domains=("vepd.example",), allow_loopback=True,
                            resolve={"*.example": "127.0.0.1"}))  # fmt: skip
    with pytest.raises(EgressRefused, match=why):
        f.fetch(url)
    assert len(web.requests) == before


@pytest.mark.parametrize(
    "address, kind",
    [("169.254.169.254", "link-local"), ("10.1.2.3", "private"), ("192.168.0.1", "private"),
     ("0.0.0.0", "unspecified"), ("::ffff:127.0.0.1", "loopback"), ("fe80::1", "link-local"),
     ("224.0.0.1", "multicast")],
)  # fmt: skip
def test_addresses_are_checked_after_resolution(address: str, kind: str) -> None:
    assert kind in (address_problem(address, allow_loopback=False) or "")
    f = Fetcher(FetchPolicy(allowed_domains=("*",), resolve={"metadata.example": address}))
    with pytest.raises(EgressRefused, match="forbidden address"):
        f.fetch("http://metadata.example/latest/meta-data/")
    assert address_problem("93.184.216.34", allow_loopback=False) is None


def test_every_redirect_hop_is_checked(web: FixtureWeb) -> None:
    routes = {
        "/to-page": lambda _p, _h: (302, "text/html", "", {"Location": f"http://vepd.example:{web.port}{NOTICE}"}),
        "/to-metadata": lambda _p, _h: (302, "text/html", "", {"Location": "http://169.254.169.254/latest/"}),
        "/to-file": lambda _p, _h: (301, "text/html", "", {"Location": "file:///etc/passwd"}),
        "/loop": lambda _p, _h: (302, "text/html", "", {"Location": "/loop"}),
    }  # fmt: skip
    srv = ApiServer(routes)  # type: ignore[arg-type]
    try:
        f = fetcher(resolve={"*.example": "127.0.0.1", "redir.example": "127.0.0.1"})
        ok = f.fetch(f"http://redir.example:{srv.port}/to-page")
        assert ok.final_url.endswith(NOTICE) and ok.redirects
        with pytest.raises(EgressRefused, match=r"not on the fetch allowlist|forbidden"):
            f.fetch(f"http://redir.example:{srv.port}/to-metadata")
        with pytest.raises(EgressRefused, match="only http and https"):
            f.fetch(f"http://redir.example:{srv.port}/to-file")
        with pytest.raises(EgressRefused, match="redirects"):
            fetcher(max_redirects=2, resolve={"redir.example": "127.0.0.1"}).fetch(
                f"http://redir.example:{srv.port}/loop"
            )
    finally:
        srv.stop()


def test_size_and_time_limits() -> None:
    big = b"x" * 50_000
    srv = ApiServer({
        "/big": lambda _p, _h: (200, "text/plain", big, {}),
        "/slow": lambda _p, _h: (200, "text/plain", b"y" * 100, {"slow": "1"}),
    })  # type: ignore[dict-item]  # fmt: skip
    try:
        f = fetcher(resolve={"s.example": "127.0.0.1"}, max_bytes=10_000)
        with pytest.raises(EgressRefused, match="over the limit"):
            f.fetch(f"http://s.example:{srv.port}/big")
        assert (
            fetcher(resolve={"s.example": "127.0.0.1"})
            .fetch(f"http://s.example:{srv.port}/big")
            .body
            == big
        )
        with pytest.raises(FetchError, match="timed out"):
            fetcher(resolve={"s.example": "127.0.0.1"}, timeout_s=1.0).fetch(
                f"http://s.example:{srv.port}/slow"
            )
    finally:
        srv.stop()


def test_searxng_adapter(web: FixtureWeb) -> None:
    results = SearxngSearch(web.base).search("Veldmark battery recycling market size", 3)
    assert [r.url.rsplit("/", 1)[-1] for r in results][:2] == [
        "veldmark-battery-recycling-market-summary.html",
        "veldmark-battery-recycling-market-2024.html",
    ]
    assert results[0].engine.startswith("searxng") and results[0].snippet
    assert len(results) == 3


def test_brave_adapter_sends_its_key(web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_TEST_KEY", "k-123")
    results = BraveSearch(web.base, api_key("BRAVE_TEST_KEY", "brave")).search(
        "battery recycling companies", 4
    )
    assert len(results) == 4 and results[0].url.endswith("/members.html")
    with pytest.raises(FetchError, match="HTTP 401"):
        BraveSearch(web.base, "").search("battery", 2)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY"):
        api_key("NO_SUCH_KEY", "brave")


def test_scholarly_adapters_read_their_formats() -> None:
    srv = ApiServer({
        "/works": json_route(OPENALEX, "http://oa.example/bert.pdf"),
        "/api/query": lambda _p, _h: (200, "application/atom+xml",
                                      ARXIV.replace("PDFURL", "http://arxiv.example/pdf/2004.07180"), {}),
        "/graph/v1/paper/search": json_route(S2, "http://s2.example/lit.pdf"),
    })  # type: ignore[dict-item]  # fmt: skip
    try:
        (oa,) = OpenAlexSearch(srv.base, mailto="t@example.org").search("bert", 5)
        assert oa.abstract == "We introduce a new language model called BERT."
        assert oa.doi == "10.18653/v1/n19-1423" and oa.licence == "cc-by"
        assert oa.pdf_url == "http://oa.example/bert.pdf" and oa.authors[0] == "Jacob Devlin"
        assert srv.seen[-1][1]["search"] == "bert" and srv.seen[-1][1]["mailto"] == "t@example.org"
        (ax,) = ArxivSearch(srv.base).search("citation", 5)
        assert ax.arxiv_id == "2004.07180" and ax.title.startswith("SPECTER: Document-level")
        assert ax.published_at == "2020-04-15" and ax.doi == "10.18653/v1/2020.acl-main.207"
        assert srv.seen[-1][1]["search_query"] == "all:citation"
        (s2,) = SemanticScholarSearch(srv.base, "s2key").search("literature graph", 5)
        assert s2.arxiv_id == "1805.02262" and s2.pdf_url == "http://s2.example/lit.pdf"
        assert srv.seen[-1][2]["x-api-key"] == "s2key"
    finally:
        srv.stop()


def test_licensed_database_adapter() -> None:
    srv = ApiServer({"/search": json_route(LICENSED)})
    try:
        db = LicensedDatabase(srv.base, "secret", ("no-external-model",))
        (rec,) = db.search("Korvath", 3)
        assert rec.id == "lic-001" and "9,800 tonnes" in rec.text
        assert srv.seen[-1][2]["authorization"] == "Bearer secret"
        assert db.labels == ("no-external-model",)
    finally:
        srv.stop()


def test_agent_search_papers_tool() -> None:
    from footnote.agent.paper_tools import add_paper_tools
    from footnote.agent.tools import ToolRegistry
    from footnote.config import ResearchSettings
    from footnote.workspace.research import paper_search

    srv = ApiServer({"/works": json_route(OPENALEX, "http://oa.example/bert.pdf")})
    try:
        reg = ToolRegistry()
        add_paper_tools(reg, paper_search(ResearchSettings(scholarly=(f"openalex+{srv.base}",))))
        out = reg.call("search_papers", {"query": "bert", "k": 3})
        assert "BERT: Pre-training" in out and "10.18653/v1/n19-1423" in out
        empty = ToolRegistry()
        add_paper_tools(empty, paper_search(ResearchSettings()))
        assert "search_papers" not in empty.tools  # no provider configured, no tool
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "path",
    [
        "/battery-insider/2024/09/korvath-rumours.html",  # white on white, 1px, image alt text
        "/homeheat-forum/threads/grant-scheme-tips.html",  # an HTML comment
        "/marketpulse-free/veldmark-battery-recycling-market-summary.html",  # display:none
    ],
)
def test_text_hidden_from_readers_never_becomes_snapshot_text(path: str, web: FixtureWeb) -> None:
    site, rest = path.lstrip("/").split("/", 1)
    raw = fetcher().fetch(f"http://{site}.example:{web.port}/{rest}")
    assert b"CANARY-" in raw.body
    snap, _ = make_snapshot(raw, IngestSettings())
    assert "CANARY" not in snap.text and snap.text.strip()
    assert not any(w in snap.text for w in ("bankruptcy", "169.254", "overrides all"))
