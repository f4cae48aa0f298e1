"""Answer matching, token F1, evidence matching, refusal metrics, calibration."""

from __future__ import annotations

from typing import Any

import pytest

from footnote.eval.cases import Case, GoldEvidence
from footnote.eval.metrics import (
    aggregate,
    answer_f1,
    answer_matches,
    calibration,
    evidence_found,
    evidence_scores,
    score_case,
    token_f1,
)


def case(answer: str | None = "0.74", accept: tuple[str | float, ...] = (), **kw: Any) -> Case:
    return Case(
        kw.pop("id", "c"), "p.md", "q?", kw.pop("type", "fact_lookup"), answer, accept, **kw
    )


@pytest.mark.parametrize(
    ("answer", "accept", "expected"),
    [
        ("The corpus holds 1.2 million passages.", (1_200_000.0,), True),
        ("It has 1,200,000 passages", ("1.2 million",), True),
        ("Recall reached 74%.", (0.74,), True),
        ("Recall reached 0.74", ("74%",), True),
        ("Recall reached 0.75", (0.74,), False),
        ("It uses  Reciprocal\nRank Fusion.", ("reciprocal rank fusion",), True),
        ("训练用了 120万 条样本", (1_200_000.0,), True),
        ("训练用了120万条样本", (1_200_000.0,), True),
        ("BM25 only", ("dense vectors",), False),
    ],
)
def test_answer_matches_strings_and_scaled_numbers(
    answer: str, accept: tuple[str | float, ...], expected: bool
) -> None:
    assert answer_matches(answer, accept) is expected


def test_token_f1_is_qasper_style() -> None:
    assert token_f1("The BM25 baseline.", "bm25 baseline") == 1.0
    assert token_f1("BM25", "BM25 and dense") == pytest.approx(0.5)
    assert token_f1("", "x") == 0.0


def test_answer_f1_refusals_and_yes_no() -> None:
    assert answer_f1(case(None), "", refused=True) == 1.0
    assert answer_f1(case(None), "Something", refused=False) == 0.0
    assert answer_f1(case("0.74"), "", refused=True) == 0.0
    assert answer_f1(case("Yes"), "Yes, they do.", refused=False) == 1.0
    assert answer_f1(case("No"), "Yes, they do.", refused=False) == 0.0
    assert answer_f1(case("relu", answers=("tanh",)), "tanh", refused=False) == 1.0


def test_evidence_strict_fuzzy_and_page() -> None:
    gold = GoldEvidence(2, "Hybrid retrieval reached a recall@10 of 0.74")
    block = {
        "page": 2,
        "text": "Results. Hybrid  retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61 on the test split.",
    }
    assert evidence_found(gold, block) == "strict"
    para = {"page": 2, "text": "Hybrid retrieval then reached a recall@10 of 0.74 on the test set."}
    assert evidence_found(gold, para) == "fuzzy"
    assert evidence_found(gold, {**block, "page": 3}) is None
    long_gold = GoldEvidence(None, "First sentence here about things. " * 3 + block["text"])
    assert evidence_found(long_gold, block) == "strict"  # a block that is a piece of the paragraph
    scores = evidence_scores(case(evidence=(gold,)), [block, {"page": 1, "text": "unrelated"}])
    assert scores["evidence_recall"] == 1.0
    assert scores["evidence_precision"] == 0.5


def _out(status: str, answer: str = "", **kw: Any) -> dict[str, Any]:
    return {"status": status, "answer": answer, "citations": [], "sentences": [], **kw}


def test_aggregate_refusal_rates_and_fabricated_ids() -> None:
    cases = [
        case(None, id="u1"),
        case(None, id="u2"),
        case("0.74", (0.74,), id="a1"),
        case("x", ("x",), id="a2"),
    ]
    cite = {
        "id": "b1",
        "sentence": "It is 0.74.",
        "page": 1,
        "text": "0.74",
        "verdict": "supported",
        "det_supported": True,
        "judge_supported": None,
        "fabricated": False,
    }
    outs = [
        _out("no_evidence"),
        _out("answered", "maybe"),
        _out(
            "answered",
            "It is 0.74.",
            citations=[cite],
            sentences=[{"text": "It is 0.74."}],
            fabricated_trace=1,
            checked_citations=2,
            latency_s=2.0,
            tokens=100,
            support_score=0.9,
        ),
        _out("weak_evidence", latency_s=4.0),
    ]
    scores = [score_case(c, o) for c, o in zip(cases, outs, strict=True)]
    m = aggregate(cases, scores)
    assert m["refusal_precision"] == 0.5  # one of two refusals was right
    assert m["refusal_recall"] == 0.5
    assert m["false_refusal_rate"] == 0.5
    assert m["answer_match"] == 0.5
    assert m["fabricated_ids"] == 0.5 and m["fabricated_in_output"] == 0
    assert m["citation_precision"] == 1.0 and m["citation_recall"] == 1.0
    cal = calibration(scores, 5)
    assert cal[4]["n"] == 1 and cal[4]["accuracy"] == 1.0
    assert cal[0]["n"] == 1 and cal[0]["accuracy"] == 0.0  # the unanswerable case that was answered
