"""Snapshots: a fetched body kept as raw bytes plus the text every snippet's span points into.

HTML is cleaned before extraction: comments, scripts and elements hidden from a reader
(`display:none`, `visibility:hidden`, zero font size, the `hidden` attribute, `aria-hidden`)
are dropped, so text a reader cannot see never becomes evidence. The page's own metadata
(canonical link, date, document number, DOI, arXiv id, links) is read for the merge stage; it is
a claim of the page, and the merge stage treats it as one.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

import lxml.etree as etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.ingest import parse_bytes
from footnote.ingest.plain_text import decode
from footnote.ingest.web.fetch import FetchResult
from footnote.types import Document, Snapshot, SourceKind, sha256_hex

_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|opacity\s*:\s*0(?:\.0+)?\s*(?:;|$)"
    r"|font-size\s*:\s*(?:0|[0-2](?:\.\d+)?px|0(?:\.\d+)?(?:pt|em|rem|%))\s*(?:;|$)"
    r"|(?:left|top|text-indent)\s*:\s*-\d{3,}",
    re.I,
)
_COLOUR = re.compile(r"(?:^|;)\s*(background(?:-color)?|color)\s*:\s*([^;]+)", re.I)


def hidden_style(style: str) -> bool:
    """Whether an inline style hides text from a reader (none, invisible, tiny, off-screen, or
    the text colour equal to its background)."""
    if _HIDDEN_STYLE.search(style):
        return True
    colours = {k.lower().split("-")[0]: v.strip().lower() for k, v in _COLOUR.findall(style)}
    return "color" in colours and colours.get("color") == colours.get("background")


DOI_RE = re.compile(r"\b10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)]", re.I)
ARXIV_RE = re.compile(r"\barxiv[:./\s]*(?:abs/)?(\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def snapshot_id(final_url: str, sha256: str) -> str:
    """The id of the snapshot of these bytes served at this URL."""
    return sha256_hex(f"{final_url}\x1f{sha256}".encode())[:16]


def _kind(result: FetchResult) -> SourceKind:
    ctype = result.content_type.lower()
    path = result.final_url.lower().split("?", 1)[0]
    if "pdf" in ctype or path.endswith(".pdf") or result.body[:5] == b"%PDF-":
        return "pdf"
    if "html" in ctype or "xml" in ctype or path.endswith((".html", ".htm")):
        return "html"
    if "markdown" in ctype or path.endswith(".md"):
        return "md"
    return "text"


def clean_html(html: str) -> tuple[str, dict[str, object]]:
    """The page with hidden elements removed, and its metadata."""
    try:
        doc = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return html, {}
    etree.strip_elements(doc, etree.Comment, etree.ProcessingInstruction, with_tail=False)
    hidden = [
        el
        for el in doc.iter()
        if isinstance(el.tag, str)
        and (
            hidden_style(el.get("style") or "")
            or el.get("hidden") is not None
            or el.get("aria-hidden") == "true"
            or el.tag.lower() in ("script", "style", "noscript", "template")
        )
    ]
    for el in hidden:
        if el.getparent() is not None:
            el.drop_tree()
    meta: dict[str, object] = {}
    canonical = doc.find(".//link[@rel='canonical']")
    if canonical is not None and canonical.get("href"):
        meta["canonical"] = canonical.get("href")
    for m in doc.iter("meta"):
        name = (m.get("name") or m.get("property") or "").lower()
        content = (m.get("content") or "").strip()
        if name in ("date", "article:published_time", "dc.date", "citation_publication_date"):
            meta.setdefault("date", content)
        elif name in ("document-number", "dc.identifier.docnumber"):
            meta["doc_number"] = content
        elif name in ("citation_doi", "dc.identifier") and DOI_RE.search(content):
            meta["doi"] = DOI_RE.search(content).group(0)  # type: ignore[union-attr]
    if "date" not in meta:
        t = doc.find(".//time[@datetime]")
        if t is not None:
            meta["date"] = t.get("datetime")
    meta["links"] = [a.get("href") for a in doc.iter("a") if a.get("href")]
    return lxml.html.tostring(doc, encoding="unicode"), meta


def document_text(doc: Document) -> str:
    """The text a snapshot keeps: the blocks' texts, one paragraph each."""
    parts = [b.table.as_text() if b.table is not None else b.text for b in doc.blocks]
    return "\n\n".join(p for p in parts if p.strip())


def make_snapshot(
    result: FetchResult, settings: IngestSettings, labels: tuple[str, ...] = ()
) -> tuple[Snapshot, Document]:
    """The snapshot of a fetch result, and the parsed document its text came from."""
    kind = _kind(result)
    meta: dict[str, object] = {}
    data = result.body
    if kind == "html":
        cleaned, meta = clean_html(decode(data))
        data_for_parse = cleaned.encode("utf-8")
    else:
        data_for_parse = data
    try:
        doc = parse_bytes(data_for_parse, result.final_url, kind, settings)
    except IngestError:
        raise
    text = document_text(doc)
    sha = sha256_hex(result.body)
    date = str(meta.get("date") or "")
    links = tuple(
        dict.fromkeys(urljoin(result.final_url, str(h)) for h in meta.get("links", []) or [])  # type: ignore[attr-defined]
    )
    doi = meta.get("doi") or (m.group(0) if (m := DOI_RE.search(text[:5000])) else None)
    arxiv = m.group(1) if (m := ARXIV_RE.search(result.final_url + " " + text[:3000])) else None
    snap = Snapshot(
        id=snapshot_id(result.final_url, sha),
        url=result.url,
        final_url=result.final_url,
        fetched_at=result.fetched_at,
        sha256=sha,
        text=text,
        title=doc.source.title,
        content_type=result.content_type,
        status=result.status,
        canonical_url=urljoin(result.final_url, str(meta["canonical"]))
        if meta.get("canonical")
        else "",
        published_at=date[:10] if _DATE_RE.match(date) else None,
        doc_number=str(meta["doc_number"]) if meta.get("doc_number") else None,
        doi=str(doi) if doi else None,
        arxiv_id=arxiv,
        links=links,
        labels=labels,
    )
    return snap, doc


def text_snapshot(
    url: str, text: str, *, title: str, fetched_at: str, origin: str, labels: tuple[str, ...] = (),
    published_at: str | None = None, doi: str | None = None, arxiv_id: str | None = None,
) -> Snapshot:  # fmt: skip
    """A snapshot of text that came from an API (an abstract, a licensed record), not a page."""
    raw = text.encode("utf-8")
    sha = sha256_hex(raw)
    snap = Snapshot(
        snapshot_id(url, sha), url, url, fetched_at, sha, text, title=title,
        content_type="text/plain", published_at=published_at, doi=doi, arxiv_id=arxiv_id,
        labels=labels, origin=origin,
    )  # fmt: skip
    return snap
