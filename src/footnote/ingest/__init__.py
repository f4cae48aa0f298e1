"""Document ingestion: PDF, HTML, Markdown and plain text → a `Document` of addressable blocks.

Public API: `parse_file`, `discover`, `SUPPORTED_SUFFIXES`. Everything raised on purpose is an
`IngestError` subclass with a message a person can act on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from footnote.config import IngestSettings
from footnote.errors import IngestError, UnsupportedInput
from footnote.ingest.blocks import assemble
from footnote.ingest.cleanup import clean_text, garbled_reason
from footnote.ingest.html import parse_html
from footnote.ingest.markdown import parse_markdown
from footnote.ingest.pdfdoc import parse_pdf
from footnote.ingest.raw import RawBlock
from footnote.ingest.text import decode, parse_text
from footnote.types import Document, Source, SourceKind, sha256_hex

__all__ = ["SUPPORTED_SUFFIXES", "discover", "parse_file"]

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
}
SUPPORTED_SUFFIXES: frozenset[str] = frozenset(_KINDS)
"""Lower-case file suffixes `parse_file` reads."""


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


def parse_file(path: Path, settings: IngestSettings, *, password: str | None = None) -> Document:
    """Parse one file into a Document; raise IngestError subclasses on unusable input."""
    path = Path(path)
    try:
        resolved = path.resolve()
    except OSError as exc:
        raise IngestError(f"{path}: cannot resolve path ({exc})", path=str(path)) from None
    kind = _KINDS.get(resolved.suffix.lower())
    if kind is None:
        suffixes = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise UnsupportedInput(
            f"{resolved.name}: unsupported file type {resolved.suffix or '(none)'!r} "
            f"(supported: {suffixes})",
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
    sha = sha256_hex(data)
    warnings: list[str] = []
    pages = 1
    vocab: set[str] = set()
    raw: list[RawBlock]
    if kind == "pdf":
        parsed = parse_pdf(path, data, settings, password)
        raw, title, pages, vocab = parsed.blocks, parsed.title, parsed.pages, parsed.vocab
        warnings += parsed.warnings
    else:
        text = decode(data)
        if kind == "text" and _HTML_START.match(text):
            kind = "html"  # an HTML page saved as .txt: parse its markup, don't index it
            warnings.append("file is HTML despite its .txt name; parsed as HTML")
        if kind == "html":
            raw, title = parse_html(text)
        elif kind == "md":
            raw, title = parse_markdown(text)
        else:
            raw, title = parse_text(text)
        reason = garbled_reason(text[:20000]) if kind == "text" else None
        if reason:
            warnings.append(f"text looks garbled ({reason})")
    blocks, sections, lang = assemble(raw, sha, settings, vocab, clean_text(title) or path.stem)
    if not blocks and kind != "pdf":
        warnings.append("no text content found")
    source = Source(
        id=sha[:12],
        kind=kind,
        title=clean_text(title)[:300] or path.stem,
        uri=str(path),
        sha256=sha,
        pages=pages,
        lang=lang,
        labels=tuple(settings.default_labels),
        acl_groups=tuple(settings.default_acl_groups),
        warnings=tuple(warnings),
    )
    return Document(source, blocks, sections=sections)
