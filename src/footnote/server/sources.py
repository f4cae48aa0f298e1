"""Sources: upload (multipart, size and type limits, ingested in the background), list,
status, delete. Visibility is `access.readable_by`; an upload is owned by its uploader (who,
with admins, alone may delete it) and shared with the uploader's groups unless `acl_groups`
names fewer (`user:<id>` alone: private); only admins (and the local user) upload public
sources. The same bytes uploaded by another user become a record of their own."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from starlette.types import ASGIApp, Receive, Scope, Send

from footnote.access import (
    deletable_by,
    owned_acl,
    personal_group,
    readable_by,
    scoped_source_id,
    shared_with,
)
from footnote.ingest import SUPPORTED_SUFFIXES, formats_text, supported_formats
from footnote.labels import normalise_labels
from footnote.server.auth import current_user
from footnote.server.errors import ApiError, error_body, not_found
from footnote.server.ingest_queue import Upload
from footnote.server.schemas import SourceOut
from footnote.server.state import IngestJob, ServerState, get_state
from footnote.server.upload_tickets import (
    TICKET,
    attempt_error,
    exhausted,
    give_up,
    read_ticket,
    write_ticket,
)
from footnote.store import SourceRecord
from footnote.store.records import User
from footnote.workspace.jobs import ingest_guard

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/sources", tags=["sources"])
State = Annotated[ServerState, Depends(get_state)]
Caller = Annotated[User, Depends(current_user)]
MULTIPART_SLACK = 64 * 1024
MAX_NAME_BYTES = 200
"""Longest upload file name kept (file systems stop at 255 bytes, the folder adds none)."""


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
    return readable_by(record.source, user.groups)


def _out(state: ServerState, record: SourceRecord, user: User) -> SourceOut:
    s = record.source
    status, error = _index_state(state, record)
    return SourceOut(
        id=s.id, status=status, error=error, title=s.title, filename=Path(s.uri).name, kind=s.kind,
        pages=s.pages, blocks=record.blocks, lang=s.lang, labels=list(s.labels),
        acl_groups=list(s.acl_groups), owner=s.owner or None, shared_with=list(shared_with(s)),
        public=not s.acl_groups, can_delete=deletable_by(s, user.id, admin=user.admin),
        version=s.version,
    )  # fmt: skip


def _index_state(
    state: ServerState, record: SourceRecord
) -> tuple[Literal["processing", "ready", "failed"], str | None]:
    """A stored source is `ready` only once every block has its vector and lexical row:
    `processing` while its ingest job still runs, else `failed` with how much is missing."""
    missing = state.ws.indexer.vectors.unindexed(record.source.id)
    if missing == 0:
        return "ready", None
    job = state.queue.status(job_id(record.source.id))
    if state.ingest.holds(record.source.id) or (
        job is not None and job.state in ("queued", "running")
    ):
        return "processing", None
    return "failed", (
        f"{missing} of {record.blocks} blocks are not indexed; upload the file again to resume"
    )


def _split(values: str) -> list[str]:
    return [v for v in re.split(r"[,\s]+", values) if v]


@router.post("", status_code=202, response_model=SourceOut)
async def upload_source(
    state: State,
    user: Caller,
    file: Annotated[UploadFile, File(description=f"A file in one of: {formats_text()}.")],
    labels: Annotated[str, Form(description="Comma-separated labels.")] = "",
    acl_groups: Annotated[
        str,
        Form(
            description="Comma-separated groups to share with (default: all of yours; "
            "your `user:<id>` alone: private)."
        ),
    ] = "",
    public: Annotated[
        bool, Form(description="Visible to everyone (admins and the local user only).")
    ] = False,
) -> SourceOut:
    """Upload a document; it is parsed and indexed in the background (poll its status)."""
    name = Path(file.filename or "upload").name
    if len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES or not name.isprintable():
        raise ApiError(422, f"the file name must be printable and at most {MAX_NAME_BYTES} bytes")
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ApiError(415, f"unsupported file type {suffix or '(none)'!r} "
                       f"(supported: {formats_text()})",
                       detail={"supported": sorted(SUPPORTED_SUFFIXES)})  # fmt: skip
    limit = int(state.settings.server.max_upload_mb * 2**20)
    if file.size is not None and file.size > limit:
        raise ApiError(413, f"the upload is larger than {limit / 2**20:g} MiB")
    owner, groups, is_public = _visibility(state, user, _split(acl_groups), public)
    label_list = normalise_labels([*state.settings.ingest.default_labels, *_split(labels)])
    state.quotas.check_upload(user.id, file.size or 0)
    tmp = Path(tempfile.mkdtemp(dir=state.ws.dir))
    path = tmp / name
    try:
        sha = await asyncio.to_thread(_save, file, path, limit)
        if sha is None:
            raise ApiError(413, f"the upload is larger than {limit / 2**20:g} MiB")
        state.quotas.charge_upload(user.id, path.stat().st_size)
        acl = owned_acl(owner, tuple(dict.fromkeys(
            [*state.settings.ingest.default_acl_groups, *groups])), public=is_public)  # fmt: skip
        source_id = scoped_source_id(sha, owner, acl, label_list)
        known = state.ws.store.get_source(source_id)
        if known is not None:  # the same bytes, owner and visibility: this user's own record
            return _out(state, known, user).model_copy(update={"unchanged": True})
        final = state.ws.upload_dir(source_id) / name
        ticket = {"user_id": user.id, "owner": owner, "labels": label_list, "groups": groups,
                  "public": is_public, "filename": name, "attempts": 0}  # fmt: skip
        with ingest_guard(state.ws, source_id):  # not while a deletion of it runs
            final.parent.mkdir(parents=True, exist_ok=True)
            path.replace(final)
            write_ticket(final.parent, ticket)  # acknowledged: a restart resumes it
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _start(state, source_id, final, ticket)
    return SourceOut(id=source_id, status="processing", filename=name)


def job_id(source_id: str) -> str:
    """The ingest job of an upload (one per source id: submitting it again is a no-op)."""
    return f"upload-{source_id}"


def versions_uri(state: ServerState, filename: str) -> str:
    """The name an upload's versions share: its file name under `<workspace>/uploads` (with the
    owner, `Source.uri` links versions: the same user's same file name, changed, is a new one)."""
    return str(state.ws.dir / "uploads" / filename)


