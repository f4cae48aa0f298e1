"""The evaluator must not flatter (issue 13): errors are not refusals, fabricated ids are the
model's, `answer_contains_all` means all, figure questions stay answerable, `eval diff` compares
the same cases, judged figures name their judge beside the deterministic figure."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from footnote.eval.cases import Case
from footnote.eval.diff import diff_runs
from footnote.eval.loaders import Dataset, load_paperqa
from footnote.eval.metrics import aggregate, answer_matches, score_case
from footnote.eval.report import build_report, headline_rows
from footnote.eval.runner import RunOptions, run_cases, start_run
from footnote.eval.runs import EvalRun, create_run
from footnote.events import Done, Error, Event, Final
from footnote.types import Answer
from footnote.workspace import Workspace

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared" / "data"
if not SHARED.is_dir():
    SHARED = REPO.parents[1] / "shared" / "data"


def out(status: str, **kw: Any) -> dict[str, Any]:
    return {"status": status, "answer": "", "citations": [], "sentences": [], **kw}


def test_errors_are_counted_apart_from_refusals() -> None:
    """An error on an unanswerable case was scored like a right refusal or like an answer."""
    cases = [Case("u1", "p", "q", "unanswerable", None), Case("u2", "p", "q", "unanswerable", None),
             Case("a1", "p", "q", "fact_lookup", "x", ("x",))]  # fmt: skip
    scores = [score_case(c, o) for c, o in zip(cases, [out("error"), out("no_evidence"),
                                                         out("error")], strict=True)]  # fmt: skip
    assert [s["correct"] for s in scores] == [False, True, False]
    m = aggregate(cases, scores)
    assert m["errors"] == 2 and m["refusals"] == 1 and m["n"] == 3
    assert m["refusal_recall"] == 0.5 and m["refusal_precision"] == 1.0
    # the only answerable case errored: no false-refusal rate (n=0), not a flattering 0.0
    assert m["false_refusal_rate"] is None and m["rates"]["false_refusal_rate"]["n"] == 0
    assert m["correct"] == round(1 / 3, 4) and m["accuracy_answerable"] == 0.0


def test_headline_fabricated_ids_are_what_the_model_cited() -> None:
    """The headline counted fabricated ids in the output (always 0 after the gate)."""
    c = Case("a", "p", "q", "fact_lookup", "x")
    s = score_case(c, out("answered", fabricated_trace=2, recited_trace=1, checked_citations=4))
    m = aggregate([c], [s])
    assert m["fabricated_ids"] == 0.5 and m["fabricated_ids_count"] == 2
    assert m["fabricated_in_output"] == 0 and m["recited"] == 1


def test_answer_contains_all_means_all() -> None:
    assert answer_matches("a reference molecule", ["reference", "original"], ["molecule"])
    assert not answer_matches("the reference one", ["reference", "original"], ["molecule"])
    assert not answer_matches("The Avenues", ["The Avenues", "Haight", "Civic Center"], (), 2)
    assert answer_matches(
        "The Avenues and Haight", ["The Avenues", "Haight", "Civic Center"], (), 2
    )


@pytest.mark.skipif(not (SHARED / "paperqa-stub-papers").is_dir(), reason="needs shared data")
def test_figure_questions_stay_answerable() -> None:
    """pqa-04 ("What is Base?", answer in Figure 3) was turned into an unanswerable case, so a
    refusal scored as correct; its `answer_contains_all` was merged into "any"."""
    cases = {c.id: c for c in load_paperqa(SHARED, Path("/tmp")).cases}
    base = cases["pqa-04"]
    assert base.type == "figure" and not base.unanswerable
    assert base.accept_all == ("molecule",)
    assert not score_case(base, out("no_evidence"))["correct"]
    assert cases["pqa-08"].accept_min == 2 and cases["pqa-06"].unanswerable


def run_of(tmp: Path, name: str, rows: list[tuple[str, dict[str, Any]]]) -> EvalRun:
    run = create_run(tmp, name, {"case_ids": [r[0] for r in rows]})
    for cid, scores in rows:
        run.add({"case": {"id": cid, "question": cid}, "output": {}, "scores": scores})
    return run


def test_diff_compares_the_same_cases(tmp_path: Path) -> None:
    """Metric means were taken over different cases on each side."""
    a = run_of(tmp_path, "a", [("1", {"correct": True, "citation_precision": 1.0}),
                               ("2", {"correct": False, "citation_precision": None})])  # fmt: skip
    b = run_of(tmp_path, "b", [("1", {"correct": True, "citation_precision": 0.5}),
                               ("2", {"correct": True, "citation_precision": 0.0}),
                               ("3", {"correct": True, "citation_precision": 1.0})])  # fmt: skip
    d = diff_runs(a, b)
    assert d["shared"] == 2 and d["only_b"] == ["3"]
    assert d["metrics"]["citation_precision"] == {"a": 1.0, "b": 0.5, "delta": -0.5, "n": 1}


def test_same_model_judge_is_flagged_beside_every_judged_figure(tmp_path: Path) -> None:
    run = run_of(tmp_path, "r", [("1", score_case(Case("1", "p", "q", "fact_lookup", "x"),
                                                   out("answered")))])  # fmt: skip
    run.meta["bindings"] = {"compose": "llamacpp:qwen.gguf", "judge": "llamacpp:qwen.gguf"}
    run.records[0]["case"] = {"id": "1", "paper": "p", "question": "q", "type": "fact_lookup",
                              "answer": "x"}  # fmt: skip
    rows = dict(headline_rows(build_report(run)))
    for judged, det in (("citation_precision_judge", "citation_precision"),
                        ("citation_recall_judge", "citation_recall")):  # fmt: skip
        assert "SAME model as the composer" in rows[judged] and "checks:" in rows[judged]
        assert det in rows


async def scripted(kind: str) -> AsyncIterator[Event]:
    if kind == "crash":
        raise RuntimeError("boom")
    if kind == "slow":
        await asyncio.sleep(5)
    if kind == "model_error":
        yield Error("ModelUnavailable", "the compose model is down")
    yield Final(Answer("q", "refused", (), reason="could not answer"))
    yield Done()


async def test_runner_records_crashes_timeouts_and_model_errors_as_errors(tmp_path: Path) -> None:
    ws = Workspace.open(tmp_path / "ws")
    (tmp_path / "p.md").write_text("# P\n\nSome text about glaciers.\n")
    kinds = {"c1": "crash", "c2": "slow", "c3": "model_error"}
    cases = [Case(cid, "p.md", cid, "unanswerable", None) for cid in kinds]
    ws.ask = lambda question, **_: scripted(kinds[question])  # type: ignore[method-assign]
    dataset = Dataset("t", cases, tmp_path)
    run, todo = start_run(ws, "t", dataset, RunOptions(judge_citations=False, timeout_s=0.5))
    await run_cases(ws, run, dataset, todo, RunOptions(judge_citations=False, timeout_s=0.5))
    statuses = {r["case"]["id"]: r["output"]["status"] for r in run.records}
    assert statuses == {"c1": "error", "c2": "error", "c3": "error"}
    assert all(not r["scores"]["correct"] and not r["scores"]["refused"] for r in run.records)
    ws.close()


def test_shown_means_shown_to_the_model_not_retrieved(tmp_path: Path) -> None:
    """An output citation of a block that was retrieved but not shown to the composer counted
    as not fabricated ("shown" was "retrieved")."""
    from footnote.eval.runner import _judge_citations
    from footnote.types import Citation, Sentence

    ws = Workspace.open(
        tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}}
    )
    (tmp_path / "p.md").write_text("# P\n\nGlaciers retreated 41 metres per year.\n")
    assert not ws.ingest([tmp_path / "p.md"]).failed
    block = next(b for r in ws.store.list_sources() for b in ws.store.iter_blocks(r.source.id)
                 if "41 metres" in b.text)  # fmt: skip
    answer = Answer("q", "answered", (Sentence("Glaciers retreated 41 metres per year.",
                                               citations=(Citation(block.id),)),))  # fmt: skip
    [shown] = _judge_citations(ws, answer, {block.id}, None)
    [unshown] = _judge_citations(ws, answer, set(), None)
    assert not shown["fabricated"] and shown["det_supported"]
    assert unshown["fabricated"]
    ws.close()
