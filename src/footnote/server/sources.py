"""Sources: upload (multipart, size and type limits, ingested in the background), list,
status, delete. A source is visible to a user when it has no ACL groups or shares one."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.ingest import SUPPORTED_SUFFIXES
from footnote.server.auth import current_user
from footnote.server.errors import ApiError, error_body, not_found
from footnote.server.schemas import SourceOut
from footnote.server.state import IngestJob, ServerState, get_state
from footnote.store import SourceRecord
from footnote.store.sessions import User

router = APIRouter(prefix="/v1/sources", tags=["sources"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
MULTIPART_SLACK = 64 * 1024


class UploadLimit:
    """ASGI middleware: refuse an upload whose Content-Length is over the limit before reading it."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/v1/sources":
            headers = dict(scope["headers"])
            length = headers.get(b"content-length")
            status, message = 0, ""
            if length is None:
                status, message = 411, "uploads must declare a Content-Length"
            elif not length.isdigit() or int(length) > self.max_bytes + MULTIPART_SLACK:
                status = 413
                message = f"the upload is larger than {self.max_bytes / 2**20:g} MiB"
            if status:
                code = "payload_too_large" if status == 413 else "length_required"
                body = json.dumps(error_body(code, message)).encode()
                await send({"type": "http.response.start", "status": status,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"connection", b"close")]})  # fmt: skip
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def visible(user: User, record: SourceRecord) -> bool:
    """Whether the user may see this source."""
    groups = record.source.acl_groups
    return user.groups is None or not groups or bool(set(groups) & set(user.groups))


def _out(record: SourceRecord) -> SourceOut:
    s = record.source
    return SourceOut(
        id=s.id, status="ready", title=s.title, filename=Path(s.uri).name, kind=s.kind,
        pages=s.pages, blocks=record.blocks, lang=s.lang, labels=list(s.labels),
        acl_groups=list(s.acl_groups),
    )  # fmt: skip


def _split(values: str) -> list[str]:
    return [v for v in re.split(r"[,\s]+", values) if v]


@router.post("", status_code=202, response_model=SourceOut)
async def upload_source(
    state: State,
    user: Caller,
    file: Annotated[UploadFile, File(description="A PDF, HTML, Markdown or text file.")],
    labels: Annotated[str, Form(description="Comma-separated labels.")] = "",
    acl_groups: Annotated[str, Form(description="Comma-separated ACL groups.")] = "",
) -> SourceOut:
    """Upload a document; it is parsed and indexed in the background (poll its status)."""
    name = Path(file.filename or "upload").name
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ApiError(415, f"unsupported file type {suffix or '(none)'!r}",
                       detail={"supported": sorted(SUPPORTED_SUFFIXES)})  # fmt: skip
    limit = int(state.settings.server.max_upload_mb * 2**20)
    if file.size is not None and file.size > limit:
        raise ApiError(413, f"the upload is larger than {limit / 2**20:g} MiB")
    groups = _split(acl_groups)
    if user.groups is not None and not set(groups) <= set(user.groups):
        raise ApiError(422, "acl_groups may only name groups you belong to")
    tmp = Path(tempfile.mkdtemp(dir=state.ws.dir))
    path = tmp / name
    sha = await asyncio.to_thread(_save, file, path, limit)
    if sha is None:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ApiError(413, f"the upload is larger than {limit / 2**20:g} MiB")
    source_id = sha[:12]
    final = state.ws.dir / "uploads" / source_id / name
    final.parent.mkdir(parents=True, exist_ok=True)
    path.replace(final)
    shutil.rmtree(tmp, ignore_errors=True)
    known = state.ws.store.get_source(source_id)
    if known is not None:
        return _out(known)
    job = state.jobs.get(source_id)
    if job is None or job.status != "processing":
        job = state.jobs[source_id] = IngestJob(source_id, name)
        state.spawn(_ingest(state, job, final, tuple(_split(labels)), tuple(groups)))
    return SourceOut(id=source_id, status="processing", filename=name)


def _save(file: UploadFile, path: Path, limit: int) -> str | None:
    h, size = hashlib.sha256(), 0
    with path.open("wb") as out:
        while chunk := file.file.read(1 << 20):
            size += len(chunk)
            if size > limit:
                return None
            h.update(chunk)
            out.write(chunk)
    return h.hexdigest()


async def _ingest(
    state: ServerState, job: IngestJob, path: Path, labels: tuple[str, ...], groups: tuple[str, ...]
) -> None:
    async with state.ingest_lock:
        try:
            report = await asyncio.to_thread(
                state.ws.ingest, [path], labels=labels, acl_groups=groups
            )
            failed = report.failed
            job.status = "failed" if failed else "ready"
            job.error = failed[0].error if failed else None
        except Exception as exc:
            job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"


@router.get("", response_model=list[SourceOut])
async def list_sources(state: State, user: Caller) -> list[SourceOut]:
    """Sources the caller may see (newest first), then uploads still processing or failed."""
    out = [_out(r) for r in state.ws.store.list_sources() if visible(user, r)]
    ready = {s.id for s in out}
    out += [
        SourceOut(
            id=j.source_id,
            status=j.status if j.status != "ready" else "processing",
            filename=j.filename,
            error=j.error,
        )
        for j in state.jobs.values()
        if j.source_id not in ready and j.status != "ready"
    ]
    return out


@router.get("/{source_id}", response_model=SourceOut)
async def get_source(source_id: str, state: State, user: Caller) -> SourceOut:
    """A source, or the status of its upload (`processing`, `failed` with the reason)."""
    record = state.ws.store.get_source(source_id)
    if record is not None:
        if not visible(user, record):
            raise not_found("source")
        return _out(record)
    job = state.jobs.get(source_id)
    if job is None:
        raise not_found("source")
    return SourceOut(id=source_id, status=job.status if job.status == "failed" else "processing",
                     filename=job.filename, error=job.error)  # fmt: skip


@router.delete("/{source_id}", status_code=204)
async def delete_source(source_id: str, state: State, user: Caller) -> Response:
    """Delete a source, its blocks and index entries."""
    record = state.ws.store.get_source(source_id)
    if record is None or not visible(user, record):
        raise not_found("source")
    async with state.ingest_lock:
        await asyncio.to_thread(state.ws.delete_source, source_id)
    state.jobs.pop(source_id, None)
    return Response(status_code=204)
