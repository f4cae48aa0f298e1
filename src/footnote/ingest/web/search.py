"""Search providers: web search (SearXNG JSON, Brave Search API), scholarly search (OpenAlex,
arXiv Atom, Semantic Scholar) and a licensed database API, each behind one small protocol.

Provider endpoints are chosen by the operator in config (never by a model); the pages their
results point to are fetched through the `Fetcher` and its allowlist like any other page.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from footnote.errors import ConfigError, FetchError


@dataclass(frozen=True)
class WebResult:
    """One web search result."""

    url: str
    title: str
    snippet: str
    engine: str
    published_at: str | None = None


@dataclass(frozen=True)
class PaperResult:
    """One scholarly search result: metadata, the abstract and an open-access PDF if any."""

    id: str
    title: str
    abstract: str
    url: str
    provider: str
    year: int | None = None
    published_at: str | None = None
    authors: tuple[str, ...] = ()
    doi: str | None = None
    arxiv_id: str | None = None
    pdf_url: str | None = None
    licence: str | None = None


@dataclass(frozen=True)
class LicensedRecord:
    """A record of a licensed database: its text may not reach an external model."""

    id: str
    title: str
    text: str
    url: str
    published_at: str | None = None


class WebSearch(Protocol):
    """A web search engine."""

    name: str

    def search(self, query: str, k: int) -> list[WebResult]:
        """Up to `k` results for `query`."""
        ...


class PaperSearch(Protocol):
    """A scholarly search engine."""

    name: str

    def search(self, query: str, k: int) -> list[PaperResult]:
        """Up to `k` papers for `query`."""
        ...


class _Api:
    """A JSON/XML API client with one timeout and clear errors."""

    name = "api"

    def __init__(
        self, base_url: str, *, timeout_s: float = 15.0, headers: dict[str, str] | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(timeout=timeout_s, headers=headers or {}, trust_env=False)

    def _get(self, path: str, params: dict[str, Any]) -> httpx.Response:
        try:
            response = self._client.get(self.base_url + path, params=params)
        except httpx.HTTPError as exc:
            raise FetchError(f"{self.name} search failed: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            raise FetchError(f"{self.name} search failed: HTTP {response.status_code}")
        return response

    def _json(self, path: str, params: dict[str, Any]) -> Any:
        try:
            return self._get(path, params).json()
        except ValueError as exc:
            raise FetchError(f"{self.name} returned invalid JSON: {exc}") from None

    def close(self) -> None:
        """Close the connections."""
        self._client.close()


def api_key(env: str, what: str) -> str:
    """The API key held in environment variable `env` (ConfigError when unset)."""
    key = os.environ.get(env, "") if env else ""
    if not key:
        raise ConfigError(
            f"{what} needs an API key: set the environment variable {env or '(unnamed)'}"
        )
    return key


class SearxngSearch(_Api):
    """A SearXNG instance's JSON API (`/search?q=…&format=json`)."""

    name = "searxng"

    def search(self, query: str, k: int) -> list[WebResult]:
        """Up to `k` results."""
        data = self._json("/search", {"q": query, "format": "json"})
        out = []
        for r in (data.get("results") or [])[:k]:
            if not r.get("url"):
                continue
            date = r.get("publishedDate")
            out.append(
                WebResult(str(r["url"]), str(r.get("title", "")), str(r.get("content", "")),
                          "searxng:" + str(r.get("engine", "")), str(date)[:10] if date else None)
            )  # fmt: skip
        return out


class BraveSearch(_Api):
    """The Brave Search API (`/res/v1/web/search`, key in `X-Subscription-Token`)."""

    name = "brave"

    def __init__(self, base_url: str, key: str, *, timeout_s: float = 15.0) -> None:
        super().__init__(
            base_url, timeout_s=timeout_s,
            headers={"X-Subscription-Token": key, "Accept": "application/json"},
        )  # fmt: skip

    def search(self, query: str, k: int) -> list[WebResult]:
        """Up to `k` results."""
        data = self._json("/res/v1/web/search", {"q": query, "count": min(max(k, 1), 20)})
        out = []
        for r in ((data.get("web") or {}).get("results") or [])[:k]:
            if not r.get("url"):
                continue
            age = r.get("page_age")
            out.append(
                WebResult(str(r["url"]), str(r.get("title", "")), str(r.get("description", "")),
                          "brave", str(age)[:10] if age else None)
            )  # fmt: skip
        return out


def _abstract_from_index(index: dict[str, list[int]] | None) -> str:
    if not index:
        return ""
    words: dict[int, str] = {}
    for word, positions in index.items():
        for p in positions:
            words[p] = word
    return " ".join(words[i] for i in sorted(words))


def _bare_doi(doi: str | None) -> str | None:
    if not doi:
        return None
    return doi.removeprefix("https://doi.org/").removeprefix("http://doi.org/").lower()


