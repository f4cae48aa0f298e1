"""Issue #32, "claims and origins": the analyst decides the groups the merge left undecided,
and the decision changes what the brief's cards and checklist say (real merge, real checks)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from footnote.pipelines.research.checks import coverage
from footnote.pipelines.research.merge import (
    MergeResult,
    apply_merge,
    independent_origins,
    merge_from_plain,
    merge_sources,
)
from footnote.pipelines.research.origin_review import (
    decide_brief,
    decided_merge,
    group_id,
    undecided_groups,
)
from footnote.pipelines.review.decisions import ReviewState, blockers, replay, version_hash
from footnote.serialize import to_plain
from footnote.store.records import ReviewAction
from footnote.types import (
    Brief,
    BriefSection,
    Claim,
    EvidenceCard,
    EvidenceStandard,
    Outline,
    OutlineItem,
    sha256_hex,
)


def _card(cid: str, text: str, title: str = "") -> EvidenceCard:
    return EvidenceCard(cid, text, text, "l", source_id=cid, source_title=title or "A web page",
                        block_id="b-" + cid)  # fmt: skip


CARDS = [
    _card("blog1", "Veldmark had 212,000 heat pumps in operation in 2023."),
    _card("blog2", "There were 212,000 heat pumps in operation in Veldmark in 2023, a record."),
    _card("halden", "We estimate the Veldmark battery recycling market at USD 1.2 billion in 2023.",
          "Halden Research | Battery Outlook 2024"),
    _card("para1", "According to Halden Research, the Veldmark battery recycling market was worth "
          "USD 1.2 billion in 2023."),
]  # fmt: skip


def _merged() -> tuple[MergeResult, list[EvidenceCard]]:
    merge = merge_sources([], [c.source_id for c in CARDS], threshold=0.5, min_confidence=0.8)
    return merge, apply_merge(CARDS, merge)


def _brief(*, min_independent: int = 2, primary: bool = False) -> tuple[Brief, MergeResult]:
    """A brief whose one chapter cites the two cards quoting one unattributed figure."""
    merge, cards = _merged()
    item = OutlineItem("pumps", "Heat pumps", "How many heat pumps run?",
                       standard=EvidenceStandard(min_independent=min_independent,
                                                 primary_required=primary))  # fmt: skip
    claims = (Claim("pumps-c1", "Veldmark had 212,000 heat pumps in 2023.", ("blog1", "blog2"),
                    verdict="supported"),)  # fmt: skip
    by_id = {c.id: c for c in cards}
    check = coverage(item, claims, by_id, [], lambda cs: independent_origins(cs, merge), ["done"], 2,
                     queries=("heat pumps",))  # fmt: skip
    check = replace(
        check, reasons=(*check.reasons, "judge not used: support not judged by a model")
    )
    brief = Brief(
        "r1", "How many heat pumps?", Outline("q", "trends", (item,), confirmed=True),
        (BriefSection("pumps", "Heat pumps", claims, bound_cards=("blog1", "blog2"),
                      coverage=check.state),),
        tuple(cards), checklist=(check,),
        not_covered=(f"Heat pumps: {'; '.join(check.reasons)}",) if check.state == "uncovered" else (),
    )  # fmt: skip
    return brief, merge


def _decision(
    merge: MergeResult, kind: str, who: str = "ana", reason: str = "checked"
) -> dict[str, Any]:
    (g,) = undecided_groups(merge)
    return {g.id: {"decision": kind, "reason": reason, "members": list(g.members), "by": who}}


def test_the_undecided_group_has_a_stable_id_and_survives_the_artifact() -> None:
    merge, cards = _merged()
    (g,) = undecided_groups(merge)
    assert g.members == ("blog1", "blog2") and g.id == group_id(["blog2", "blog1"])
    back = merge_from_plain(to_plain({
        "same_document": merge.same_document, "decisions": merge.decisions,
        "independence": merge.independence, "origin_of": merge.origin_of,
        "source_type": merge.source_type, "by_origin": merge.by_origin,
        "undecided": merge.undecided}))  # fmt: skip
    assert [x.id for x in undecided_groups(back)] == [g.id]
    for subset in ([0, 1], [0, 1, 2, 3], [2, 3], [1, 3]):
        chosen = [cards[i] for i in subset]
        assert independent_origins(chosen, back) == independent_origins(chosen, merge)


def test_undecided_pair_is_not_corroboration_until_the_analyst_confirms_independence() -> None:
    brief, merge = _brief()
    (before,) = brief.checklist
    assert before.state == "uncovered" and before.independent_sources == 1
    assert "1 independent source(s); the standard asks for 2" in before.reasons
    decided = decide_brief(brief, merge, _decision(merge, "independent", reason="two surveys"))
    (after,) = decided.checklist
    assert after.state == "covered" and after.independent_sources == 2
    assert not any("independent source(s)" in r for r in after.reasons)
    assert any(r.startswith("origin decided by the analyst: group og-") and "independent (ana)" in r
               for r in after.reasons)  # fmt: skip
    assert after.reasons[-1] == "judge not used: support not judged by a model"  # kept
    cards = {c.id: c for c in decided.cards}
    for cid in ("blog1", "blog2"):
        assert cards[cid].independence == "independent"
        assert cards[cid].attribution_confidence == 1.0
        basis = cards[cid].attribution_basis
        assert "confirmed by the analyst ana" in basis and "two surveys" in basis
    assert decided.sections[0].coverage == "covered" and decided.not_covered == ()
    assert cards["para1"] == {c.id: c for c in brief.cards}["para1"]  # other cards untouched


def test_same_origin_counts_once_and_says_so() -> None:
    brief, merge = _brief()
    decisions = _decision(merge, "same", reason="both copy the ministry's table")
    decided = decide_brief(brief, merge, decisions)
    (after,) = decided.checklist
    assert after.state == "uncovered" and after.independent_sources == 1
    assert "1 independent source(s); the standard asks for 2" in after.reasons
    cards = {c.id: c for c in decided.cards}
    assert cards["blog1"].independence == cards["blog2"].independence == "same_origin"
    assert "restate one origin" in cards["blog1"].attribution_basis
    assert "blog2" in cards["blog1"].origin_candidates
    assert decided.not_covered and "Heat pumps" in decided.not_covered[0]
    # the decided merge: the group is no longer undecided, its cards one origin
    after_merge = decided_merge(merge, decisions)
    assert after_merge.undecided == [] and merge.undecided  # the input is left as it was
    assert independent_origins(list(decided.cards[:2]), after_merge) == 1
    # with one origin enough, the chapter is covered by that one origin
    one, merge1 = _brief(min_independent=1)
    assert decide_brief(one, merge1, _decision(merge1, "same")).checklist[0].state == "covered"


def test_secondary_reports_are_not_a_primary_source() -> None:
    brief, merge = _brief(min_independent=1, primary=True)
    assert brief.checklist[0].state == "covered"  # library cards count as primary sources
    decided = decide_brief(brief, merge, _decision(merge, "secondary", reason="an aggregator"))
    (after,) = decided.checklist
    assert after.state == "uncovered"
    assert "the standard requires a primary source; none is cited" in after.reasons
    cards = {c.id: c for c in decided.cards}
    assert cards["blog1"].source_type == cards["blog2"].source_type == "secondary"
    assert cards["blog1"].independence == "same_origin"


def test_a_stale_or_unknown_decision_changes_nothing() -> None:
    brief, merge = _brief()
    (g,) = undecided_groups(merge)
    for bad in (
        {g.id: {"decision": "independent", "reason": "x", "members": ["blog1"], "by": "ana"}},
        {g.id: {"decision": "maybe", "reason": "x", "members": list(g.members), "by": "ana"}},
        {"og-00000000": {"decision": "independent", "reason": "x", "members": list(g.members)}},
    ):
        assert decide_brief(brief, merge, bad) == brief


def test_the_log_replays_origin_decisions_into_blockers_and_the_version() -> None:
    brief, merge = _brief()
    (g,) = undecided_groups(merge)
    names = [(g.id, f"2 cards quote one figure (group {g.id})")]
    empty = ReviewState()
    assert blockers(brief, empty, [], names) == [
        f"attribution undecided: 2 cards quote one figure (group {g.id})"
    ]
    old = sha256_hex(json.dumps({"brief": to_plain(replace(brief, review={})), "decisions": {},
                                 "ticks": {}, "resolutions": {}}, ensure_ascii=False, sort_keys=True,
                                separators=(",", ":"), default=str).encode())  # fmt: skip
    assert (
        version_hash(brief, empty) == old
    )  # a version signed before origin decisions keeps its hash
    data = {"decision": "same", "reason": "one table", "members": list(g.members)}
    action = ReviewAction(
        "r1", 1, "2026-01-01T00:00:00Z", "ana", "origin", g.id, data, "0" * 64, "h"
    )
    state = replay([action])
    assert state.origins[g.id] == {**data, "by": "ana", "at": "2026-01-01T00:00:00Z"}
    assert blockers(brief, state, [], names) == []
    assert version_hash(brief, state) != old
    changed = replay([action, replace(action, seq=2, data={**data, "decision": "independent"})])
    assert version_hash(brief, changed) != version_hash(brief, state)  # the last decision counts
