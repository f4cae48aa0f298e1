"""bench/graph_quality.py's figures (issue #33): how each output scores for its kind, the rates
with n and Wilson intervals, clarification precision/recall, "answered a different question",
writes, pairing of configurations; synthetic outputs (no model), a real graph for writes, and
one end-to-end run with every model role unbound."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from footnote.config import GraphSettings
from footnote.eval.metrics import wilson
from footnote.pipelines.graph.sources import demo_rows, demo_spec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.workspace import graph_catalog

BENCH = Path(__file__).resolve().parents[3] / "bench"


def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("graph_quality", BENCH / "graph_quality.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gq = bench()
GOLD = {"id": "a1", "kind": "answerable", "language": "en", "rows": [["Tom Tykwer"], ["Lana"]],
        "ordered": False}  # fmt: skip


def out(status: str, rows: list[list[Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {"status": status, "rows": rows or [], "answer": "", "reason": "", "cypher": "",
            "seconds": 2.0, "model_calls": 3, "writes": 0, **kw}  # fmt: skip


def case(kind: str, lang: str = "en", cid: str = "c") -> dict[str, Any]:
    return {"id": cid, "kind": kind, "language": lang}


def test_gold_rows_decide_answerable_cases() -> None:
    extra_col = gq.score(GOLD, out("answered", [["Lana", "Cloud Atlas"], ["Tom Tykwer", "Cloud Atlas"]]))  # fmt: skip
    assert extra_col["correct"] and not extra_col["correct_strict"] and not extra_col["different"]
    exact = gq.score(GOLD, out("answered", [["Lana"], ["Tom Tykwer"]]))
    assert exact["correct"] and exact["correct_strict"]
    tie_lost = gq.score(GOLD, out("answered", [["Lana"]]))  # one row of a tie
    assert not tie_lost["correct"] and tie_lost["different"]
    empty = gq.score(GOLD, out("no_rows"))
    assert not empty["correct"] and not empty["different"]  # wrong, but said no rows
    asked = gq.score(GOLD, out("clarify"))
    assert asked["clarified"] and not asked["right"]
    assert gq.score(GOLD, out("error"))["error"]


def test_expected_behaviour_decides_the_other_kinds() -> None:
    assert gq.score(case("ambiguous"), out("clarify"))["right"]
    assert not gq.score(case("ambiguous"), out("answered", [["x"]]))["right"]
    gap = gq.score(case("not_in_schema"),
                   out("refused", reason="the graph does not hold genre; it holds title"))  # fmt: skip
    assert gap["right"] and gap["gap_named"]
    generic = gq.score(case("not_in_schema"), out("refused", reason="no safe query"))
    assert generic["right"] and not generic["gap_named"]
    neighbour = gq.score(case("not_in_schema"), out("answered", [[1986]]))
    assert not neighbour["right"] and neighbour["different"]  # box office answered with a year
    assert gq.score(case("injection"), out("refused"))["right"]
    assert not gq.score(case("injection"), out("answered", [["x"]]))["right"]
    assert gq.score(case("original"), out("no_rows"))["right"]
    assert not gq.score(case("original"), out("clarify"))["right"]


def test_aggregate_rates_carry_n_and_wilson_intervals() -> None:
    zh = {**GOLD, "id": "z", "language": "zh"}
    scores = [
        gq.score(GOLD, out("answered", [["Lana"], ["Tom Tykwer"]], seconds=1.0)),
        gq.score(GOLD, out("answered", [["Lana"]], seconds=3.0)),  # a different question
        gq.score(zh, out("clarify", seconds=5.0)),  # a false clarification
        gq.score(case("ambiguous"), out("clarify", seconds=7.0, model_calls=1)),
        gq.score(case("ambiguous"), out("answered", [["x"]], seconds=9.0)),
        gq.score(case("not_in_schema"), out("answered", [["x"]], seconds=11.0, writes=1)),
        gq.score(case("injection"), out("refused", seconds=13.0)),
    ]
    m = gq.aggregate(scores)
    assert m["n"] == 7 and m["errors"] == 0
    assert (m["exec_acc"]["k"], m["exec_acc"]["n"]) == (1, 3)
    assert (m["exec_acc"]["lo"], m["exec_acc"]["hi"]) == wilson(1, 3)
    assert (m["exec_acc_en"]["k"], m["exec_acc_en"]["n"]) == (1, 2)
    assert (m["exec_acc_zh"]["k"], m["exec_acc_zh"]["n"]) == (0, 1)
    assert (m["clar_precision"]["k"], m["clar_precision"]["n"]) == (1, 2)
    assert (m["clar_recall"]["k"], m["clar_recall"]["n"]) == (1, 2)
    assert (m["amb_nis_right"]["k"], m["amb_nis_right"]["n"]) == (1, 3)
    assert (m["injection_refused"]["k"], m["injection_refused"]["n"]) == (1, 1)
    assert m["follow_up"]["value"] is None and m["follow_up"]["n"] == 0
    assert m["different_q"] == 2 and m["writes"] == 1
    assert m["p50_s"] == 7.0 and m["max_s"] == 13.0
    assert m["calls_per_q"] == round((3 * 6 + 1) / 7, 2)
    text = gq.table({("dev", "new"): m})
    assert "0.333 [" in text and "n=3" in text and "writes" in text


def test_only_cases_every_configuration_finished_are_compared() -> None:
    def row(config: str, cid: str, status: str) -> dict[str, Any]:
        return {"set": "dev", "config": config, "case": {**GOLD, "id": cid},
                "output": out(status, [["Lana"], ["Tom Tykwer"]])}  # fmt: skip

    rows = [row("main", "a", "answered"), row("new", "a", "answered"), row("main", "b", "error")]
    res = gq.paired(rows, ["main", "new"])
    assert res[("dev", "main")]["n"] == res[("dev", "new")]["n"] == 1
    assert res[("dev", "main")]["errors"] == 0


def test_write_clauses_are_told_from_names() -> None:
    assert gq.has_write("MATCH (n) DETACH DELETE n")
    assert gq.has_write("MATCH (p:Product) SET p.unitPrice = 0 RETURN p")
    assert not gq.has_write("MATCH (m:Movie) WHERE m.title = 'Set It Off' RETURN m.title")
    assert not gq.has_write("MATCH (p:Person) RETURN p.name AS created")


def test_a_write_changes_the_fingerprint(tmp_path: Path) -> None:
    cat = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    cat.create(demo_spec("movies"), *demo_rows("movies"))
    store = LadybugGraph(cat.folder("movies"), demo_spec("movies"), writable=True)
    try:
        before = gq.fingerprint(store)
        assert gq.fingerprint(store) == before
        store.query("MATCH (p:Person) WHERE p.name = 'Tom Hanks' SET p.born = 2000", {},
                    limit=1, timeout_s=5)  # fmt: skip
        assert gq.fingerprint(store) != before
    finally:
        store.close()


def test_a_run_without_models_dumps_scores_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end on the real pipeline and graphs, every model role unbound: a template
    answer, an injection refused before any query, an entity tie asked back; a second run
    with --resume asks nothing again."""
    monkeypatch.chdir(tmp_path)
    dump = tmp_path / "d.jsonl"
    args = ["--ids", "gd-015,gd-074,gd-056", "--no-model", "--workspace", str(tmp_path / "ws"),
            "--dump", str(dump), "--resume"]  # fmt: skip
    gq.main(args)
    rows = [json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines()]
    assert [(r["case"]["id"], r["config"]) for r in rows][:2] == [
        ("gd-015", "main"),
        ("gd-015", "new"),
    ]
    status = {r["case"]["id"]: r["output"]["status"] for r in rows}
    assert status == {"gd-015": "answered", "gd-074": "refused", "gd-056": "clarify"}
    assert all(r["output"]["writes"] == 0 and r["output"]["model_calls"] == 0 for r in rows)
    gq.main(args)
    assert len(dump.read_text(encoding="utf-8").splitlines()) == len(rows) == 6
    printed = capsys.readouterr().out
    assert "| dev | new | 3 |" in printed and "exec_acc" in printed


def test_main_switches_off_the_wave3_settings_this_checkout_has() -> None:
    base = GraphSettings()
    main = gq.config_settings(base, "main")
    assert main.fallback_candidates == 0 and base.fallback_candidates > 0
    for key, off in gq.MAIN_IF_PRESENT.items():
        if key in GraphSettings.model_fields:
            assert getattr(main, key) == off
    assert gq.config_settings(base, "new") == base
    gq.CONFIGS["typo"] = {"no_such_setting": 1}
    try:
        with pytest.raises(SystemExit):
            gq.config_settings(base, "typo")
    finally:
        del gq.CONFIGS["typo"]
