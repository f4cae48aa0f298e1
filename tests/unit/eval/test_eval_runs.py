"""Stored runs (resume after a torn line), diffs, and report files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from footnote.eval.cases import Case, case_to_dict
from footnote.eval.diff import diff_runs
from footnote.eval.metrics import score_case
from footnote.eval.report import build_report, terminal_tables, write_reports
from footnote.eval.runs import create_run, list_runs, open_run


def _record(
    cid: str, answer: str, status: str = "answered", latency: float = 1.0
) -> dict[str, Any]:
    case = Case(cid, "p.md", f"question {cid}?", "fact_lookup", "0.74", (0.74,))
    out = {
        "status": status,
        "answer": answer,
        "citations": [],
        "sentences": [],
        "latency_s": latency,
        "support_score": 0.5,
    }
    return {"case": case_to_dict(case), "output": out, "scores": score_case(case, out)}


def test_run_resumes_and_ignores_a_torn_line(tmp_path: Path) -> None:
    run = create_run(tmp_path, "r1", {"case_ids": ["a", "b"], "dataset": "d", "mode": "extractive"})
    run.add(_record("a", "It is 0.74."))
    with (run.dir / "cases.jsonl").open("a") as f:
        f.write('{"case": {"id": "b"')  # interrupted mid-write
    again = open_run(tmp_path, "r1")
    assert again.done_ids == {"a"}
    assert list_runs(tmp_path)[0]["run_id"] == "r1"


def test_diff_reports_better_and_worse(tmp_path: Path) -> None:
    a = create_run(tmp_path, "a", {"case_ids": ["x", "y", "z"]})
    b = create_run(tmp_path, "b", {"case_ids": ["x", "y", "z"]})
    for r in (_record("x", "0.74"), _record("y", "no idea"), _record("z", "0.74")):
        a.add(r)
    for r in (_record("x", "", "no_evidence"), _record("y", "It is 0.74"), _record("z", "0.74")):
        b.add(r)
    d = diff_runs(a, b)
    assert (d["better"], d["worse"], d["same"]) == (1, 1, 1)
    changes = {c["id"]: c["change"] for c in d["cases"]}
    assert changes == {"x": "worse", "y": "better", "z": "same"}


def test_reports_are_written_with_inline_svg(tmp_path: Path) -> None:
    run = create_run(tmp_path, "r", {"case_ids": ["a", "b"], "dataset": "d", "mode": "cite"})
    run.add(_record("a", "0.74", latency=1.5))
    run.add(_record("b", "", "no_evidence", latency=0.2))
    report = write_reports(run)
    assert set(report["metrics"]) >= {
        "answer_match",
        "evidence_recall",
        "citation_precision",
        "fabricated_ids",
        "refusal_recall",
        "false_refusal_rate",
        "latency_p50_s",
        "tokens_per_case",
    }
    assert json.loads((run.dir / "report.json").read_text())["run_id"] == "r"
    page = (run.dir / "report.html").read_text()
    assert page.count("<svg") == 3 and "<script" not in page
    assert build_report(run)["by_type"]["fact_lookup"]["n"] == 2
    assert len(terminal_tables(report)) == 3


def test_a_case_added_after_a_torn_line_is_kept(tmp_path: Path) -> None:
    """A run resumed after a crash mid-write: the next case starts on a line of its own."""
    run = create_run(tmp_path, "r2", {"case_ids": ["a", "b", "c"], "dataset": "d"})
    run.add(_record("a", "0.74"))
    with (run.dir / "cases.jsonl").open("a") as f:
        f.write('{"case": {"id": "b"')  # the worker was killed mid-write
    resumed = open_run(tmp_path, "r2")
    resumed.add(_record("c", "0.74"))
    assert open_run(tmp_path, "r2").done_ids == {"a", "c"}
