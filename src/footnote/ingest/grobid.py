"""An optional, heavier PDF parser: a GROBID server (`ingest.grobid_url`) turns the PDF into TEI
XML, read here into the same raw blocks: numbered section heads, paragraphs, formulas with
their numbers, figure and table captions, tables, one `reference` block per bibliography
entry, and the header's title, authors, date and DOI. GROBID keeps no page positions in its
default TEI, so blocks carry page 1 and no box."""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid
from typing import Any

import lxml.etree as etree  # type: ignore[import-untyped]

from footnote.errors import IngestError
from footnote.ingest import metadata
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Parsed, RawBlock
from footnote.types import Table

_NS = {"t": "http://www.tei-c.org/ns/1.0"}
_SAFE = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


def fetch_tei(url: str, data: bytes, name: str, timeout_s: float = 300.0) -> bytes:
    """POST the PDF to GROBID's processFulltextDocument and return the TEI XML."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="input"; '
            f'filename="{name}"\r\nContent-Type: application/pdf\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        url.rstrip("/") + "/api/processFulltextDocument",
        data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return bytes(response.read())
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise IngestError(f"{name}: GROBID at {url} failed ({exc})") from None


def parse_tei(tei: bytes) -> Parsed:
    """Raw blocks and metadata from GROBID TEI."""
    try:
        root = etree.fromstring(tei, _SAFE)
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"GROBID returned no TEI ({exc})") from None
    blocks: list[RawBlock] = []
    abstract = root.find(".//t:profileDesc/t:abstract", _NS)
    if abstract is not None and _text(abstract):
        blocks.append(RawBlock("heading", "Abstract", level=1))
        blocks += [RawBlock("paragraph", _text(p)) for p in abstract.iterfind(".//t:p", _NS)]
    body = root.find(".//t:text/t:body", _NS)
    if body is not None:
        for div in body.iterfind("t:div", _NS):
            blocks += _div(div)
        for fig in body.iterfind(".//t:figure", _NS):
            blocks += _figure(fig)
    bibl = root.findall(".//t:back//t:listBibl/t:biblStruct", _NS)
    if bibl:
        blocks.append(RawBlock("heading", "References", level=1))
        for entry in bibl:
            raw = entry.find("t:note[@type='raw_reference']", _NS)
            text = _text(raw) if raw is not None else _text(entry)
            if text:
                blocks.append(RawBlock("reference", text))
    return Parsed([b for b in blocks if b.text or b.table], _meta(root))


def _text(el: Any) -> str:
    return clean_text(" ".join("".join(el.itertext()).split()))


def _div(div: Any) -> list[RawBlock]:
    out: list[RawBlock] = []
    for el in div:
        tag = etree.QName(el).localname
        if tag == "head":
            number = (el.get("n") or "").strip().rstrip(".")
            title = _text(el)
            level = number.count(".") + 1 if number else 1
            out.append(RawBlock("heading", f"{number} {title}".strip(), level=level))
        elif tag == "p":
            out.append(RawBlock("paragraph", _text(el)))
        elif tag == "formula":
            label = el.find("t:label", _NS)
            number = _text(label).strip("()") if label is not None else None
            if label is not None:
                el.remove(label)
            out.append(RawBlock("formula", _text(el), formula_number=number or None))
    return out


def _figure(fig: Any) -> list[RawBlock]:
    head = fig.find("t:head", _NS)
    desc = fig.find("t:figDesc", _NS)
    caption = " ".join(
        t
        for t in (_text(head) if head is not None else "", _text(desc) if desc is not None else "")
        if t
    )
    table_el = fig.find("t:table", _NS)
    if fig.get("type") == "table" and table_el is not None:
        rows = [
            tuple(_text(c) for c in row.iterfind("t:cell", _NS))
            for row in table_el.iterfind("t:row", _NS)
        ]
        rows = [r for r in rows if any(r)]
        if rows:
            table = Table(header=(rows[0],), rows=tuple(rows[1:]), caption=caption)
            return [RawBlock("table", table.as_text(), table=table)]
    return [RawBlock("caption", caption)] if caption else []


def _meta(root: Any) -> Meta:
    header = root.find(".//t:teiHeader", _NS)
    if header is None:
        return Meta()
    title = header.find(".//t:titleStmt/t:title", _NS)
    authors = []
    for pers in header.iterfind(".//t:sourceDesc//t:analytic/t:author/t:persName", _NS):
        name = " ".join(
            _text(p) for p in pers if etree.QName(p).localname in ("forename", "surname")
        )
        if name:
            authors.append(name)
    date = header.find(".//t:publicationStmt/t:date", _NS)
    when = (date.get("when") if date is not None else None) or ""
    doi = header.find(".//t:idno[@type='DOI']", _NS)
    return Meta(
        title=_text(title) if title is not None else "",
        authors=authors,
        published_at=metadata.iso_date(when) if when else None,
        doi=_text(doi) if doi is not None else None,
    )
