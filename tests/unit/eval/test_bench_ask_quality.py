"""bench/ask_quality.py's figures (issue 29): the evaluator's aggregate, each rate with n and its
95 % interval, hedged refusals and errors apart, calls and tokens per question; synthetic
outputs, no model."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from footnote.eval.cases import Case, GoldEvidence
from footnote.eval.loaders import Dataset
from footnote.eval.metrics import score_case

BENCH = Path(__file__).resolve().parents[3] / "bench"


def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("ask_quality", BENCH / "ask_quality.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def row(case: Case, status: str, *sentences: str, **kw: Any) -> dict[str, Any]:
    output = {
        "status": status,
        "answer": " ".join(sentences),
        "citations": [],
        "sentences": [{"text": s, "factual": True} for s in sentences],
        "latency_s": 10.0,
        "model_calls": 3,
        "tokens": 900,
        "prompt_tokens": 800,
        "first_status_s": 0.1,
        **kw,
    }
    return {"case": case.id, "output": output, "scores": score_case(case, output)}


def test_summary_prints_n_interval_hedged_errors_calls_and_tokens() -> None:
    aq = bench()
    cases = [Case(f"a{i}", "p", "How many?", "fact_lookup", "12", ("12",)) for i in range(3)]
    cases += [Case(f"u{i}", "p", "Licence?", "unanswerable", None) for i in range(2)]
    rows = [
        row(cases[0], "answered", "There are 12."),
        row(cases[1], "answered", "There are 16."),
        row(cases[2], "error"),
        row(cases[3], "weak_evidence", "It is MIT licensed."),
        row(cases[4], "no_evidence"),
    ]
    s = aq.summarise(cases, rows)
    assert s["n"] == 5 and s["errors"] == "1 (1 answerable)"
    assert s["hedged"].startswith("1 (1/2")
    assert s["precision"] == "0.500 [0.095–0.905 95%] n=2"
    assert s["accuracy_answerable"].endswith("n=3")  # the error counts as wrong
    assert s["false_refusals"] == "0.000 [0.000–0.658 95%] n=2"  # the error is left out
    assert s["clean_refusals"].startswith("0.500") and s["clean_refusals"].endswith("n=2")
    assert s["calls_per_q"] == 3.0 and s["tokens_per_q"] == 900.0
    printed = aq.table({("footnote-dev", "new"): s})
    assert "| footnote-dev | new | 5 | 1 (1 answerable) |" in printed
    assert "95% Wilson interval" in printed


def test_whole_test_half_is_picked_with_per_type_0() -> None:
    aq = bench()
    cases = [Case(f"fd-{i:03d}", "p", "q", "fact_lookup", "x", ("x",)) for i in range(1, 12)]
    ds = Dataset("d", cases, Path("."))
    assert len(aq.pick_dev(ds, [], "test", 0)) == 6
    assert len(aq.pick_dev(ds, [], "test", 2)) == 2


def test_help_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "ask_quality.py"), "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--dev-half" in done.stdout


def test_summary_of_a_dump_pairs_the_configurations(tmp_path: Path) -> None:
    """`--summary-of` reads an unfinished dump: a case only one configuration finished is left
    out of both, so the two columns always compare the same cases."""
    import json

    import pytest

    from footnote.eval.loaders import default_data_dir, load_dataset

    if not default_data_dir().is_dir():
        pytest.skip("footnote-dev needs ../shared/data")
    aq = bench()
    dev = load_dataset("footnote-dev", data_dir=default_data_dir(), cache_dir=tmp_path / "cache")
    a, b = dev.cases[0], dev.cases[1]
    lines = []
    for case, configs in ((a, ("main", "new")), (b, ("main",))):
        for config in configs:
            out = row(case, "no_evidence")["output"]
            lines.append({"set": "footnote-dev", "config": config, "case": case.id, "output": out})
    dump = tmp_path / "d.jsonl"
    dump.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    text = aq.summary_of(dump)
    assert text.startswith("1 cases finished by every configuration (main, new)")


def test_named_dev_cases_run_in_the_order_given() -> None:
    """A shuffled id list samples every type early in a run that may be cut short."""
    aq = bench()
    cases = [Case(f"fd-00{i}", "p", "Q?", "fact_lookup", "1", ("1",)) for i in range(1, 5)]
    ds = Dataset("footnote-dev", cases, Path("."))
    assert [c.id for c in aq.pick_dev(ds, ["fd-003", "fd-001"], "test", 0)] == ["fd-003", "fd-001"]


def test_resume_skips_what_the_dump_holds(tmp_path: Path) -> None:
    aq = bench()
    dump = tmp_path / "d.jsonl"
    assert aq.finished_in(dump) == set()
    dump.write_text(
        '{"set": "footnote-dev", "case": "fd-001", "config": "new"}\n\n'
        '{"set": "footnote-dev", "case": "fd-001", "config": "main"}\n',
        encoding="utf-8",
    )
    assert aq.finished_in(dump) == {
        ("footnote-dev", "fd-001", "new"),
        ("footnote-dev", "fd-001", "main"),
    }


def stages() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("ask_stages", BENCH / "ask_stages.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_wrong_case_gets_the_stage_that_explains_it() -> None:
    st = stages()
    gold = (GoldEvidence(None, "more than 280M nodes"),)
    case = Case("a1", "p", "How many nodes?", "fact_lookup", "280M", ("280M",), evidence=gold)
    shown = {"b1": "The literature graph has more than 280M nodes and edges."}
    other = {"b2": "We thank the reviewers."}

    def staged(status: str, answer: str, drafts: list[str], seen: dict[str, str]) -> str:
        out = {"status": status, "answer": answer, "citations": [], "shown_text": seen,
               "sentences": [{"text": answer, "factual": True}] if answer else [],
               "drafts": drafts}  # fmt: skip
        return str(st.stage(case, out, score_case(case, out)))

    assert staged("answered", "It has more than 280M nodes.", ["280M [1]"], shown) == ""
    assert staged("weak_evidence", "", ["No answer."], other) == "retrieval"
    assert staged("weak_evidence", "", ["It has 12M nodes [1]."], shown) == "selection/phrasing"
    assert staged("answered", "It has 12M nodes.", ["It has 12M nodes [1]."], shown) == (
        "check passed a wrong answer"
    )
    assert staged("weak_evidence", "", ["More than 280M nodes [1]."], shown) == (
        "check refused a right draft"
    )
    assert staged("error", "", [], shown) == "error"
    # a `cite` draft is judged by its answer, not by a quote that holds the gold words
    yes = json.dumps({"quote": "more than 280M nodes", "cite": "E1", "answer": "Yes"})
    assert staged("answered", "Yes", [yes], shown) == "check passed a wrong answer"
    right = json.dumps({"quote": "more than 280M nodes", "cite": "E1", "answer": "280M"})
    assert staged("weak_evidence", "", [right], shown) == "check refused a right draft"
    unanswerable = Case("u1", "p", "Licence?", "unanswerable", None)
    out = {"status": "answered", "answer": "MIT.", "citations": [],
           "sentences": [{"text": "MIT.", "factual": True}]}  # fmt: skip
    assert st.stage(unanswerable, out, score_case(unanswerable, out)) == "unanswerable answered"
