"""EPUB 2/3 → raw blocks: the package document's spine in reading order, each XHTML chapter
through the HTML DOM walk; Dublin Core metadata. Page numbers are spine positions (a chapter
is a "page"), so blocks of different chapters never share an address."""

from __future__ import annotations

import posixpath
import zipfile
from io import BytesIO
from typing import Any

import lxml.etree as etree  # type: ignore[import-untyped]
import lxml.html  # type: ignore[import-untyped]

from footnote.errors import UnsupportedInput
from footnote.ingest import metadata
from footnote.ingest.archive import ElementBudget
from footnote.ingest.cleanup import clean_text
from footnote.ingest.html import dom_blocks
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Parsed, RawBlock

_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
}
_MAX_CHAPTER_BYTES = 20 * 1024 * 1024
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def parse_epub(data: bytes, name: str, budget: ElementBudget) -> Parsed:
    """Chapters in spine order; metadata from the OPF's Dublin Core elements."""
    try:
        book = zipfile.ZipFile(BytesIO(data))
    except zipfile.BadZipFile:
        raise UnsupportedInput(f"{name}: not an EPUB (not a zip archive)", path=name) from None
    with book:
        opf_path = _package_path(book, name)
        opf = etree.fromstring(book.read(opf_path), _SAFE)
        base = posixpath.dirname(opf_path)
        manifest = {
            item.get("id"): (item.get("href"), item.get("media-type", ""))
            for item in opf.iterfind(".//opf:manifest/opf:item", _NS)
        }
        blocks: list[RawBlock] = []
        page = 0
        for ref in opf.iterfind(".//opf:spine/opf:itemref", _NS):
            href, media = manifest.get(ref.get("idref"), (None, ""))
            if not href or "html" not in media:
                continue
            path = posixpath.normpath(posixpath.join(base, href))
            info = book.getinfo(path) if path in book.namelist() else None
            if info is None or info.file_size > _MAX_CHAPTER_BYTES:
                continue
            page += 1
            budget.take()
            chapter = _chapter(book.read(path), page)
            budget.take(len(chapter))
            blocks += chapter
        return Parsed(blocks, _meta(opf), pages=max(page, 1))


def _package_path(book: zipfile.ZipFile, name: str) -> str:
    try:
        container = etree.fromstring(book.read("META-INF/container.xml"), _SAFE)
    except KeyError:
        raise UnsupportedInput(f"{name}: not an EPUB (no META-INF/container.xml)") from None
    root = container.find(".//c:rootfile", _NS)
    if root is None or not root.get("full-path"):
        raise UnsupportedInput(f"{name}: EPUB without a package document")
    return str(root.get("full-path"))


def _chapter(raw: bytes, page: int) -> list[RawBlock]:
    try:
        doc = lxml.html.document_fromstring(raw)
    except (etree.ParserError, ValueError):
        return []
    out = []
    for b in dom_blocks(doc):
        b.page = page
        out.append(b)
    return out


def _meta(opf: Any) -> Meta:
    def texts(tag: str) -> list[str]:
        return [clean_text(e.text or "") for e in opf.iterfind(f".//dc:{tag}", _NS) if e.text]

    date = next(iter(texts("date")), "")
    identifiers = " ".join(texts("identifier"))
    doi = metadata.DOI.search(identifiers)
    return Meta(
        title=next(iter(texts("title")), ""),
        authors=[a for a in texts("creator") if a],
        published_at=metadata.iso_date(date) if date else None,
        doi=doi.group(1) if doi else None,
    )
