"""What the web app needs beyond the core API: a block's address (page, bbox) for the PDF
viewer, a source's original PDF bytes, a source's document outline, and the built static app
mounted at `/` (it must be mounted last: a mount at `/` shadows every later route)."""

from __future__ import annotations

import asyncio
import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.responses import FileResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from footnote.access import shown_source
from footnote.serialize import block_to_dict, section_to_dict, source_to_dict
from footnote.server.auth import current_user
from footnote.server.errors import ApiError, not_found
from footnote.server.sources import visible
from footnote.server.state import ServerState, get_state
from footnote.store import SourceRecord
from footnote.store.records import User
from footnote.types import Block, parse_evidence_id, parse_identity
from footnote.workspace.core import UPLOAD_TICKET

router = APIRouter(prefix="/v1", tags=["web"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
OUTLINE_TEXT_CHARS = 240


def _visible_source(state: ServerState, user: User, source_id: str) -> SourceRecord:
    record = state.ws.store.get_source(source_id)
    if record is None or not visible(user, record):
        raise not_found("source")
    return record


def _source_json(record: SourceRecord, user: User) -> dict[str, Any]:
    out = source_to_dict(shown_source(record.source, user.groups))
    out.update(status="ready", blocks=record.blocks, filename=Path(record.source.uri).name)
    return out


@router.get("/blocks/{evidence_id}")
async def get_block(evidence_id: str, state: State, user: Caller) -> dict[str, Any]:
    """A block (or the table holding a cell id `…#r1c2`) with its page, bbox (PDF points from
    the page's top-left) and section path, plus its source's kind and title."""
    block_id, _ = parse_evidence_id(evidence_id)
    block = state.ws.store.get_block(block_id)
    if block is None:
        raise not_found("block")
    record = _visible_source(state, user, block.source_id)
    out = block_to_dict(block)
    out.update(source_kind=record.source.kind, source_title=record.source.title)
    return out


@router.get("/sources/{source_id}/file", response_class=FileResponse)
async def get_source_file(source_id: str, state: State, user: Caller) -> Response:
    """The original PDF of a source (other kinds have no page image to show: 404); 410 when
    the file at its path no longer holds this version's bytes (it changed since)."""
    record = _visible_source(state, user, source_id)
    if record.source.kind != "pdf":
        raise not_found("original PDF")
    path, seen = await asyncio.to_thread(_original_file, state, record)
    if path is None:
        if seen:
            raise ApiError(410, "this version's file is no longer kept: the file at its path "
                           "has changed since it was ingested")  # fmt: skip
        raise not_found("original PDF")
    return FileResponse(
        path,
        media_type="application/pdf",
        headers={
            "Cache-Control": "private, max-age=3600",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox",
        },
    )


@lru_cache(maxsize=256)
def _file_sha(path: str, mtime_ns: int, size: int) -> str:
    """The sha256 of a file (cached while its mtime and size stay the same)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _original_file(state: ServerState, record: SourceRecord) -> tuple[Path | None, bool]:
    """The file holding exactly this version's bytes (`parse_identity` of its sha256 is the
    source's): the file it was ingested from, or its copy kept under `<workspace>/uploads`;
    and whether any candidate file exists at all."""
    candidates = [Path(record.source.uri)]
    uploads = state.ws.dir / "uploads" / record.source.id
    if uploads.is_dir():
        candidates += sorted(uploads.iterdir())
    seen = False
    for p in candidates:
        if not p.is_file() or p.name == UPLOAD_TICKET:
            continue
        seen = True
        st = p.stat()
        sha = _file_sha(str(p), st.st_mtime_ns, st.st_size)
        if parse_identity(sha, record.source.parser) == record.source.sha256:
            return p, True
    return None, seen


@router.get("/sources/{source_id}/document")
async def get_document(source_id: str, state: State, user: Caller) -> dict[str, Any]:
    """A source with its section tree and its blocks' addresses (tables in full, other
    blocks' text shortened): what the library's source page shows."""
    record = _visible_source(state, user, source_id)
    doc = state.ws.store.get_document(source_id)
    if doc is None:
        raise not_found("source")
    return {
        "source": _source_json(record, user),
        "sections": [section_to_dict(s) for s in doc.sections],
        "blocks": [_outline_block(b) for b in doc.blocks],
    }


def _outline_block(block: Block) -> dict[str, Any]:
    out = block_to_dict(block)
    out.pop("cells", None)
    if block.table is None and len(block.text) > OUTLINE_TEXT_CHARS:
        out["text"] = block.text[:OUTLINE_TEXT_CHARS] + "…"
    return out


WEB_CSP = (
    "default-src 'self'; script-src 'self'; img-src 'self' data:; "
    "style-src 'self' 'unsafe-inline'; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The web app's Content-Security-Policy: its own scripts only, no remote image (document text
is untrusted; KaTeX needs inline style attributes, pdf.js a worker)."""


class _RevalidatingFiles(StaticFiles):
    """Static files that browsers revalidate (ETag) on every load (asset names are stable),
    sent with the web app's Content-Security-Policy."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.setdefault("Cache-Control", "no-cache")
        response.headers.setdefault("Content-Security-Policy", WEB_CSP)
        return response


def static_dir() -> Path:
    """The built web app inside the installed package (`footnote/web/static`)."""
    return Path(str(resources.files("footnote") / "web" / "static"))


def mount_web(app: FastAPI, directory: Path | None = None) -> None:
    """Serve the web app at `/`. Call after every other route is registered."""
    folder = directory or static_dir()
    if (folder / "index.html").is_file():
        app.mount("/", _RevalidatingFiles(directory=folder, html=True), name="web")
