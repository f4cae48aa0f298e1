"""Measure first, honestly (issue 29): whole-token answer matching, hedged refusals counted
apart, errors in the denominators they belong to, and n with a 95 % Wilson interval on every
rate of the aggregate and the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from footnote.eval.cases import Case
from footnote.eval.metrics import RATES, aggregate, answer_matches, score_case, wilson
from footnote.eval.report import build_report, headline_rows
from footnote.eval.runs import create_run


@pytest.mark.parametrize(
    ("answer", "accept", "expected"),
    [
        ("Sixteen participants took part.", ("six",), False),
        ("Six participants took part.", ("six",), True),
        ("They recruited 6 participants.", ("six",), True),
        ("Recall rose by 121%.", ("21%",), False),
        ("Recall rose by 1.21%.", ("21%",), False),
        ("Recall rose by 21%.", ("21%",), True),
        ("Recall rose by 21.0 %.", ("21%",), True),
        ("It scored 21.5 F1.", ("21",), False),
        ("It covers 2,100 papers.", ("100",), False),
        ("They fine-tune RoBERTa.", ("BERT",), False),
        ("They fine-tune BERT-base.", ("BERT",), True),
        ("The model is BERT.", ("BERT",), True),
        ("共1120万条样本", ("120万",), False),
        ("训练用了120万条样本", ("120万",), True),
        ("模型使用卷积神经网络", ("卷积",), True),
        ("一共十六个", ("六",), False),
        ("一共六个", ("六",), True),
    ],
)
def test_answer_matches_whole_tokens_and_numbers_by_value(
    answer: str, accept: tuple[str | float, ...], expected: bool
) -> None:
    assert answer_matches(answer, accept) is expected


def out(status: str, *sentences: str, **kw: Any) -> dict[str, Any]:
    return {
        "status": status,
        "answer": " ".join(sentences),
        "citations": [],
        "sentences": [
            {"text": s, "factual": True, "insufficient": status != "answered"} for s in sentences
        ],
        **kw,
    }


def unans(cid: str) -> Case:
    return Case(cid, "p", "What licence is the code under?", "unanswerable", None)


def answerable(cid: str, qtype: str = "fact_lookup") -> Case:
    return Case(cid, "p", "How many?", qtype, "12", ("12",))


def test_a_shown_weak_answer_is_hedged_not_a_clean_refusal() -> None:
    """A weak_evidence answer that shows a sentence scored as a right refusal."""
    hedged = score_case(unans("u1"), out("weak_evidence", "The code is MIT licensed."))
    clean = score_case(unans("u2"), out("weak_evidence"))
    assert hedged["hedged"] and not hedged["correct"] and hedged["refused"]
    assert clean["correct"] and not clean["hedged"]
    assert hedged["answer_f1"] == 0.0 and clean["answer_f1"] == 1.0
    m = aggregate([unans("u1"), unans("u2")], [hedged, clean])
    assert m["hedged"] == 1
    assert m["rates"]["hedged_rate"]["value"] == 0.5 and m["rates"]["hedged_rate"]["n"] == 2
    assert m["rates"]["clean_refusal_rate"]["value"] == 0.5
    assert m["correct"] == 0.5


def test_a_non_factual_refusal_note_is_still_a_clean_refusal() -> None:
    o = out("weak_evidence")
    o["sentences"] = [{"text": "The paper does not say.", "factual": False, "insufficient": False}]
    assert score_case(unans("u"), o)["correct"]


def test_errored_answerable_cases_lower_no_rate() -> None:
    """Every case crashed and the false-refusal rate read 0.0: the errors vanished from it."""
    cases = [answerable(f"a{i}") for i in range(4)]
    scores = [score_case(c, out("error")) for c in cases]
    m = aggregate(cases, scores)
    fr = m["rates"]["false_refusal_rate"]
    assert m["false_refusal_rate"] is None and fr["n"] == 0 and "error" in fr["of"]
    acc = m["rates"]["accuracy_answerable"]
    assert acc["value"] == 0.0 and acc["n"] == 4 and "errors count as wrong" in acc["of"]
    assert m["rates"]["correct"]["n"] == 4 and m["rates"]["error_rate"]["value"] == 1.0
    assert m["rates"]["precision"]["n"] == 0


def test_false_refusals_count_over_answerable_cases_that_ran() -> None:
    cases = [answerable("a1"), answerable("a2"), answerable("a3")]
    outs = [out("error"), out("no_evidence"), out("answered", "It is 12.")]
    m = aggregate(cases, [score_case(c, o) for c, o in zip(cases, outs, strict=True)])
    assert m["false_refusal_rate"] == 0.5 and m["rates"]["false_refusal_rate"]["n"] == 2
    assert m["rates"]["accuracy_answerable"]["value"] == round(1 / 3, 4)
    assert m["rates"]["precision"] == {**m["rates"]["precision"], "value": 1.0, "k": 1, "n": 1}


def test_premise_corrected_over_every_numeric_trap() -> None:
    cases = [answerable("t1", "numeric_trap"), answerable("t2", "numeric_trap")]
    outs = [out("answered", "It is 12."), out("answered", "It is 13.")]
    m = aggregate(cases, [score_case(c, o) for c, o in zip(cases, outs, strict=True)])
    assert m["rates"]["premise_corrected"]["value"] == 0.5
    assert m["rates"]["premise_corrected"]["n"] == 2


def test_wilson_interval() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_every_rate_carries_n_and_an_interval() -> None:
    cases = [answerable("a1"), unans("u1"), answerable("t1", "numeric_trap")]
    outs = [out("answered", "It is 12."), out("weak_evidence", "Maybe MIT."), out("error")]
    m = aggregate(cases, [score_case(c, o) for c, o in zip(cases, outs, strict=True)])
    assert set(m["rates"]) == set(RATES)
    for name, r in m["rates"].items():
        assert {"value", "k", "n", "lo", "hi", "of"} <= set(r), name
        assert r["of"], name
        if r["n"]:
            assert r["lo"] <= r["value"] <= r["hi"], name
            assert m[name] == r["value"], name
        else:
            assert r["value"] is None and m[name] is None, name


def test_report_states_n_interval_and_what_the_checks_cannot_see(tmp_path: Path) -> None:
    run = create_run(tmp_path, "r", {"case_ids": ["a1", "u1"]})
    for c, o in ((answerable("a1"), out("answered", "It is 12.")), (unans("u1"), out("error"))):
        run.add(
            {
                "case": {"id": c.id, "paper": "p", "question": c.question, "type": c.type,
                         "answer": c.answer, "accept": list(c.accept)},
                "output": o,
                "scores": score_case(c, o),
            }
        )  # fmt: skip
    rows = dict(headline_rows(build_report(run)))
    assert "n=1" in rows["accuracy_answerable"] and "95%" in rows["accuracy_answerable"]
    assert "n=1" in rows["refusal_recall"] and "errors count as wrong" in rows["refusal_recall"]
    assert "negation" in rows["citation_precision"]
    assert "by construction" in rows["fabricated_ids"]
    assert "hedged" in rows
