"""The research scorer on hand-made briefs: every metric can fail."""

from __future__ import annotations

from typing import Any

from footnote.eval.research_metrics import (
    citation_scores,
    conflict_scores,
    keypoint_labels,
    reprint_scores,
    score_brief,
    summarise,
)

TEXT = "The market was worth USD 1.2 billion in 2023. Growth is 14% a year."
CASE: dict[str, Any] = {
    "key_points": [
        {"id": "k1", "text": "The market was worth USD 1.2 billion in 2023.",
         "sources": [{"ref": "x", "quote": "The market was worth USD 1.2 billion in 2023."}]},
        {"id": "k2", "text": "Growth is 14% a year.", "sources": [{"ref": "x", "quote": "Growth is 14% a year."}]},
        {"id": "k3", "text": "Korvath opened a plant of 12,000 tonnes.",
         "sources": [{"ref": "y", "quote": "Korvath opened a 12,000-tonne plant."}]},
    ],
    "conflicts": [{"metric": "m", "values": [{"value": "1.2", "unit": "USD billion"}, {"value": "950", "unit": "USD million"}]}],
    "apparent_conflicts": [{"metric": "t", "values": [{"value": "38.5", "unit": "thousand tonnes"}, {"value": "41200", "unit": "tonnes"}]}],
    "reprint_groups": [["/ledger/a.html", "/wire/b.html", "/digest/c.html"]],
}  # fmt: skip


def card(
    cid: str,
    snippet: str,
    url: str = "",
    independence: str = "independent",
    span: list[int] | None = None,
) -> dict[str, Any]:
    return {"id": cid, "snippet": snippet, "url": url, "independence": independence,
            "span": span if span is not None else [0, len(snippet)], "snapshot_id": "s", "block_id": None}  # fmt: skip


def brief(
    claims: list[dict[str, Any]], cards: list[dict[str, Any]], conflicts: list[Any] | None = None
) -> dict[str, Any]:
    return {"sections": [{"claims": claims}], "cards": cards, "conflicts": conflicts or [],
            "not_covered": [], "checklist": [{"state": "covered"}], "wrapped_up": False,
            "budget_used": {"tokens": 1000, "calls": 4, "searches": 3, "fetches": 2, "seconds": 90}}  # fmt: skip


def test_keypoints_supported_omitted_contradicted() -> None:
    b = brief(
        [{"text": "The market was worth USD 1.2 billion in 2023.", "card_ids": ["c1"]},
         {"text": "Korvath opened a plant of 9,000 tonnes.", "card_ids": ["c2"]}],
        [card("c1", "The market was worth USD 1.2 billion in 2023."), card("c2", "Korvath opened a 9,000-tonne plant.")],
    )  # fmt: skip
    labels = {lab["id"]: lab["deterministic"] for lab in keypoint_labels(CASE, b, None)}
    assert labels == {"k1": "supported", "k2": "omitted", "k3": "contradicted"}
    judged = {
        lab["id"]: lab["judged"]
        for lab in keypoint_labels(CASE, b, lambda kp, _p: 0.9 if "1.2" in kp else 0.1)
    }
    assert judged == {"k1": "supported", "k2": "omitted", "k3": "contradicted"}


def test_citation_precision_recall_and_resolution() -> None:
    b = brief(
        [{"text": "The market was worth USD 1.2 billion in 2023.", "card_ids": ["c1", "c2"]},
         {"text": "It grew 40% in 2019.", "card_ids": ["c1"]}],
        [card("c1", "The market was worth USD 1.2 billion in 2023."), card("c2", "Unrelated words here.", span=[0, 3])],
    )  # fmt: skip
    s = citation_scores(
        b, lambda c: c["snippet"], lambda claim, snip: 1.0 if claim[:10] == snip[:10] else 0.0
    )
    assert s["claims"] == 2 and s["citations"] == 3
    assert s["precision_det"] == round(1 / 3, 4) and s["recall_det"] == 0.5
    assert s["precision_judged"] == round(1 / 3, 4) and s["recall_judged"] == 0.5
    assert s["resolution"] == round(2 / 3, 4)  # c2's span does not hold its snippet


def test_conflicts_reprints_and_the_summary() -> None:
    shown = [
        {"values": [{"value": 1.2e9}, {"value": 9.5e8}]},
        {"values": [{"value": 38500.0}, {"value": 41200.0}]},
    ]
    c = conflict_scores(CASE, brief([], [], shown))
    assert c == {"gold": 1, "shown": 1, "apparent": 1, "false_conflicts": 1, "reported": 2}
    cards = [card("a", "x", "http://ledger.example/a.html"), card("b", "x", "http://wire.example/b.html"),
             card("c", "x", "http://digest.example/c.html", "same_origin")]  # fmt: skip
    assert reprint_scores(CASE, brief([], cards))["counted_independent_extra"] == 1
    good = score_brief(CASE, brief([], [card("a", "x")]), lambda _c: "x", None)
    records = [
        {"mode": "brief", "case": "1", "scores": good},
        {"mode": "brief", "case": "2", "error": "boom"},
    ]
    summary = summarise(records, "brief")
    assert summary["briefs"] == 1 and summary["errors"] == 1  # an error is counted, not scored
    assert summary["tokens_vs_seed"] == round(1000 / 886_000, 4) and summary["minutes"] == 1.5