def _start(state: ServerState, source_id: str, path: Path, ticket: dict[str, Any]) -> None:
    """Queue the upload behind its user's others; its ingest job is submitted when its turn
    comes (again, when an earlier one finished without indexing it)."""
    state.jobs[source_id] = IngestJob(source_id, path.name, ticket["user_id"])
    payload = {"paths": [str(path)], "labels": list(ticket["labels"]),
               "acl_groups": list(ticket["groups"]), "owner": ticket["owner"],
               "public": bool(ticket["public"]), "user_id": ticket["user_id"],
               "filename": path.name, "upload": source_id,
               "uri": versions_uri(state, path.name)}  # fmt: skip
    state.ingest.add(Upload(source_id, str(ticket["user_id"]), job_id(source_id), payload))
    state.ensure_worker()


def _upload_state(state: ServerState, source_id: str) -> tuple[str, str | None] | None:
    """(`processing` | `ready` | `failed`, error) of a kept upload, or None when it has no
    ticket (deleted, or never kept). Waiting for its turn or in flight is `processing`; given
    up (`UPLOAD_ATTEMPTS`) is `failed` with the last reason; else its job's state says."""
    ticket = read_ticket(state.ws, source_id)
    if ticket is None:
        return None
    if state.ingest.holds(source_id):
        return "processing", None
    if ticket.get("gave_up"):
        return "failed", str(ticket.get("error") or "not ingested")
    rec = state.queue.status(job_id(source_id))
    if rec is None:  # its turn has not come (on the replica that took it)
        return "processing", None
    if rec.state in ("queued", "running"):
        return "processing", None
    if rec.state == "failed":
        log.warning("ingest job %s failed: %s", rec.id, rec.error)
    error = attempt_error(rec)
    return ("failed", error) if error else ("ready", None)


def resume_uploads(state: ServerState) -> int:
    """Restart the ingestion of acknowledged uploads a previous process did not finish (not
    stored, or stored but not fully indexed); how many were restarted. An upload whose
    `UPLOAD_ATTEMPTS` attempts were all started is not: it stays listed as failed."""
    n = 0
    for ticket_file in sorted((state.ws.dir / "uploads").glob(f"*/{TICKET}")):
        folder = ticket_file.parent
        ticket = read_ticket(state.ws, folder.name)
        if ticket is None or "filename" not in ticket:
            continue
        path = folder / str(ticket["filename"])
        record = state.ws.store.get_source(folder.name)
        if not path.is_file() or (record and state.ws.indexer.is_indexed(folder.name)):
            continue
        if exhausted(ticket):
            give_up(state.ws, folder.name, ticket)
            state.queue.cancel(job_id(folder.name))  # a lost worker's job is not reaped back
            state.jobs[folder.name] = IngestJob(folder.name, path.name, str(ticket["user_id"]))
            continue
        _start(state, folder.name, path, ticket)
        n += 1
    return n


