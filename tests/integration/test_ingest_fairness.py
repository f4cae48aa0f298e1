"""Uploads of many users (#31 findings 6 and 13, the part left): fair scheduling per user
(`server.ingest_workers`), a user cancelling their own upload while it processes, a failed
upload not resumed forever, and a changed file uploaded again as a new version. A real server
on loopback (real SQLite, job queue and WordLlama embedder; no LLM) with keyed users; large
uploads are markdown files of 3,000 to 12,000 paragraphs (about 1 to 4.5 s to ingest here, a tiny
one 0.01 s)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import LiveServer, study_workspace

from footnote.server import create_app
from footnote.server.sources import job_id, resume_uploads
from footnote.server.state import ServerDeps, ServerState
from footnote.server.upload_tickets import UPLOAD_ATTEMPTS, read_ticket
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
USERS = {"alice": (), "bob": (), "carol": ()}
TINY = b"# Tiny note\n\nThe ZEBRAQUOKKA survey counted 41 animals.\n"


@dataclass
class Site:
    url: str
    keys: dict[str, str]
    ws: Workspace
    state: ServerState

    def http(self, user: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-API-Key": self.keys[user]}, timeout=60)


@contextmanager
def serve(root: Path, workers: int) -> Iterator[Site]:
    study_workspace(root).close()
    ws = Workspace.open(root / "ws", overrides={"server": {"ingest_workers": workers}})
    keys = {user: ws.auth.add_key(user, groups) for user, groups in USERS.items()}
    app = create_app(ws, ServerDeps(use_models=False))
    with LiveServer(app) as srv:
        yield Site(srv.url, keys, ws, app.state.footnote)
    ws.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with serve(tmp_path_factory.mktemp("fair"), workers=2) as s:
        yield s


def big(tag: str, paragraphs: int = 6000) -> bytes:
    """A long upload whose every paragraph names `tag`."""
    body = "\n\n".join(
        f"Paragraph {i} of {tag} discusses topic {i * 7 % 101} and measure {i * 13 % 997}."
        for i in range(paragraphs)
    )
    return f"# {tag}\n\n{body}\n".encode()


def upload(client: httpx.Client, name: str, data: bytes) -> str:
    resp = client.post("/v1/sources", files={"file": (name, data)})
    assert resp.status_code in (200, 202), resp.text[:300]
    source_id: str = resp.json()["id"]
    return source_id


def settle(client: httpx.Client, source_id: str) -> dict[str, Any]:
    for _ in range(1200):
        got: dict[str, Any] = client.get(f"/v1/sources/{source_id}").json()
        if got.get("status") != "processing":
            return got
        time.sleep(0.05)
    raise AssertionError("the upload did not settle")


def ready_order(clients: dict[str, httpx.Client], owners: dict[str, str]) -> list[str]:
    """Source ids (of `owners`: id -> user) in the order they became ready."""
    order: list[str] = []
    deadline = time.monotonic() + 120
    while len(order) < len(owners):
        assert time.monotonic() < deadline, f"not ready in time: {order}"
        for sid, user in owners.items():
            if sid not in order:
                got = clients[user].get(f"/v1/sources/{sid}").json()
                assert got["status"] != "failed", got
                if got["status"] == "ready":
                    order.append(sid)
        time.sleep(0.02)
    return order


def wait_running(site: Site, source_id: str) -> None:
    for _ in range(400):
        rec = site.state.queue.status(job_id(source_id))
        if rec is not None and rec.state == "running":
            return
        time.sleep(0.02)
    raise AssertionError("the upload's job never ran")


# -- fair scheduling per user ---------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_a_small_upload_waits_for_a_slot_never_behind_another_users_queue(
    site: Site, tmp_path: Path, workers: int
) -> None:
    with serve(tmp_path, workers) if workers != 2 else _same(site) as s:
        alice, bob = s.http("alice"), s.http("bob")
        sizes = (12000, 3000, 3000)  # the first runs while the others and alice's arrive
        b = [upload(bob, f"big-{workers}-{i}.md", big(f"B{workers}x{i}", n))
             for i, n in enumerate(sizes)]  # fmt: skip
        a = upload(alice, f"tiny-{workers}.md", TINY)
        first = s.state.queue.status(job_id(b[0]))  # (the premise: bob's first holds a slot)
        assert first is not None and first.state in ("queued", "running")
        owners = {**dict.fromkeys(b, "bob"), a: "alice"}
        order = ready_order({"alice": alice, "bob": bob}, owners)
    if workers == 2:  # a second slot: alice's upload runs beside bob's first
        assert order == [a, *b]
    else:  # one slot: alice's turn comes right after bob's running file, before his others
        assert order == [b[0], a, b[1], b[2]]


@contextmanager
def _same(site: Site) -> Iterator[Site]:
    yield site


def test_a_deletion_never_waits_for_another_users_ingest(site: Site) -> None:
    alice, bob = site.http("alice"), site.http("bob")
    mine = upload(alice, "mine.md", TINY.replace(b"41", b"42"))
    assert settle(alice, mine)["status"] == "ready"
    theirs = upload(bob, "long.md", big("LONGDELETE"))
    wait_running(site, theirs)
    assert alice.delete(f"/v1/sources/{mine}").status_code == 204
    rec = site.state.queue.status(job_id(theirs))
    assert rec is not None and rec.state == "running"  # bob's ingest had not ended meanwhile
    assert settle(bob, theirs)["status"] == "ready"


# -- a user cancels their own upload while it processes --------------------------------------
def test_a_user_cancels_their_own_upload_while_it_processes(site: Site) -> None:
    bob, carol = site.http("bob"), site.http("carol")
    first = upload(bob, "cancel-1.md", big("CANCELONE"))
    second = upload(bob, "cancel-2.md", big("CANCELTWO"))  # waits behind bob's first
    wait_running(site, first)
    assert carol.delete(f"/v1/sources/{first}").status_code == 404  # only its uploader
    for sid in (first, second):
        assert bob.get(f"/v1/sources/{sid}").json()["status"] == "processing"
        assert bob.delete(f"/v1/sources/{sid}").status_code == 204
        assert bob.get(f"/v1/sources/{sid}").status_code == 404
        assert not site.ws.upload_dir(sid).exists()  # the kept file and its ticket
    assert site.state.queue.status(job_id(second)) is None  # its turn never came
    done = site.state.queue.wait(job_id(first), timeout_s=120)  # the job in flight ends...
    assert done.state == "done"
    for sid in (first, second):  # ...and nothing of either stays or comes back
        assert site.ws.store.get_source(sid) is None
        assert bob.get(f"/v1/sources/{sid}").status_code == 404
    assert resume_uploads(site.state) == 0
    assert {first, second}.isdisjoint(s["id"] for s in bob.get("/v1/sources").json())
    hits = site.ws.searcher.search("Paragraph of CANCELONE discusses topic", k=5)
    assert all(h.block.source_id not in (first, second) for h in hits)


# -- a failed upload is not resumed forever --------------------------------------------------
def test_a_failed_upload_is_not_resumed_forever(site: Site) -> None:
    alice = site.http("alice")
    sid = upload(alice, "broken.docx", b"PK\x03\x04 this is not a real docx archive")
    first = settle(alice, sid)
    assert first["status"] == "failed" and first["error"]
    restarts = []
    for _ in range(UPLOAD_ATTEMPTS + 1):  # each call is what a restart does
        restarts.append(resume_uploads(site.state))
        got = settle(alice, sid)
        assert got["status"] == "failed" and got["error"] == first["error"]
    assert restarts == [1] * (UPLOAD_ATTEMPTS - 1) + [0, 0]
    ticket = read_ticket(site.ws, sid)
    assert ticket is not None and ticket["attempts"] == UPLOAD_ATTEMPTS and ticket["gave_up"]
    listed = {s["id"]: s for s in alice.get("/v1/sources").json()}
    assert listed[sid]["status"] == "failed" and listed[sid]["error"] == first["error"]
    assert alice.delete(f"/v1/sources/{sid}").status_code == 204
    assert alice.get(f"/v1/sources/{sid}").status_code == 404
    assert resume_uploads(site.state) == 0


# -- a changed file uploaded again is a new version ------------------------------------------
def test_a_changed_file_uploaded_again_is_a_new_version(site: Site) -> None:
    alice, carol = site.http("alice"), site.http("carol")
    v1 = upload(alice, "notes.md", b"# Notes\n\nThe first draft counts 7 otters.\n")
    assert settle(alice, v1)["version"] == 1
    v2 = upload(alice, "notes.md", b"# Notes\n\nThe second draft counts 9 otters.\n")
    got = settle(alice, v2)
    assert got["status"] == "ready" and got["version"] == 2 and v2 != v1
    listed = [s for s in alice.get("/v1/sources").json() if s["filename"] == "notes.md"]
    assert [s["id"] for s in listed] == [v2]  # the current version; the old one stays
    assert alice.get(f"/v1/sources/{v1}").json()["version"] == 1
    again = alice.post("/v1/sources", files={"file": ("notes.md", b"# Notes\n\nThe second "
                                                      b"draft counts 9 otters.\n")}).json()  # fmt: skip
    assert again["id"] == v2 and again["unchanged"] and again["version"] == 2
    other = upload(carol, "notes.md", b"# Notes\n\nCarol's own notes count 3 owls.\n")
    assert settle(carol, other)["version"] == 1  # another user's file of that name is its own


def test_slots_go_round_robin_to_the_user_served_longest_ago(site: Site, tmp_path: Path) -> None:
    from footnote.server.ingest_queue import FairIngest, Upload
    from footnote.workspace.jobs import open_queue

    queue = open_queue(site.ws.settings.model_copy(update={"workspace": tmp_path}))
    started: list[str] = []
    fair = FairIngest(queue, 1, on_start=lambda u: started.append(u.source_id) or True,
                      on_end=lambda u, rec: None)  # fmt: skip
    for user, n in (("a", 3), ("b", 2), ("c", 1)):
        for i in range(n):
            fair.add(Upload(f"{user}{i}", user, f"job-{user}{i}", {"paths": []}))
    fair.add(Upload("a0", "a", "job-a0", {"paths": []}))  # queued already: nothing
    fair.add(Upload("c9", "c", "job-c9", {"paths": []}))
    assert fair.cancel("c9") and not fair.holds("c9")  # taken out of its queue: never starts
    while len(started) < 6:
        fair.step()  # one slot: the job in flight must end before the next starts
        job = f"job-{started[-1]}"
        assert queue.ledger.claim(job, "w", 30, 0.0) == 1
        assert queue.ledger.finish(job, "w", {}, 1.0)
    assert started == ["a0", "b0", "c0", "a1", "b1", "a2"]
    fair.step()  # the last job ended: its slot is free, nothing waits
    assert not fair.running and not fair.waiting and not fair.holds("a2")
    queue.close()
