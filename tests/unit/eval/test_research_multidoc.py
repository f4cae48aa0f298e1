"""The multi-document research set (issue #32) and its scorer: the data's shape and quotes
(checked against the papers in the shared data), and every score on hand-made briefs."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from footnote.eval.loaders import default_data_dir
from footnote.eval.research import DATA, load_cases
from footnote.eval.research_multidoc import (
    brief_pages,
    conflict_values,
    inventions,
    load_multidoc,
    quote_problems,
    summarise,
    table,
    text_pages,
    uncovered_stated,
)
from footnote.serialize import brief_to_dict
from footnote.types import Brief, BriefSection, Claim, EvidenceCard, Outline

BENCH = Path(__file__).resolve().parents[3] / "bench"
SHARED = default_data_dir()
needs_shared = pytest.mark.skipif(
    not (SHARED / "qasper-partial").is_dir() or not (SHARED / "paperqa-stub-papers").is_dir(),
    reason=f"needs the shared data (QASPER, PaperQA stubs) at {SHARED}: absent",
)


# -- the data ------------------------------------------------------------------------------
def test_multidoc_set_shape() -> None:
    cases = load_multidoc()
    dev_keys = set(load_cases()[0]) | {"apparent_conflicts"}
    assert len(cases) >= 8
    assert len({c["id"] for c in cases}) == len(cases)
    assert not {c["id"] for c in cases} & {c["id"] for c in load_cases()}
    zh = [c for c in cases if c["lang"] == "zh"]
    assert len(zh) >= 2 and all(re.search(r"[\u4e00-\u9fff]", c["question"]) for c in zh)
    for c in cases:
        assert set(c) <= dev_keys, set(c) - dev_keys
        assert 2 <= len(c["library"]) <= 4 and not c["web"], c["id"]
        assert all(not r.startswith("sci-pdfs/") and not r.endswith(".pdf") for r in c["library"])
        assert 4 <= len(c["key_points"]) <= 8, c["id"]
        papers = {s["ref"] for kp in c["key_points"] for s in kp["sources"]}
        assert len(papers) >= 2, f"{c['id']}: key points from one paper only"
        assert c["uncoverable"] and all(isinstance(u, str) and u for u in c["uncoverable"])
        assert c["conflicts"], c["id"]
        for cf in c["conflicts"]:
            assert len(cf["values"]) >= 2
            for v in cf["values"]:
                assert {"value", "unit", "year", "scope", "source", "quote"} <= set(v)
                assert v["scope"].strip() and float(v["value"]) >= 0
            assert len({float(v["value"]) for v in cf["values"]}) >= 2, "the figures must differ"
        if c["lang"] == "zh":
            assert all(re.search(r"[\u4e00-\u9fff]", kp["text"]) for kp in c["key_points"])


@needs_shared
@pytest.mark.shared
def test_multidoc_quotes_occur_in_the_papers() -> None:
    assert quote_problems(load_multidoc(), SHARED) == []


@needs_shared
@pytest.mark.shared
def test_quote_check_fails_on_one_changed_character() -> None:
    cases = copy.deepcopy(load_multidoc()[:1])
    quote = cases[0]["key_points"][0]["sources"][0]["quote"]
    i = next(i for i, ch in enumerate(quote) if ch.isdigit() or ch.isalpha())
    cases[0]["key_points"][0]["sources"][0]["quote"] = (
        quote[:i] + ("7" if quote[i] != "7" else "8") + quote[i + 1 :]
    )
    problems = quote_problems(cases, SHARED)
    assert len(problems) == 1 and "quote not in the paper" in problems[0]
    cases[0]["conflicts"][0]["values"][0]["quote"] = "x" * 201
    assert any("201 characters" in p for p in quote_problems(cases, SHARED))


def test_quote_check_refuses_a_paper_outside_the_library(tmp_path: Path) -> None:
    case = copy.deepcopy(load_multidoc()[0])
    case["key_points"][0]["sources"][0]["ref"] = "qasper:1902.09666"
    assert "qasper:1902.09666" not in case["library"]
    problems = quote_problems([case], tmp_path)  # no data: the ref check needs none
    assert any("not in the question's library" in p for p in problems)
    assert all("cannot be read" in p for p in problems if "library" not in p)


def test_every_library_paper_is_indexed() -> None:
    index = json.loads((DATA / "qasper_papers.json").read_text(encoding="utf-8"))
    keys = set(index) | {e.get("leval_id") for e in index.values()}
    for c in load_multidoc():
        for ref in c["library"]:
            assert (
                ref.split(":", 1)[1] in keys
                if ref.startswith("qasper:")
                else ref.startswith("paperqa-stub-papers/")
            )


# -- the scorer on hand-made briefs --------------------------------------------------------
CASE: dict[str, Any] = {
    "id": "md-x", "lang": "en",
    "key_points": [{"id": "k1", "text": "F1 is 88%.", "sources": [{"ref": "a", "quote": "F1 of 88%"}]},
                   {"id": "k2", "text": "Latency is 8 ms.", "sources": [{"ref": "b", "quote": "8 ms"}]}],
    "conflicts": [{"metric": "F1", "values": [
        {"value": "88", "unit": "percent", "year": None, "scope": "Waseem", "source": "a", "quote": "q"},
        {"value": "93.75", "unit": "percent", "year": None, "scope": "clinical", "source": "b", "quote": "q"},
        {"value": "4", "unit": "million sentences", "year": None, "scope": "NMT", "source": "b", "quote": "q"}]}],
    "uncoverable": ["how BERT-large would perform on these tasks"],
}  # fmt: skip


def cv(value: float, scope: str = "") -> dict[str, Any]:
    return {"card_id": "c1", "value": value, "unit": "", "text": "", "scope": scope}


def fake_brief(
    claims: list[dict[str, Any]] | None = None,
    conflicts: list[dict[str, Any]] | None = None,
    not_covered: list[str] | None = None,
    checklist: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "sections": [{"claims": claims or [], "notes": []}],
        "cards": [{"id": "c1", "snippet": "BERT reaches an F1 of 88% on Waseem."},
                  {"id": "c2", "snippet": "The model answers in 8 ms per query."}],
        "conflicts": conflicts or [], "not_covered": not_covered or [],
        "checklist": checklist or [{"title": "Results", "state": "covered", "reasons": []}],
    }  # fmt: skip


def test_conflict_values_side_by_side_with_scope() -> None:
    none = conflict_values(CASE, fake_brief())
    assert none == {"values": 3, "shown": 0, "shown_with_scope": 0}
    alone = conflict_values(CASE, fake_brief(conflicts=[{"values": [cv(88, "Waseem"), cv(50)]}]))
    assert alone["shown"] == 0, "a value without another gold value beside it is not side by side"
    pair = fake_brief(conflicts=[{"values": [cv(0.88, "Waseem tweets"), cv(93.75)]}])
    assert conflict_values(CASE, pair) == {"values": 3, "shown": 2, "shown_with_scope": 1}
    scaled = fake_brief(conflicts=[{"values": [cv(4_000_000, "NMT"), cv(88, "hate")]}])
    assert conflict_values(CASE, scaled) == {"values": 3, "shown": 2, "shown_with_scope": 2}


def test_uncovered_items_stated() -> None:
    said = fake_brief(not_covered=["How BERT-large would perform on these tasks: not searched"])
    assert uncovered_stated(CASE, said, None) == {
        "items": 1,
        "stated_det": 1,
        "stated_judged": None,
    }
    other = fake_brief(not_covered=["Market growth"])
    assert uncovered_stated(CASE, other, None)["stated_det"] == 0
    chk = fake_brief(checklist=[{"title": "Performance of BERT-large on the tasks", "state": "uncovered",
                                 "reasons": ["searched, nothing found"]}])  # fmt: skip
    assert uncovered_stated(CASE, chk, None)["stated_det"] == 1
    queried = fake_brief(checklist=[{"title": "Results", "state": "uncovered", "reasons": [
        "searched, nothing found (queries: “BERT-large perform tasks”; “how BERT-large would perform on these tasks”)"]}])  # fmt: skip
    assert uncovered_stated(CASE, queried, None)["stated_det"] == 0, "a query is not a statement"
    asked = {**CASE, "question": "How would BERT-large perform on these tasks?"}
    echo = fake_brief(
        not_covered=["Results: How would BERT-large perform on these tasks? searched"]
    )
    assert uncovered_stated(asked, echo, None)["stated_det"] == 0, "the question echoed is not one"
    covered = fake_brief(
        checklist=[{"title": "Performance of BERT-large on the tasks", "state": "covered"}]
    )
    assert uncovered_stated(CASE, covered, None)["stated_det"] == 0
    judged = uncovered_stated(
        CASE, other, lambda claim, listing: 0.9 if "Market" in listing else 0.1
    )
    assert judged["stated_judged"] == 1
    assert uncovered_stated(CASE, fake_brief(), lambda c, p: 0.9)["stated_judged"] == 0


def test_inventions() -> None:
    claims = [
        {"id": "a", "text": "BERT reaches an F1 of 88% on Waseem.", "card_ids": ["c1"]},
        {"id": "b", "text": "BERT reaches an F1 of 91% on Waseem.", "card_ids": ["c1"]},
        {"id": "c", "text": "The model is fast.", "card_ids": ["gone"]},
        {"id": "d", "text": "Nothing was found on cost.", "card_ids": [], "kind": "limitation"},
    ]
    out = inventions(fake_brief(claims), None)
    assert out["claims"] == 3 and out["invented_det_ids"] == ["b", "c"]
    assert out["invented_judged"] is None
    judged = inventions(fake_brief(claims), lambda claim, snip: 0.9 if "88%" in claim else 0.2)
    assert judged["invented_judged_ids"] == ["b", "c"]


def test_pages() -> None:
    assert text_pages("word " * 500) == 1.0
    assert text_pages("字" * 1000) == 1.0 and text_pages("字" * 500 + " word" * 250) == 1.0
    assert text_pages("") == 0.0
    card = EvidenceCard("c1", "claim", "snippet text", "p. 1", source_title="Paper")
    text = " ".join(["evidence"] * 250)
    brief = Brief("r1", "q?", Outline("q?", "literature_review", ()),
                  (BriefSection("i1", "Results", (Claim("k1", text, ("c1",)), Claim("k2", text, ("c1",)))),),
                  (card,))  # fmt: skip
    pages = brief_pages(brief_to_dict(brief))
    assert pages["claim_pages"] == 1.0
    assert pages["pages_md"] > pages["claim_pages"]


def scored(case_id: str, supported: int, *, judged: int | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    labels = [{"id": f"k{i}", "deterministic": "supported" if i < supported else "omitted",
               "judged": None if judged is None else ("supported" if i < judged else "omitted")}
              for i in range(2)]  # fmt: skip
    base_extra = {"conflict_values": {"values": 3, "shown": 2, "shown_with_scope": 1},
                  "uncovered": {"items": 1, "stated_det": 1, "stated_judged": None},
                  "inventions": {"claims": 4, "invented_det": 1, "invented_judged": None},
                  "pages": {"pages_md": 3.0, "claim_pages": 2.0}}  # fmt: skip
    return {"case": case_id, "config": "main", "scores": {
        "key_points": labels,
        "citations": {"citations": 10, "precision_det": 0.7, "precision_judged": None},
        "cost": {"tokens": 2000.0, "calls": 5.0, "minutes": 2.0},
        "extra": {**base_extra, **(extra or {})}}}  # fmt: skip


def test_summary_pools_and_counts_failed_runs() -> None:
    cases = {"a": CASE, "b": CASE}
    rows = [scored("a", 2), {"case": "b", "config": "main", "output": {"error": "BudgetExceeded"}}]
    s = summarise(rows, cases)
    assert s["briefs"] == 1 and s["failed"] == 1
    assert s["coverage_det"]["value"] == 0.5 and s["coverage_det"]["n"] == 4  # failed: omitted
    assert s["conflict_values_with_scope"]["k"] == 1 and s["conflict_values_with_scope"]["n"] == 6
    assert s["uncovered_stated_det"]["n"] == 2 and s["inventions_det"]["n"] == 4
    assert s["precision_det"]["k"] == 7 and s["precision_det"]["n"] == 10
    assert s["coverage_judged"] is None and s["inventions_judged"] is None
    assert s["tokens"] == "2000 (max 2000)" and s["pages"] == "3.00 (max 3.00)"
    assert 0 < s["coverage_det"]["lo"] < 0.5 < s["coverage_det"]["hi"] < 1
    out = table({("multidoc", "main"): s}, "local:qwen2.5-coder-1.5b")
    assert "| multidoc | main | 1 | 1 | 0.500 [" in out and "n=4" in out
    assert "judged by local:qwen2.5-coder-1.5b" in out
    judged = summarise([scored("a", 2, judged=1)], cases)
    assert judged["coverage_judged"]["value"] == 0.5
    theirs = scored("a", 2)
    theirs["scores"].update(pages=9.5, claim_pages=8.25)  # research_metrics' figures win
    assert summarise([theirs], cases)["pages"] == "9.50 (max 9.50)"
    assert summarise([theirs], cases)["claim_pages"] == "8.25 (max 8.25)"
    assert summarise([scored("a", 2)], cases)["claim_pages"] == "2.00 (max 2.00)"


# -- the bench script ----------------------------------------------------------------------
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("research_quality", BENCH / "research_quality.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_settings_dump_and_paired_table(tmp_path: Path) -> None:
    b = bench()
    assert b.parse_sets(['models.judge.url=""', "research.planner=\"template\""]) == {
        "models": {"judge": {"url": ""}}, "research": {"planner": "template"}}  # fmt: skip
    with pytest.raises(SystemExit):
        b.parse_sets(["planner=model"])
    assert b.config_sets(['main:research.planner="template"', "new:research.parallel=2"]) == {
        "main": {"planner": "template"}, "new": {"parallel": 2}}  # fmt: skip
    with pytest.raises(SystemExit):
        b.config_sets(
            ['main:models.judge.url=""']
        )  # settings swapped per question: research.* only
    assert b.CONFIGS["main"]["planner"] == "template" and b.CONFIGS["new"]["planner"] == "model"
    assert [c["id"] for c in b.pick("multidoc", 2, [])] == ["md-01", "md-02"]
    assert [c["id"] for c in b.pick("dev", None, ["rq-qasper-02"])] == ["rq-qasper-02"]
    md = load_multidoc()
    rows = []
    for config, n in (("main", 1), ("new", 2)):
        for case in md[:2]:
            r = scored(case["id"], n)
            r["scores"]["key_points"] = [
                {
                    "id": kp["id"],
                    "deterministic": "supported" if i < n else "omitted",
                    "judged": None,
                }
                for i, kp in enumerate(case["key_points"])
            ]
            rows.append({**r, "set": "multidoc", "config": config, "judge": None})
    rows.append({**scored(md[2]["id"], 1), "set": "multidoc", "config": "main"})  # unpaired
    dump = tmp_path / "d.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert b.finished_in(dump) == {(r["set"], r["case"], r["config"]) for r in rows}
    assert b.finished_in(tmp_path / "none.jsonl") == set()
    out = b.summary_of(dump)
    assert out.startswith("2 questions finished by every configuration (main, new)")
    kps = sum(len(c["key_points"]) for c in md[:2])
    assert f"| multidoc | main | 2 | 0 | {2 / kps:.3f}" in out
    assert f"| multidoc | new | 2 | 0 | {4 / kps:.3f}" in out
    assert "| multidoc (zh) | main | 1 | 0 |" in out  # md-02 is in Chinese: its own row too
    assert "no judge (judged columns empty)" in out


def test_bench_configuration_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from footnote.config.research import ResearchSettings

    b = bench()
    ws = SimpleNamespace(settings=SimpleNamespace(research=ResearchSettings()))
    b.CONFIGS["main"] = {**b.CONFIGS["main"], "no_such_setting": 1}
    main = b.config_settings(ws, "main", {}, {})
    assert main["planner"] == "template" and "no_such_setting" not in main
    assert "research.no_such_setting not a setting here: skipped" in capsys.readouterr().out
    both = {"research": {"planner": "auto", "parallel": 2}}
    assert b.config_settings(ws, "new", both, {})["planner"] == "auto"  # --set wins
    only = b.config_settings(ws, "new", both, {"new": {"planner": "model"}})
    assert only == {"planner": "model", "parallel": 2}  # --config-set wins over --set
    assert b.config_settings(ws, "baseline", {}, {}) == {"mode": "baseline"}