def _visibility(
    state: ServerState, user: User, groups: list[str], public: bool
) -> tuple[str, tuple[str, ...], bool]:
    """(owner, ACL groups, public) of an upload by `user`, or 422 for groups they are not in."""
    keyed = state.auth.has_keys()
    owner = user.id if keyed else ""
    if user.groups is None:  # the local user, an admin: any groups; public when none named
        return owner, tuple(groups), public or not groups
    if public:
        raise ApiError(403, "only an admin may upload a public source")
    if not set(groups) <= set(user.groups):
        raise ApiError(422, "acl_groups may only name groups you belong to")
    mine = personal_group(user.id)
    chosen = groups or [g for g in user.groups if g != mine]
    return owner, tuple(chosen), False


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


@router.get("/formats")
async def list_formats(user: Caller) -> list[dict[str, Any]]:
    """The file formats an upload may have, each with its suffixes (the web app's picker)."""
    return [{"name": name, "suffixes": list(sfx)} for name, sfx in supported_formats()]


@router.get("", response_model=list[SourceOut])
async def list_sources(state: State, user: Caller) -> list[SourceOut]:
    """Sources the caller may see (newest first), then uploads still processing or failed."""
    out = [_out(state, r, user) for r in state.ws.store.list_sources() if visible(user, r)]
    ready = {s.id for s in out}
    for j in list(state.jobs.values()):
        if j.user_id != user.id or j.source_id in ready or state.ws.store.get_source(j.source_id):
            continue  # stored: listed above, or an older version
        upload = _upload_state(state, j.source_id)
        if upload is None:  # deleted
            continue
        status, error = upload
        out.append(SourceOut(id=j.source_id, status="processing" if status == "ready" else status,
                             filename=j.filename, error=error))  # fmt: skip
    return out


@router.get("/{source_id}", response_model=SourceOut)
async def get_source(source_id: str, state: State, user: Caller) -> SourceOut:
    """A source, or the status of its upload (`processing`, `failed` with the reason)."""
    record = state.ws.store.get_source(source_id)
    if record is not None:
        if not visible(user, record):
            raise not_found("source")
        return _out(state, record, user)
    ticket = read_ticket(state.ws, source_id)  # kept by any replica sharing the workspace
    if ticket is None or ticket.get("user_id") != user.id:
        raise not_found("source")
    status, error = _upload_state(state, source_id) or ("processing", None)
    return SourceOut(id=source_id, status=status if status == "failed" else "processing",
                     filename=str(ticket.get("filename", "")), error=error)  # fmt: skip


def _own_upload(state: ServerState, user: User, source_id: str) -> bool:
    """Whether `source_id` is a kept upload of the caller (waiting, processing or failed)."""
    ticket = read_ticket(state.ws, source_id)
    return ticket is not None and ticket.get("user_id") == user.id


def _cancel_upload(state: ServerState, source_id: str) -> None:
    """Stop an upload wherever it is (waiting for its turn: dropped; in flight: its job
    cancelled, its output discarded) and remove its kept file and ticket."""
    state.ingest.cancel(source_id)
    state.queue.cancel(job_id(source_id))
    with ingest_guard(state.ws, source_id):  # never between the task's check and its store
        shutil.rmtree(state.ws.upload_dir(source_id), ignore_errors=True)
    state.jobs.pop(source_id, None)


def _delete(state: ServerState, source_id: str) -> None:
    _cancel_upload(state, source_id)
    with ingest_guard(state.ws, source_id):  # another upload's ingest never holds this one
        state.ws.delete_source(source_id)


@router.delete("/{source_id}", status_code=204)
async def delete_source(source_id: str, state: State, user: Caller) -> Response:
    """Delete a source, its blocks and index entries, and its kept upload with its ingest job
    (cancelled: a retry or a restart never brings it back) — its owner or an admin only. The
    uploader's own upload that is still waiting, processing or failed is cancelled and removed
    the same way; a deletion never waits for another upload's ingest."""
    record = state.ws.store.get_source(source_id)
    if record is None and _own_upload(state, user, source_id):
        await asyncio.to_thread(_cancel_upload, state, source_id)
        return Response(status_code=204)
    if record is None or not visible(user, record):
        raise not_found("source")
    if not deletable_by(record.source, user.id, admin=user.admin):
        raise ApiError(403, "only the source's owner or an admin may delete it")
    await asyncio.to_thread(_delete, state, source_id)
    return Response(status_code=204)
