"""The analyst's review of a real brief (the pipeline over the fixture web on loopback):
decisions, edits re-checked by the gate, conflicts resolved, key figures ticked, sign-off with
the exact version hash, immutability of signed versions, and the hash-chained log."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from research_support import open_ws, run_all

from footnote.errors import UsageError
from footnote.eval.fixture_web import FixtureWeb
from footnote.pipelines.review.decisions import verify_chain
from footnote.workspace import Workspace
from footnote.workspace.research import research_store
from footnote.workspace.review import (
    audit_log,
    decide,
    decide_origin,
    edit_claim,
    mark_seen,
    resolve_conflict,
    review_store,
    review_view,
    sign_off,
    signed_brief,
    tick,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def reviewed_run(tmp_path: Path, web: FixtureWeb) -> tuple[Workspace, str]:
    ws = open_ws(tmp_path / "ws", web, writer="extractive", select="rules")
    run_id, _ = run_all(ws, edits=None, template="market_size")
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None
    return ws, run_id


def claims(view: dict) -> dict[str, dict]:
    return {c["id"]: c for s in view["sections"] for c in s["claims"]}


def clear_blockers(ws: Workspace, run_id: str, who: str = "ana") -> None:
    view = review_view(ws, run_id)
    for c in claims(view).values():
        mark_seen(ws, run_id, c["id"], who)
        if c["key_number"] and not c["ticked"]:
            tick(ws, run_id, c["id"], who)
    for conflict in view["conflicts"]:
        resolve_conflict(ws, run_id, conflict["id"], "keep_both", who)
    for group in view["origins"]:
        decide_origin(ws, run_id, group["id"], "same", who, "one figure, one origin")


def test_sign_off_needs_ticks_and_resolutions_then_records_the_version(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws, run_id = reviewed_run(tmp_path, web)
    view = review_view(ws, run_id)
    assert view["review"]["state"] == "unreviewed"
    assert any(b.startswith("key number not ticked") for b in view["blockers"])
    assert any(b.startswith("conflict not resolved") for b in view["blockers"])
    with pytest.raises(UsageError, match="cannot sign off"):
        sign_off(ws, run_id, "ana")
    first = next(iter(claims(view)))
    decide(ws, run_id, first, "reject", "ana", "off topic")
    clear_blockers(ws, run_id)
    assert review_view(ws, run_id)["blockers"] == []
    signed = sign_off(ws, run_id, "ana")
    assert signed.version == 1 and len(signed.version_hash) == 64
    cov = signed.coverage
    assert cov["claims"] == len(claims(view)) and cov["seen"] == cov["claims"]
    assert cov["rejected"] == 1 and cov["key_numbers_ticked"] == cov["key_numbers"]
    assert cov["conflicts_resolved"] == cov["conflicts"] >= 1
    assert cov["minutes"] >= 0
    after = review_view(ws, run_id)
    assert after["review"]["state"] == "signed" and after["review"]["reviewer"] == "ana"
    assert after["review"]["version_hash"] == signed.version_hash
    # the same version cannot be signed twice
    with pytest.raises(UsageError, match="already signed"):
        sign_off(ws, run_id, "ana")
    # a change after sign-off makes a new version that needs a new sign-off
    decide(ws, run_id, first, "approve", "ana")
    changed = review_view(ws, run_id)
    assert changed["review"]["state"] == "changed_after_signoff"
    assert changed["review"]["version"] == 2
    assert changed["review"]["version_hash"] != signed.version_hash
    v2 = sign_off(ws, run_id, "bo")
    assert v2.version == 2 and v2.version_hash == changed["review"]["version_hash"]
    # the signed v1 is kept exactly as signed: the rejected claim is still left out of it
    v1_brief = signed_brief(ws, run_id, 1)
    assert first not in {c.id for s in v1_brief.sections for c in s.claims}
    assert first in {c.id for s in signed_brief(ws, run_id, 2).sections for c in s.claims}
    assert v1_brief.review["version_hash"] == signed.version_hash
    assert v1_brief.review["state"] == "signed" and v1_brief.review["reviewer"] == "ana"
    assert signed_brief(ws, run_id, 2).review["reviewer"] == "bo"


def test_signed_versions_and_the_log_are_append_only(tmp_path: Path, web: FixtureWeb) -> None:
    ws, run_id = reviewed_run(tmp_path, web)
    clear_blockers(ws, run_id)
    head = review_store(ws).actions(run_id)[-1].seq
    with pytest.raises(UsageError, match="changed while signing"):  # an action landed meanwhile
        review_store(ws).add_signoff(run_id, "ana", "0" * 64, {}, {}, after_seq=head - 1)
    sign_off(ws, run_id, "ana")
    conn = ws.store.conn
    for sql in ("UPDATE review_signoffs SET reviewer = 'mallory'",
                "DELETE FROM review_signoffs", "UPDATE review_actions SET actor = 'mallory'",
                "DELETE FROM review_actions WHERE seq = 1"):  # fmt: skip
        with pytest.raises(sqlite3.IntegrityError, match=r"append-only|immutable"):
            conn.execute(sql)
    log = audit_log(ws, run_id)
    assert log["verified"] and log["entries"][-1]["action"] == "sign_off"
    assert log["head_hash"] == log["entries"][-1]["hash"]
    entries = review_store(ws).actions(run_id)
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(entries))
    # any edit of a stored entry, or a dropped one, breaks the chain where it happened
    forged = list(entries)
    forged[2] = replace(forged[2], actor="mallory")
    assert verify_chain(forged) == (False, "entry 3: hash does not match its content")
    assert not verify_chain(entries[:1] + entries[2:])[0]


def test_an_edit_goes_through_the_checks_again(tmp_path: Path, web: FixtureWeb) -> None:
    ws, run_id = reviewed_run(tmp_path, web)
    view = review_view(ws, run_id)
    cards = {c["id"]: c for c in view["cards"]}
    claim = next(c for c in claims(view).values() if c["kind"] == "claim" and c["key_number"])
    snippet = cards[claim["card_ids"][0]]["snippet"]
    # a figure that is in no cited card: refused, with the number check's reason
    wrong = edit_claim(ws, run_id, claim["id"], "The market grew by 97.5% in 2023.", "ana")
    assert not wrong["accepted"] and any("number" in k for k in wrong["reasons"])
    assert claims(review_view(ws, run_id))[claim["id"]]["decision"] is None
    # a card the chapter was not given is fabricated, not accepted
    forged = edit_claim(ws, run_id, claim["id"], snippet, "ana", card_ids=["card_ffffffffffff"])
    assert not forged["accepted"] and forged["fabricated"] == 1
    # the card's own sentence, shortened, passes and becomes the claim's text
    ok = edit_claim(ws, run_id, claim["id"], "In short: " + snippet, "ana")
    assert ok["accepted"] and ok["verdict"] in ("supported", "weak")
    after = claims(review_view(ws, run_id))[claim["id"]]
    assert after["decision"] == "edit" and after["text"].startswith("In short: ")
    assert not after["ticked"]  # the tick belongs to a text: an edited figure is ticked again
    actions = [a.action for a in review_store(ws).actions(run_id)]
    assert actions.count("edit_refused") == 2 and actions.count("edit") == 1
    reviewed = signed_brief(ws, run_id)
    text = {c.id: c.text for s in reviewed.sections for c in s.claims}[claim["id"]]
    assert text.startswith("In short: ")


def test_conflict_resolutions_are_validated(tmp_path: Path, web: FixtureWeb) -> None:
    ws, run_id = reviewed_run(tmp_path, web)
    conflict = review_view(ws, run_id)["conflicts"][0]
    with pytest.raises(UsageError, match="card_id"):
        resolve_conflict(ws, run_id, conflict["id"], "choose", "ana", card_id="card_nope")
    with pytest.raises(UsageError, match="note"):
        resolve_conflict(ws, run_id, conflict["id"], "annotate", "ana")
    chosen = conflict["values"][1]["card_id"]
    resolve_conflict(ws, run_id, conflict["id"], "choose", "ana", card_id=chosen, note="newer")
    res = next(c for c in review_view(ws, run_id)["conflicts"] if c["id"] == conflict["id"])
    assert res["resolution"] == {"resolution": "choose", "card_id": chosen, "note": "newer"}


def test_sign_off_needs_every_sampled_claim_opened_and_blockers_name_the_claims(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web, writer="extractive", select="rules", review_sample_rate=1.0)
    run_id, _ = run_all(ws, edits=None, template="market_size")
    view = review_view(ws, run_id)
    every = claims(view)
    key = [c for c in every.values() if c["key_number"]]
    sampled = [c for c in every.values() if c["sampled"]]
    assert key and sampled
    # the blockers quote the claims' text, never their ids
    for c in key:
        assert any(b.startswith("key number not ticked") and c["text"][:60] in b
                   for b in view["blockers"]), (c["text"], view["blockers"])  # fmt: skip
    assert not any(cid in b for cid in every for b in view["blockers"])
    # every key figure ticked and every conflict resolved, half a review: not enough
    for c in key:
        tick(ws, run_id, c["id"], "ana")
    for conflict in view["conflicts"]:
        resolve_conflict(ws, run_id, conflict["id"], "keep_both", "ana")
    for group in view["origins"]:
        decide_origin(ws, run_id, group["id"], "independent", "ana", "separate counts")
    left = review_view(ws, run_id)["blockers"]
    assert len(left) == len(sampled)
    assert all(b.startswith("sampled claim not opened: \u201c") for b in left)
    assert sampled[-1]["text"][:60] in " ".join(left)
    with pytest.raises(UsageError, match="sampled claim not opened"):
        sign_off(ws, run_id, "ana")
    for c in sampled:
        mark_seen(ws, run_id, c["id"], "ana")
    signed = sign_off(ws, run_id, "ana")
    assert signed.coverage["sampled_seen"] == signed.coverage["sampled"] == len(sampled)
