"""The export formats: Markdown, HTML, PDF (WeasyPrint, CJK fonts embedded), JSON, BibTeX and
CSL-JSON, all from one `ExportDoc`; every document format ends with its evidence appendix."""

from __future__ import annotations

import json
import re

from footnote.errors import ConfigError, UsageError
from footnote.pipelines.export.document import ExportDoc, Paragraph
from footnote.pipelines.export.html import document_html
from footnote.pipelines.export.works import bibtex, csl_json
from footnote.serialize import to_plain

FORMATS = ("markdown", "html", "pdf", "json", "bibtex", "csl")
MEDIA_TYPES = {
    "markdown": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
    "pdf": "application/pdf", "json": "application/json", "bibtex": "application/x-bibtex",
    "csl": "application/vnd.citationstyles.csl+json",
}  # fmt: skip
SUFFIXES = {"markdown": "md", "html": "html", "pdf": "pdf", "json": "json", "bibtex": "bib",
            "csl": "csl.json"}  # fmt: skip


_PLAIN_URL = re.compile(r"https?://[^\s<>()\[\]`\\]+$")
_MD_ACTIVE = re.compile(r"([\\`*_\[\]<>!|#~])")


def _md(text: str) -> str:
    """Untrusted text as inert Markdown: one line, every active character escaped (a quoted
    page cannot add a link, an image, HTML or a heading to the export)."""
    return _MD_ACTIVE.sub(r"\\\1", " ".join(str(text).split()))


def _cell(text: str) -> str:
    return _md(text)


def _para_md(p: Paragraph) -> str:
    marks = "".join(f"[^{r}]" for r in p.refs)
    flags = f" *({_md('; '.join(p.flags))})*" if p.flags else ""
    return f"{_md(p.text)}{marks}{flags}"


def document_markdown(doc: ExportDoc) -> str:
    """The document as Markdown: meta, withheld notice, chapters, then the evidence appendix
    (each note names its source first: title, file name, page and section; the block or card
    id comes last, as an anchor)."""
    out = [f"# {_md(doc.title)}", ""]
    out += [f"- **{k}:** {_md(v)}" for k, v in doc.meta] + [""]
    out += [f"> **{_md(w)}**" for w in doc.withheld] + ([""] if doc.withheld else [])
    for s in doc.sections:
        out += [f"## {_md(s.title)}", ""]
        for p in s.paragraphs:
            out += [_para_md(p), ""]
        for t in s.tables:
            out += [f"**{_md(t.caption)}.**", "", "| " + " | ".join(t.header) + " |",
                    "|" + "---|" * len(t.header)]  # fmt: skip
            out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t.rows]
            out += ["", _md(t.note), ""] if t.note else [""]
        out += [f"*{_md(n)}*" for n in s.notes] + ([""] if s.notes else [])
    out += ["## Evidence appendix", ""]
    for e in doc.evidence:
        file_name = f" ({_md(e.file_name)})" if e.file_name else ""
        url = f"<{e.url}>. " if _PLAIN_URL.match(e.url) else f"{_md(e.url)}. " if e.url else ""
        out.append(
            f"[^{e.ref}]: **{_md(e.source_title)}**{file_name}, {_md(e.locator)}: "
            f"“{_md(e.quote)}”. {url}"
            f"Published {_md(e.published_at or 'undated')}; fetched "
            f"{e.fetched_at or 'unknown'}; sha256 `{e.content_hash or 'unknown'}`"
            f"{'; labels: ' + _md(', '.join(e.labels)) if e.labels else ''}; anchor `{e.id}`."
        )
    return "\n".join(out).rstrip() + "\n"


def document_pdf(doc: ExportDoc) -> bytes:
    """The HTML rendered to PDF by WeasyPrint (fonts, CJK included, embedded as subsets);
    nothing is fetched while rendering (no file, no network), whatever the text says."""
    try:
        from weasyprint import HTML
        from weasyprint.urls import URLFetcher
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError("PDF export needs WeasyPrint: pip install 'footnote[export]'") from exc

    class FetchNothing(URLFetcher):  # type: ignore[misc]
        def fetch(self, url: str, headers: object = None) -> None:
            refused.append(url)
            raise ValueError(f"an export fetches nothing: {url}")

    refused: list[str] = []
    pdf = HTML(string=document_html(doc), url_fetcher=FetchNothing()).write_pdf()
    assert pdf is not None
    return bytes(pdf)


def render(doc: ExportDoc, fmt: str) -> bytes:
    """The document in one of `FORMATS`, as bytes."""
    if fmt == "markdown":
        return document_markdown(doc).encode()
    if fmt == "html":
        return document_html(doc).encode()
    if fmt == "pdf":
        return document_pdf(doc)
    if fmt == "json":
        plain = {**to_plain(doc), "works": to_plain(doc.works)}
        return (json.dumps(plain, ensure_ascii=False, indent=2) + "\n").encode()
    if fmt == "bibtex":
        return bibtex(doc).encode()
    if fmt == "csl":
        return csl_json(doc).encode()
    raise UsageError(f"unknown export format {fmt!r}; expected {', '.join(FORMATS)}")
