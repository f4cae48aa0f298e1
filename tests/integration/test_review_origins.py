"""Issue #32: the attribution the merge left undecided goes to the analyst. A real research
run (fixture web on loopback, real SQLite) lists its undecided groups; the analyst decides
them over HTTP (a real uvicorn on loopback), in the workspace or with the CLI; each decision is
logged in the hash-chained review log, changes the brief's cards, and sign-off waits for it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from research_support import open_ws, parts, run_all
from test_server_api import Server
from typer.testing import CliRunner

from footnote.cli import app
from footnote.errors import NotFound, UsageError
from footnote.eval.fixture_web import FixtureWeb
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace
from footnote.workspace.export import export_brief
from footnote.workspace.review import (
    audit_log,
    decide_origin,
    mark_seen,
    origin_groups,
    resolve_conflict,
    review_view,
    sign_off,
    signed_brief,
    tick,
)

pytestmark = pytest.mark.integration
runner = CliRunner()


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def finished_run(tmp_path: Path, web: FixtureWeb, user: str = "local") -> tuple[Workspace, str]:
    ws = open_ws(tmp_path / "ws", web, writer="extractive", select="rules")
    run_id, _ = run_all(ws, edits=None, template="market_size", user_id=user)
    return ws, run_id


def clear_other_blockers(ws: Workspace, run_id: str) -> None:
    view = review_view(ws, run_id)
    for c in (c for s in view["sections"] for c in s["claims"]):
        mark_seen(ws, run_id, c["id"], "ana")
        if c["key_number"] and not c["ticked"]:
            tick(ws, run_id, c["id"], "ana")
    for conflict in view["conflicts"]:
        resolve_conflict(ws, run_id, conflict["id"], "keep_both", "ana")


def test_undecided_groups_block_sign_off_until_decided_and_each_decision_is_logged(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws, run_id = finished_run(tmp_path, web)
    groups = origin_groups(ws, run_id)
    assert len(groups) >= 2, "the fixture run quotes figures without naming their origin"
    for g in groups:
        assert g["decision"] is None and len(g["cards"]) == len(g["members"]) >= 2
        assert len({c["source_id"] for c in g["cards"]}) >= 2  # different sources, side by side
        assert all(c["snippet"] and c["independence"] == "unconfirmed" for c in g["cards"])
    clear_other_blockers(ws, run_id)
    blocked = review_view(ws, run_id)["blockers"]
    assert len(blocked) == len(groups)
    assert all(b.startswith("attribution undecided:") for b in blocked)
    assert {g["id"] for g in groups} == {b.rsplit("(group ", 1)[1].rstrip(")") for b in blocked}
    with pytest.raises(UsageError, match="cannot sign off: attribution undecided"):
        sign_off(ws, run_id, "ana")
    # bad input is refused and not logged
    first, second, *rest = groups
    with pytest.raises(UsageError, match="expected same, independent, secondary"):
        decide_origin(ws, run_id, first["id"], "maybe", "ana", "why")
    with pytest.raises(UsageError, match="needs a reason"):
        decide_origin(ws, run_id, first["id"], "same", "ana", "  ")
    with pytest.raises(NotFound, match="no undecided attribution group"):
        decide_origin(ws, run_id, "og-00000000", "same", "ana", "why")
    assert not any(e["action"] == "origin" for e in audit_log(ws, run_id)["entries"])
    # the analyst decides: the brief's cards say so, the log holds who and why
    decide_origin(ws, run_id, first["id"], "same", "ana", "both copy the ministry's table")
    decide_origin(ws, run_id, second["id"], "independent", "ana", "two separate surveys")
    for g in rest:
        decide_origin(ws, run_id, g["id"], "secondary", "ana", "aggregators")
    view = review_view(ws, run_id)
    assert view["blockers"] == []
    cards = {c["id"]: c for c in view["cards"]}
    assert all(cards[m]["independence"] == "same_origin" for m in first["members"])
    assert all(cards[m]["independence"] == "independent" and "ana" in cards[m]["attribution_basis"]
               and "two separate surveys" in cards[m]["attribution_basis"]
               for m in second["members"])  # fmt: skip
    # the checklist (and so the exported brief) says which decisions its items rest on
    noted = [r for c in view["checklist"] for r in c["reasons"] if "decided by the analyst" in r]
    assert noted and all("(ana)" in r for r in noted)
    exported = export_brief(ws, run_id, "markdown")[0].decode()
    assert noted[0] in exported
    decided = {g["id"]: g["decision"] for g in view["origins"]}
    assert decided[first["id"]]["decision"] == "same" and decided[first["id"]]["by"] == "ana"
    log = audit_log(ws, run_id)
    entries = [e for e in log["entries"] if e["action"] == "origin"]
    assert log["verified"] and [e["target"] for e in entries][:2] == [first["id"], second["id"]]
    assert entries[0]["actor"] == "ana" and entries[0]["data"]["reason"] == (
        "both copy the ministry's table"
    ) and entries[0]["data"]["members"] == first["members"]  # fmt: skip
    signed = sign_off(ws, run_id, "ana")
    kept = {c.id: c for c in signed_brief(ws, run_id, signed.version).cards}
    assert all(kept[m].independence == "independent" for m in second["members"])
    # a later change of mind is a new version that needs a new sign-off
    decide_origin(ws, run_id, second["id"], "same", "bo", "one source after all")
    assert review_view(ws, run_id)["review"]["state"] == "changed_after_signoff"


def test_origins_over_http(tmp_path: Path, web: FixtureWeb) -> None:
    ws, run_id = finished_run(tmp_path, web, user="alice")
    alice, bob = ws.auth.add_key("alice"), ws.auth.add_key("bob")
    a, b = {"X-API-Key": alice}, {"X-API-Key": bob}
    with Server(ws, ServerDeps(use_models=False, research=parts())) as c:
        base = f"/v1/research/{run_id}/review/origins"
        listed = c.get(base, headers=a)
        assert listed.status_code == 200, listed.text
        groups: list[dict[str, Any]] = listed.json()
        assert groups and all(g["decision"] is None and len(g["cards"]) >= 2 for g in groups)
        gid = groups[0]["id"]
        # only who may review the run: another user sees nothing of it
        assert c.get(base, headers=b).status_code == 404
        ok = {"decision": "independent", "reason": "two surveys"}
        assert c.post(f"{base}/{gid}", json=ok, headers=b).status_code == 404
        assert c.post(f"{base}/{gid}", json=ok).status_code == 401
        # bad input: a clear 4xx
        bad = c.post(f"{base}/{gid}", json={"decision": "maybe", "reason": "x"}, headers=a)
        assert bad.status_code == 422 and "decision" in bad.text
        assert c.post(f"{base}/{gid}", json={"decision": "same"}, headers=a).status_code == 422
        blank = c.post(f"{base}/{gid}", json={"decision": "same", "reason": "  "}, headers=a)
        assert blank.status_code == 422 and "needs a reason" in blank.text
        missing = c.post(f"{base}/og-00000000", json=ok, headers=a)
        assert missing.status_code == 404 and "no undecided attribution group" in missing.text
        review = c.get(f"/v1/research/{run_id}/review", headers=a).json()
        assert sum(x.startswith("attribution undecided") for x in review["blockers"]) == len(groups)
        # the decision: answered with the review, the group decided, the cards confirmed
        done = c.post(f"{base}/{gid}", json=ok, headers=a)
        assert done.status_code == 200, done.text
        out = done.json()
        assert out["result"]["id"] == gid and out["result"]["decision"]["by"] == "alice"
        assert (
            sum(x.startswith("attribution undecided") for x in out["blockers"]) == len(groups) - 1
        )
        cards = {x["id"]: x for x in out["cards"]}
        assert all(cards[m]["independence"] == "independent" for m in groups[0]["members"])
        log = c.get(f"/v1/research/{run_id}/review/log", headers=a).json()
        assert log["verified"] and log["entries"][-1]["action"] == "origin"
        assert log["entries"][-1]["actor"] == "alice"
        signoff = c.post(f"/v1/research/{run_id}/review/signoff", headers=a)
        assert signoff.status_code == 409 and "attribution undecided" in signoff.text


def test_origins_cli_lists_and_decides(tmp_path: Path, web: FixtureWeb) -> None:
    ws, run_id = finished_run(tmp_path, web)
    folder = str(tmp_path / "ws")
    ws.close()
    help_ = runner.invoke(app, ["research", "origins", "--help"])
    assert help_.exit_code == 0
    assert (
        "--decide" in help_.stdout and "independent" in help_.stdout and "--reason" in help_.stdout
    )
    listed = runner.invoke(app, ["research", "origins", run_id, "-w", folder])
    assert listed.exit_code == 0, listed.output
    groups = json.loads(
        runner.invoke(app, ["research", "origins", run_id, "--json", "-w", folder]).stdout
    )
    assert groups and all(g["id"] in listed.stdout for g in groups)
    assert f"{len(groups)} undecided" in listed.stdout
    for card in groups[0]["cards"]:  # each snippet in its own column (the longest word shows it)
        assert max(card["snippet"].split(), key=len) in listed.stdout
    gid = groups[0]["id"]
    no_reason = runner.invoke(app, ["research", "origins", run_id, "--decide", gid, "same",
                                    "-w", folder])  # fmt: skip
    assert no_reason.exit_code == 2 and "needs a reason" in no_reason.output
    wrong = runner.invoke(app, ["research", "origins", run_id, "--decide", gid, "maybe",
                                "--reason", "x", "-w", folder])  # fmt: skip
    assert wrong.exit_code == 2
    unknown = runner.invoke(app, ["research", "origins", run_id, "--decide", "og-00000000", "same",
                                  "--reason", "x", "-w", folder])  # fmt: skip
    assert unknown.exit_code == 1 and "no undecided attribution group" in unknown.output
    done = runner.invoke(app, ["research", "origins", run_id, "--decide", gid, "secondary",
                               "--reason", "an aggregator of the ministry", "--user", "ana",
                               "--json", "-w", folder])  # fmt: skip
    assert done.exit_code == 0, done.output
    after = {g["id"]: g for g in json.loads(done.stdout)}
    assert after[gid]["decision"]["decision"] == "secondary"
    assert after[gid]["decision"]["by"] == "ana"
    log = json.loads(runner.invoke(app, ["research", "log", run_id, "--json", "-w", folder]).stdout)
    assert log["verified"] and log["entries"][-1]["action"] == "origin"
    assert log["entries"][-1]["data"]["reason"] == "an aggregator of the ministry"
    shown = runner.invoke(app, ["research", "origins", run_id, "-w", folder])
    assert f"{len(groups) - 1} undecided" in shown.stdout and "secondary" in shown.stdout
