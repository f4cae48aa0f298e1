"""The ticket kept beside each upload (`<workspace>/uploads/<id>/upload.json`): who sent it, how
to ingest it, how many times its ingestion was started and why the last attempt failed.

A restart resumes an upload with a ticket until `UPLOAD_ATTEMPTS` attempts were started (an
attempt the server died in counts); after that it stays `failed` with its reason, is listed as
failed, can be deleted, and is never started again unless its uploader sends it anew. Tickets
are written under the upload's ingest guard, so a deletion that removes the folder never races
a ticket write that would bring the folder back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from footnote.jobs import JobQueue
from footnote.jobs.base import JobRecord
from footnote.server.ingest_queue import FairIngest
from footnote.workspace import Workspace
from footnote.workspace.core import UPLOAD_TICKET
from footnote.workspace.jobs import ingest_guard

TICKET = UPLOAD_TICKET
UPLOAD_ATTEMPTS = 3
"""Attempts at ingesting an upload (the first, and resumes after restarts) before it stays failed."""


def ticket_path(ws: Workspace, source_id: str) -> Path:
    """Where the upload's ticket lives."""
    return ws.upload_dir(source_id) / TICKET


def read_ticket(ws: Workspace, source_id: str) -> dict[str, Any] | None:
    """The upload's ticket, or None when there is none (deleted, never kept, unreadable)."""
    try:
        ticket = json.loads(ticket_path(ws, source_id).read_text())
    except (OSError, ValueError):
        return None
    return ticket if isinstance(ticket, dict) else None


def write_ticket(folder: Path, ticket: dict[str, Any]) -> None:
    """Write a ticket atomically into an existing upload folder."""
    tmp = folder / (TICKET + ".tmp")
    tmp.write_text(json.dumps(ticket))
    tmp.replace(folder / TICKET)


def _update(ws: Workspace, source_id: str, change: dict[str, Any]) -> dict[str, Any] | None:
    """Merge `change` into the ticket (under the upload's guard); the new ticket, or None when
    the upload is gone."""
    with ingest_guard(ws, source_id):
        ticket = read_ticket(ws, source_id)
        if ticket is None:
            return None
        ticket.update(change)
        try:
            write_ticket(ws.upload_dir(source_id), ticket)
        except OSError:
            return None
        return ticket


def begin_attempt(ws: Workspace, source_id: str) -> bool:
    """Count one more attempt at the upload; False when it must not start (gone, or out of
    attempts: then it is marked given up)."""
    ticket = read_ticket(ws, source_id)
    if ticket is None or ticket.get("gave_up"):
        return False
    attempts = int(ticket.get("attempts", 0))
    if attempts >= UPLOAD_ATTEMPTS:
        give_up(ws, source_id, ticket)
        return False
    return _update(ws, source_id, {"attempts": attempts + 1}) is not None


def give_up(ws: Workspace, source_id: str, ticket: dict[str, Any]) -> None:
    """Mark the upload failed for good, keeping the last attempt's reason."""
    error = ticket.get("error") or (
        f"not ingested after {UPLOAD_ATTEMPTS} attempts (the server stopped during each)"
    )
    _update(ws, source_id, {"gave_up": True, "error": error})


def end_attempt(ws: Workspace, source_id: str, error: str | None) -> None:
    """Record how an attempt ended: its error (the upload is given up after its last attempt),
    or none."""
    ticket = _update(ws, source_id, {"error": error})
    if ticket is not None and error and int(ticket.get("attempts", 0)) >= UPLOAD_ATTEMPTS:
        give_up(ws, source_id, ticket)


def exhausted(ticket: dict[str, Any]) -> bool:
    """Whether the upload may not be started again (given up, or out of attempts)."""
    return bool(ticket.get("gave_up")) or int(ticket.get("attempts", 0)) >= UPLOAD_ATTEMPTS


def attempt_error(record: JobRecord | None) -> str | None:
    """Why an ended ingest job did not ingest its upload (None: it did)."""
    if record is None:
        return "the upload's job was lost"
    if record.state == "failed":
        return "internal error while ingesting (see the server log)"
    failed = [f for f in (record.result or {}).get("files", []) if f.get("outcome") == "failed"]
    return str(failed[0].get("error") or "not ingested") if failed else None


def scheduler(ws: Workspace, queue: JobQueue, slots: int) -> FairIngest:
    """The fair upload scheduler of a server: each attempt counted on the ticket when it gets
    its slot, and its outcome recorded when its job ends."""
    return FairIngest(
        queue,
        slots,
        on_start=lambda upload: begin_attempt(ws, upload.source_id),
        on_end=lambda upload, record: end_attempt(ws, upload.source_id, attempt_error(record)),
    )
