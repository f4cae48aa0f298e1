"""Document ingestion: PDF (with OCR for scans), HTML, Markdown, plain text, DOCX, PPTX, EPUB,
LaTeX, CSV/TSV and XLSX → a `Document` of addressable blocks.

Public API: `parse_file`, `discover`, `SUPPORTED_SUFFIXES`, `supported_formats`. Everything raised on purpose is an
`IngestError` subclass with a message a person can act on.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from footnote.config import IngestSettings
from footnote.errors import IngestError, UnsupportedInput
from footnote.ingest.archive import ElementBudget, check_archive
from footnote.ingest.assemble import assemble
from footnote.ingest.cleanup import clean_text, garbled_reason
from footnote.ingest.encoding import decode_bytes
from footnote.ingest.epub import parse_epub
from footnote.ingest.html import parse_html
from footnote.ingest.latex import parse_latex
from footnote.ingest.markdown import parse_markdown
from footnote.ingest.metadata import Meta
from footnote.ingest.office import parse_docx, parse_pptx
from footnote.ingest.pdf import parse_pdf, scan
from footnote.ingest.plain_text import parse_text
from footnote.ingest.raw import Parsed
from footnote.ingest.sheets import parse_csv, parse_xlsx
from footnote.types import Document, Source, SourceKind, parse_identity, sha256_hex

__all__ = [
    "SUPPORTED_SUFFIXES",
    "discover",
    "formats_text",
    "identities",
    "is_current",
    "parse_bytes",
    "parse_file",
    "pdf_reader",
    "supported_formats",
]

log = logging.getLogger(__name__)

_KINDS: dict[str, SourceKind] = {
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "md",
    ".markdown": "md",
    ".txt": "text",
    ".text": "text",
    ".docx": "docx",
    ".pptx": "pptx",
    ".epub": "epub",
    ".tex": "tex",
    ".csv": "csv",
    ".tsv": "csv",
    ".xlsx": "xlsx",
}
SUPPORTED_SUFFIXES: frozenset[str] = frozenset(_KINDS)
"""Lower-case file suffixes `parse_file` reads."""
_NAMES: dict[SourceKind, str] = {
    "pdf": "PDF", "html": "HTML", "md": "Markdown", "text": "plain text", "docx": "Word",
    "pptx": "PowerPoint", "xlsx": "Excel", "epub": "EPUB", "tex": "LaTeX", "csv": "CSV/TSV",
}  # fmt: skip


def supported_formats() -> list[tuple[str, tuple[str, ...]]]:
    """The formats `parse_file` reads, each with its suffixes: the one list that help texts,
    errors and the web app's upload show."""
    by_kind: dict[SourceKind, list[str]] = {}
    for suffix, kind in _KINDS.items():
        by_kind.setdefault(kind, []).append(suffix)
    return [(_NAMES.get(kind, kind), tuple(sfx)) for kind, sfx in by_kind.items()]


def formats_text() -> str:
    """The accepted formats in words: `PDF (.pdf), HTML (.html, .htm, .xhtml), …`."""
    return ", ".join(f"{name} ({', '.join(sfx)})" for name, sfx in supported_formats())


