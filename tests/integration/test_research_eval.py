"""`footnote eval research-dev` on real data (QASPER texts, PaperQA stubs) with no model: both
modes in one run, every quote of the library found in the materialised texts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.eval.loaders import default_data_dir
from footnote.eval.research import library_files, load_cases
from footnote.textnorm import contains

pytestmark = [pytest.mark.integration, pytest.mark.shared]
DATA = Path(os.environ.get("FOOTNOTE_EVAL__DATA_DIR") or default_data_dir())


@pytest.fixture(autouse=True)
def _needs_data() -> None:
    if not (DATA / "qasper-partial").is_dir():
        pytest.skip(f"needs ../shared/data (absent at {DATA})")


def _no_model_workspace(tmp_path: Path) -> Path:
    """A workspace folder whose model roles are unbound (the small local embedder stays)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.toml").write_text(
        '[models.compose]\nurl = ""\n[models.understand]\nurl = ""\n[models.judge]\nurl = ""\n'
        '[models.embed]\nurl = "local:wordllama"\n', encoding="utf-8")  # fmt: skip
    return ws


def test_every_qasper_quote_is_in_its_materialised_text(tmp_path: Path) -> None:
    cases = load_cases()
    files = library_files(cases, DATA, tmp_path)
    assert len(files) >= 20
    for case in cases:
        for kp in case["key_points"]:
            for src in kp["sources"]:
                if src["ref"].startswith("qasper:"):
                    assert contains(files[src["ref"]].read_text(encoding="utf-8"), src["quote"]), (
                        src
                    )


def test_eval_runs_both_modes_in_one_run(tmp_path: Path) -> None:
    ws = _no_model_workspace(tmp_path)
    args = ["eval", "research-dev", "--case", "rq-web-02", "--case", "rq-paperqa-02", "--no-judge",
            "--run-id", "t1", "--data-dir", str(DATA), "--json", "-w", str(ws)]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    brief, base = report["modes"]["brief"], report["modes"]["baseline"]
    assert brief["briefs"] == base["briefs"] == 2 and brief["errors"] == 0
    assert brief["citation_resolution"] == 1.0
    assert brief["conflicts_shown"] == "1/1" and base["searches"] < brief["searches"]
    assert "brief_minus_baseline" in report
    again = CliRunner().invoke(app, args)  # resumed: nothing left to do
    assert again.exit_code == 0 and json.loads(again.stdout)["modes"]["brief"]["briefs"] == 2


def test_a_scoped_eval_draws_on_each_question_s_own_papers(tmp_path: Path) -> None:
    """`--scoped`: each brief's library evidence comes from its case's papers only (as
    `research run --source` gives them), not the whole 27-paper dev library."""
    from footnote.eval.runs import open_run

    ws = _no_model_workspace(tmp_path)
    base = ["eval", "research-dev", "--case", "rq-qasper-02", "--no-judge", "--modes", "brief",
            "--data-dir", str(DATA), "--json", "-w", str(ws)]  # fmt: skip
    papers = {ref.split(":", 1)[1] for ref in load_cases(ids=("rq-qasper-02",))[0]["library"]}
    for run_id, scoped in (("whole", "--whole-library"), ("own", "--scoped")):
        result = CliRunner().invoke(app, [*base, "--run-id", run_id, scoped])
        assert result.exit_code == 0, result.output
    drawn = {
        run_id: {Path(c["url"]).stem for c in open_run(ws, run_id).records[0]["brief"]["cards"]}
        for run_id in ("whole", "own")
    }
    assert drawn["own"] and drawn["own"] <= papers, drawn["own"]
    assert drawn["whole"] - papers, drawn["whole"]  # the whole library reaches other papers
    assert open_run(ws, "own").meta["options"]["scoped"] is True
