"""`footnote eval` end to end: a 2-case generic dataset, extractive mode, resume and diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app

PAPER = """# A study of retrieval

## Method

We index every paragraph with BM25 and dense vectors, then fuse the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61. The corpus holds 1.2 million passages.
"""
CASES = [
    {
        "id": "recall",
        "paper": "paper.md",
        "question": "What recall@10 did hybrid retrieval reach?",
        "type": "fact_lookup",
        "answer": "0.74",
        "accept": [0.74],
        "evidence": [{"page": 1, "quote": "Hybrid retrieval reached a recall@10 of 0.74"}],
        "notes": "",
    },
    {
        "id": "gpu",
        "paper": "paper.md",
        "question": "Which GPU trained the entity linking model?",
        "type": "unanswerable",
        "answer": None,
        "accept": [],
        "evidence": [],
        "notes": "",
    },
]
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
runner = CliRunner()


@pytest.fixture()
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FOOTNOTE_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("FOOTNOTE_MODELS__EMBED__URL", "local:wordllama")
    monkeypatch.setenv("FOOTNOTE_ASK__USE_JUDGE", "false")
    monkeypatch.setenv("FOOTNOTE_EVAL__JUDGE_CITATIONS", "false")
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "paper.md").write_text(PAPER, encoding="utf-8")
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CASES) + "\n", encoding="utf-8")
    return path


def _eval(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["eval", *args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_eval_runs_resumes_and_diffs(dataset: Path, tmp_path: Path) -> None:
    report = _eval(str(dataset), "--mode", "extractive", "--run-id", "first", "--limit", "1")
    assert report["run_id"] == "first" and report["cases"] == 1
    metrics = report["metrics"]
    assert isinstance(metrics, dict)
    for key in (
        "answer_match",
        "evidence_recall",
        "citation_precision",
        "fabricated_ids",
        "refusal_recall",
        "false_refusal_rate",
        "latency_p50_s",
        "tokens_per_case",
    ):
        assert key in metrics
    assert metrics["answer_match"] == 1.0 and metrics["fabricated_ids"] == 0.0
    assert "fact_lookup" in report["by_type"]  # type: ignore[operator]

    # a second invocation with the same run id resumes: only the missing case runs
    run_dir = tmp_path / "ws" / "eval" / "first"
    meta = json.loads((run_dir / "run.json").read_text())
    meta["case_ids"].append("gpu")
    (run_dir / "run.json").write_text(json.dumps(meta))
    resumed = _eval(str(dataset), "--run-id", "first")
    assert resumed["cases"] == 2
    assert len((run_dir / "cases.jsonl").read_text().splitlines()) == 2
    assert (run_dir / "report.html").read_text().count("<svg") == 3

    _eval(str(dataset), "--mode", "extractive", "--run-id", "second")
    diff = _eval("diff", "first", "second")
    assert diff["shared"] == 2 and diff["better"] == diff["worse"] == 0
    listed = runner.invoke(app, ["eval", "ls", "--json"])
    assert {r["run_id"] for r in json.loads(listed.stdout)} == {"first", "second"}


def test_bad_dataset_line_is_reported_with_its_line(dataset: Path) -> None:
    with dataset.open("a") as f:
        f.write('{"id": "x", "paper": "paper.md"}\n')
    result = runner.invoke(app, ["eval", str(dataset)])
    assert result.exit_code == 1
    assert "cases.jsonl:3:" in result.stderr and "missing" in result.stderr


@pytest.mark.shared
@pytest.mark.skipif(
    not (SHARED / "qasper-partial").is_dir(), reason="needs ../shared/data (absent)"
)
def test_export_of_a_shared_dataset(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "qasper.jsonl"
    result = runner.invoke(
        app, ["eval", "export", "qasper-leval", str(out), "--data-dir", str(SHARED)]
    )
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) > 150