def discover(paths: Sequence[Path]) -> list[Path]:
    """Expand folders recursively to supported files (sorted); explicit files are kept as given."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            for p in path.rglob("*"):
                if (
                    p.is_file()
                    and p.suffix.lower() in SUPPORTED_SUFFIXES
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                ):
                    found.add(p)
        else:
            found.add(path)
    return sorted(found)


def pdf_reader(path: Path, settings: IngestSettings) -> str:
    """The PDF reader for this file: the first `ingest.parsers` glob it matches, else
    `ingest.pdf_parser`."""
    for pattern, reader in settings.parsers.items():
        if fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(str(path), pattern):
            return reader
    return settings.pdf_parser


def identities(file_sha: str, settings: IngestSettings, path: Path | None = None) -> list[str]:
    """The `Source.sha256` values a parse of these bytes may get with these settings: the one
    with OCR first (when an OCR engine is usable here), then the one without."""
    reader = pdf_reader(path, settings) if path is not None else "builtin"
    base = "" if reader == "builtin" or path is None or path.suffix.lower() != ".pdf" else reader
    found = scan.engine(settings)
    plain = [parse_identity(file_sha, base)]
    if found is None or reader == "grobid":
        return plain
    return [parse_identity(file_sha, "; ".join(t for t in (base, found[0]) if t)), *plain]


def is_current(source: Source, settings: IngestSettings) -> bool:
    """False when a stored source left pages unread for want of OCR that is usable now, so a
    re-ingest reads them (a new version) instead of reporting it unchanged."""
    if source.parser:
        return True
    lacking = any(scan.NEEDS_OCR in w for w in source.warnings)
    return not (lacking and scan.engine(settings) is not None)


def parse_file(path: Path, settings: IngestSettings, *, password: str | None = None) -> Document:
    """Parse one file into a Document; raise IngestError subclasses on unusable input."""
    path = Path(path)
    try:
        resolved = path.resolve()
    except OSError as exc:
        raise IngestError(f"{path}: cannot resolve path ({exc})", path=str(path)) from None
    kind = _KINDS.get(resolved.suffix.lower())
    if kind is None:
        raise UnsupportedInput(
            f"{resolved.name}: unsupported file type {resolved.suffix or '(none)'!r} "
            f"(supported: {formats_text()})",
            path=str(resolved),
        )
    data = _read(resolved, settings)
    try:
        return _parse(resolved, data, kind, settings, password)
    except IngestError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise IngestError(
            f"{resolved.name}: document too complex ({type(exc).__name__})", path=str(resolved)
        ) from None
    except Exception as exc:  # a library failed on odd input: report it, not a traceback
        log.debug("ingest failed", exc_info=True)
        raise IngestError(
            f"{resolved.name}: could not parse {kind} ({type(exc).__name__}: {exc})",
            path=str(resolved),
        ) from exc


def parse_bytes(data: bytes, uri: str, kind: SourceKind, settings: IngestSettings) -> Document:
    """Parse bytes that did not come from a file (a fetched page or PDF); `uri` names them."""
    name = Path(uri.rstrip("/").rsplit("/", 1)[-1] or "page")
    try:
        doc = _parse(name, data, kind, settings, None)
    except IngestError:
        raise
    except Exception as exc:  # a library failed on odd input
        raise IngestError(f"{uri}: could not parse {kind} ({type(exc).__name__}: {exc})") from exc
    return Document(replace(doc.source, uri=uri), doc.blocks, sections=doc.sections)


def _grobid(path: Path, data: bytes, settings: IngestSettings, password: str | None) -> Parsed:
    if not settings.grobid_url:
        raise IngestError(
            f"{path.name}: the grobid reader needs ingest.grobid_url (a GROBID server)",
            path=str(path),
        )
    from footnote.ingest import grobid
    from footnote.ingest.pdf import file as pdf_file

    pdf_file.sniff_pdf(data, path)
    doc = pdf_file.open_pdf(data, path, password or settings.pdf_password or None)
    try:
        pages = pdf_file.check_page_count(doc, settings.max_pages, path)
    finally:
        doc.close()
    parsed = grobid.parse_tei(grobid.fetch_tei(settings.grobid_url, data, path.name))
    parsed.pages, parsed.parser = pages, "grobid"
    return parsed


def _read(path: Path, settings: IngestSettings) -> bytes:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise IngestError(f"{path}: no such file", path=str(path)) from None
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})", path=str(path)) from None
    if not path.is_file():
        raise UnsupportedInput(f"{path}: not a regular file", path=str(path))
    limit = settings.max_file_mb * 1024 * 1024
    if size > limit:
        raise UnsupportedInput(
            f"{path.name}: {size / 1048576:.1f} MiB is over the limit of "
            f"{settings.max_file_mb:g} MiB (ingest.max_file_mb)",
            path=str(path),
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read ({exc.strerror})", path=str(path)) from None


_HTML_START = re.compile(r"\A\s*(?:<!doctype\s+html|<html[\s>])", re.IGNORECASE)


def _parse(
    path: Path, data: bytes, kind: SourceKind, settings: IngestSettings, password: str | None
) -> Document:
    warnings: list[str] = []
    parsed, kind = _dispatch(path, data, kind, settings, password, warnings)
    warnings += parsed.warnings
    meta = parsed.meta
    title = clean_text(meta.title)[:300] or path.stem
    sha = parse_identity(sha256_hex(data), parsed.parser)
    blocks, sections, lang = assemble(parsed.blocks, sha, settings, parsed.vocab, title)
    if not blocks and kind != "pdf":
        warnings.append("no text content found")
    source = Source(
        id=sha[:12],
        kind=kind,
        title=title,
        uri=str(path),
        sha256=sha,
        pages=parsed.pages,
        lang=lang,
        published_at=meta.published_at,
        labels=tuple(settings.default_labels),
        acl_groups=tuple(settings.default_acl_groups),
        warnings=tuple(warnings),
        authors=tuple(meta.authors),
        doi=meta.doi,
        arxiv_id=meta.arxiv_id,
        parser=parsed.parser,
    )
    return Document(source, blocks, sections=sections)


def _dispatch(
    path: Path,
    data: bytes,
    kind: SourceKind,
    settings: IngestSettings,
    password: str | None,
    warnings: list[str],
) -> tuple[Parsed, SourceKind]:
    """The format parser's output, and the kind (a .txt may turn out to be HTML)."""
    if kind == "pdf":
        reader = pdf_reader(path, settings)
        if reader == "grobid":
            return _grobid(path, data, settings, password), kind
        return parse_pdf(path, data, settings, password, reader), kind
    if kind in ("docx", "pptx", "epub", "xlsx"):
        check_archive(data, path.name, settings)
        budget = ElementBudget(path.name, settings.max_elements)
        if kind == "docx":
            return parse_docx(data, budget), kind
        if kind == "pptx":
            return parse_pptx(data, budget), kind
        if kind == "epub":
            return parse_epub(data, path.name, budget), kind
        return parse_xlsx(data, path.stem, budget), kind
    if kind == "tex":
        return parse_latex(path), kind
    decoded = decode_bytes(data, html=kind == "html")  # the one decoding rule
    text = decoded.text
    if decoded.warning:
        warnings.append(decoded.warning)
    if kind == "csv":
        return parse_csv(text, path.stem), kind
    if kind == "text" and _HTML_START.match(text):
        kind = "html"  # an HTML page saved as .txt: parse its markup, don't index it
        warnings.append("file is HTML despite its .txt name; parsed as HTML")
    if kind == "html":
        blocks, meta = parse_html(text)
    elif kind == "md":
        blocks, meta = parse_markdown(text)
    else:
        blocks, title = parse_text(text)
        meta = Meta(title=title)
        reason = garbled_reason(text[:20000])
        if reason:
            warnings.append(f"text looks garbled ({reason})")
    return Parsed(blocks, meta), kind