class OpenAlexSearch(_Api):
    """OpenAlex works search (`/works?search=…`); abstracts rebuilt from the inverted index."""

    name = "openalex"

    def __init__(self, base_url: str, *, mailto: str = "", timeout_s: float = 15.0) -> None:
        super().__init__(base_url, timeout_s=timeout_s)
        self.mailto = mailto

    def search(self, query: str, k: int) -> list[PaperResult]:
        """Up to `k` works."""
        params: dict[str, Any] = {"search": query, "per-page": min(max(k, 1), 50)}
        if self.mailto:
            params["mailto"] = self.mailto
        out = []
        for w in (self._json("/works", params).get("results") or [])[:k]:
            oa = w.get("best_oa_location") or {}
            ids = w.get("ids") or {}
            arxiv = str(ids.get("arxiv", "")).rsplit("/", 1)[-1] or None
            out.append(
                PaperResult(
                    id=str(w.get("id", "")), title=str(w.get("display_name") or w.get("title") or ""),
                    abstract=_abstract_from_index(w.get("abstract_inverted_index")),
                    url=str(oa.get("landing_page_url") or w.get("doi") or w.get("id") or ""),
                    provider="openalex", year=w.get("publication_year"),
                    published_at=w.get("publication_date"),
                    authors=tuple(str((a.get("author") or {}).get("display_name", ""))
                                  for a in w.get("authorships") or []),
                    doi=_bare_doi(w.get("doi")), arxiv_id=arxiv,
                    pdf_url=oa.get("pdf_url"), licence=oa.get("license"),
                )
            )  # fmt: skip
        return out


_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"


class ArxivSearch(_Api):
    """The arXiv API (`/api/query`, an Atom feed)."""

    name = "arxiv"

    def search(self, query: str, k: int) -> list[PaperResult]:
        """Up to `k` papers."""
        text = self._get("/api/query", {"search_query": f"all:{query}", "max_results": k}).text
        try:
            root = ET.fromstring(text)
        except ET.ParseError as exc:
            raise FetchError(f"arxiv returned invalid Atom: {exc}") from None
        out = []
        for e in root.findall(f"{_ATOM}entry")[:k]:
            abs_url = (e.findtext(f"{_ATOM}id") or "").strip()
            arxiv_id = abs_url.rsplit("/abs/", 1)[-1].split("v")[0] if "/abs/" in abs_url else None
            pdf = next(
                (ln.get("href") for ln in e.findall(f"{_ATOM}link") if ln.get("title") == "pdf"),
                None,
            )
            published = (e.findtext(f"{_ATOM}published") or "")[:10] or None
            out.append(
                PaperResult(
                    id=f"arxiv:{arxiv_id}" if arxiv_id else abs_url,
                    title=" ".join((e.findtext(f"{_ATOM}title") or "").split()),
                    abstract=" ".join((e.findtext(f"{_ATOM}summary") or "").split()),
                    url=abs_url, provider="arxiv",
                    year=int(published[:4]) if published else None, published_at=published,
                    authors=tuple((a.findtext(f"{_ATOM}name") or "").strip()
                                  for a in e.findall(f"{_ATOM}author")),
                    doi=_bare_doi(e.findtext(f"{_ARXIV}doi")), arxiv_id=arxiv_id,
                    pdf_url=pdf, licence=(e.findtext(f"{_ARXIV}license") or "arxiv").strip(),
                )
            )  # fmt: skip
        return out


class SemanticScholarSearch(_Api):
    """Semantic Scholar's Graph API (`/graph/v1/paper/search`)."""

    name = "semantic_scholar"
    FIELDS = "title,abstract,year,publicationDate,authors,externalIds,openAccessPdf,url"

    def __init__(self, base_url: str, key: str = "", *, timeout_s: float = 15.0) -> None:
        super().__init__(base_url, timeout_s=timeout_s, headers={"x-api-key": key} if key else {})

    def search(self, query: str, k: int) -> list[PaperResult]:
        """Up to `k` papers."""
        params = {"query": query, "limit": min(max(k, 1), 100), "fields": self.FIELDS}
        out = []
        for p in (self._json("/graph/v1/paper/search", params).get("data") or [])[:k]:
            ext = p.get("externalIds") or {}
            oa = p.get("openAccessPdf") or {}
            out.append(
                PaperResult(
                    id=f"s2:{p.get('paperId', '')}", title=str(p.get("title") or ""),
                    abstract=str(p.get("abstract") or ""), url=str(p.get("url") or ""),
                    provider="semantic_scholar", year=p.get("year"),
                    published_at=p.get("publicationDate"),
                    authors=tuple(str(a.get("name", "")) for a in p.get("authors") or []),
                    doi=_bare_doi(ext.get("DOI")), arxiv_id=ext.get("ArXiv"),
                    pdf_url=oa.get("url") or None, licence=oa.get("license") or None,
                )
            )  # fmt: skip
        return out


class LicensedDatabase(_Api):
    """A licensed full-text database behind a JSON API (`/search?q=…&limit=…`, bearer key).

    Its records carry the configured labels (`no-external-model` at least): the licence gate
    in front of every model role then keeps them away from external models."""

    name = "licensed"

    def __init__(
        self, base_url: str, key: str, labels: tuple[str, ...], *, timeout_s: float = 15.0
    ) -> None:
        super().__init__(base_url, timeout_s=timeout_s, headers={"Authorization": f"Bearer {key}"})
        self.labels = labels

    def search(self, query: str, k: int) -> list[LicensedRecord]:
        """Up to `k` records."""
        data = self._json("/search", {"q": query, "limit": k})
        return [
            LicensedRecord(str(d["id"]), str(d.get("title", "")), str(d.get("text", "")),
                           str(d.get("url") or f"licensed:{d['id']}"), d.get("published_at"))
            for d in (data.get("documents") or [])[:k]
            if d.get("id") and d.get("text")
        ]  # fmt: skip
