"""`graph synth` (#33): the pairs are checked by another model than the one that wrote them,
shown only the question and the rows; a checker bound to the writer's model does not count
(execution and code only, said in the report); a seeded sample goes out for a human
spot-check and comes back as an agreement rate. Real LadybugDB films graph; fake models."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.config import ModelBinding, ModelSettings
from footnote.eval.graph_facts import synthesise_from_facts
from footnote.eval.graph_review import (
    Candidate,
    export_review,
    import_review,
    literals_missing,
    pick_checker,
)
from footnote.eval.graph_synth import synthesise
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import ModelRoles, RoleModel
from footnote.store.graph.ladybug import LadybugGraph

runner = CliRunner()


def _role(role: str, model: FakeChatModel) -> RoleModel:
    return RoleModel(role, model, ledger=Ledger(), external=False)


def _writer_naming_the_literal() -> FakeChatModel:
    """Writes a question that names the query's literal (read from the prompt)."""

    def reply(msgs: Sequence[Message]) -> str:
        text = msgs[-1].content
        lit = text.split("'")[1] if "'" in text.split("Query:")[1].split("First result")[0] else ""
        return json.dumps({"question": f"What about {lit} ({len(text) % 97})?"})

    return FakeChatModel(reply, name="fake:writer")


def test_the_checker_sees_the_question_and_rows_not_the_query(
    films: LadybugGraph, tmp_path: Path
) -> None:
    seen: list[str] = []

    def check(msgs: Sequence[Message]) -> str:
        seen.append(msgs[-1].content)
        return json.dumps({"matches": len(seen) % 3 != 0})  # every third disagrees

    writer = _role("compose", _writer_naming_the_literal())
    checker = _role("judge", FakeChatModel(check, name="fake:checker"))
    report = synthesise_from_facts(films, writer, checker, 4, tmp_path / "p.jsonl", seed=2)
    assert report["kept"] == 4 and report["rejected"]["disagreed"] >= 1
    assert report["checked_by"] == "judge (fake:checker)" and "checked by judge" in report["check"]
    assert len(seen) == report["kept"] + report["rejected"]["disagreed"]
    for prompt in seen:
        assert "MATCH" not in prompt and "RETURN" not in prompt and "Question: What about" in prompt
        assert "Rows returned" in prompt


def test_a_checker_on_the_writers_model_checks_nothing(films: LadybugGraph, tmp_path: Path) -> None:
    model = _writer_naming_the_literal()
    writer, same = _role("compose", model), _role("judge", model)
    report = synthesise_from_facts(films, writer, same, 3, tmp_path / "p.jsonl", seed=2)
    assert report["kept"] == 3 and report["checked_by"] == "execution+code"
    assert "execution and code only" in report["check"]
    assert report["model_calls"] == 3  # the writer's questions only: no check call
    assert all('"matches"' not in m[-1].content for m in model.calls)  # type: ignore[attr-defined]


def test_a_question_that_misses_the_querys_entity_is_rejected(
    films: LadybugGraph, tmp_path: Path
) -> None:
    assert literals_missing("Which films did Ada Stone act in?", "WHERE a.name = 'Ada Stone'") == []
    assert literals_missing("Which films did she act in?", "WHERE a.name = 'Ada Stone'") == [
        "Ada Stone"
    ]
    writer = _role("compose", FakeChatModel([json.dumps({"question": "Which films?"})] * 40))
    report = synthesise_from_facts(films, writer, None, 2, tmp_path / "p.jsonl", seed=1)
    assert report["rejected"]["literal_missing"] >= 1
    kept = [
        json.loads(x)["messages"][2]["content"]
        for x in (tmp_path / "p.jsonl").read_text().splitlines()
    ]
    assert len(kept) == report["kept"] and all("'" not in c for c in kept)  # only literal-free


def test_free_mode_is_checked_by_another_model(films: LadybugGraph, tmp_path: Path) -> None:
    batch = {"pairs": [
        {"question": "Which films did Ada Stone act in?",
         "cypher": "MATCH (p:Person {name: 'Ada Stone'})-[:ACTED_IN]->(f:Film) RETURN f.title"},
        {"question": "When was Ada Stone born?",  # rows answer another question: checker says no
         "cypher": "MATCH (p:Person {name: 'Ada Stone'})-[:ACTED_IN]->(f:Film) RETURN f.year"},
    ]}  # fmt: skip
    seen: list[str] = []

    def check(msgs: Sequence[Message]) -> str:
        seen.append(msgs[-1].content)
        return json.dumps({"matches": "born" not in msgs[-1].content})

    writer = _role("cypher", FakeChatModel([json.dumps(batch)] * 3, name="fake:w"))
    checker = _role("judge", FakeChatModel(check, name="fake:c"))
    review = tmp_path / "r.jsonl"
    report = synthesise(films, writer, 2, tmp_path / "p.jsonl", checker=checker, review=review,
                        review_seed=4)  # fmt: skip
    assert report["kept"] == 1 and report["rejected"]["disagreed"] >= 1
    assert all("MATCH" not in p for p in seen)
    rows = [json.loads(x) for x in review.read_text().splitlines()]
    assert {r["auto_verdict"] for r in rows} == {"keep", "reject"}
    assert all(r["auto_by"] == "judge (fake:c)" for r in rows)


def test_pick_checker_compares_the_bindings() -> None:
    def roles(judge: str) -> ModelRoles:
        settings = ModelSettings(compose=ModelBinding(url="local:qwen2.5-coder-1.5b"),
                                 judge=ModelBinding(url=judge))  # fmt: skip
        return ModelRoles(settings, factory=lambda b: FakeChatModel(["{}"], name=b.url))

    same = pick_checker(roles("local:qwen2.5-coder-1.5b"), "compose")
    assert same.model is None and "bound to the writer's model" in same.note
    unbound = pick_checker(roles(""), "compose")
    assert unbound.model is None and "not bound" in unbound.note
    other = pick_checker(roles("local:qwen2.5-coder-0.5b"), "compose")
    assert other.model is not None and other.model.name == "local:qwen2.5-coder-0.5b"
    assert other.by == "judge (local:qwen2.5-coder-0.5b)"
    assert pick_checker(roles("local:qwen2.5-coder-0.5b"), "compose", "compose").model is None


def _export(films: LadybugGraph, tmp_path: Path, name: str, seed: int | None) -> dict[str, object]:
    verdicts = iter([True, False] * 40)
    checker = FakeChatModel(lambda _m: json.dumps({"matches": next(verdicts)}), name="fake:c")
    report = synthesise_from_facts(
        films, _role("compose", _writer_naming_the_literal()), _role("judge", checker), 5,
        tmp_path / "p.jsonl", seed=2, review=tmp_path / name, review_size=4, review_seed=seed,
    )  # fmt: skip
    return report


def test_review_sample_goes_out_seeded_and_comes_back_as_agreement(
    films: LadybugGraph, tmp_path: Path
) -> None:
    report = _export(films, tmp_path, "a.csv", 11)
    drawn = _export(films, tmp_path, "c.csv", None)
    sample = report["review"]
    assert isinstance(sample, dict) and sample["seed"] == 11 and sample["size"] == 4
    assert sample["of"] == 5 + report["rejected"]["disagreed"]  # type: ignore[index]
    assert isinstance(drawn["review"], dict) and isinstance(drawn["review"]["seed"], int)
    path = tmp_path / "a.csv"
    pool = [Candidate(f"q{i}?", f"MATCH (n) RETURN {i}", f"n: {i}", "keep", "x") for i in range(30)]
    a, b = (export_review(pool, tmp_path / f"{x}.jsonl", 5, 7) for x in "xy")
    assert a["seed"] == b["seed"] == 7
    assert (tmp_path / "x.jsonl").read_text() == (tmp_path / "y.jsonl").read_text()
    assert (
        export_review(pool, tmp_path / "z.jsonl", 5, 8)
        and (tmp_path / "z.jsonl").read_text() != (tmp_path / "x.jsonl").read_text()
    )  # another seed, another sample
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and all(r["human_verdict"] == "" and r["human_note"] == "" for r in rows)
    assert {"id", "question", "cypher", "rows", "auto_verdict", "auto_by"} <= set(rows[0])
    # the human says yes to every pair but the first, leaves the last blank
    for i, r in enumerate(rows):
        r["human_verdict"] = "" if i == 3 else ("no" if i == 0 else "yes")
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    got = import_review(path)
    auto = [r["auto_verdict"] == "keep" for r in rows[:3]]
    human = [False, True, True]
    assert got["reviewed"] == 3 and got["rows"] == 4
    assert got["agreement"] == round(sum(a == h for a, h in zip(auto, human, strict=True)) / 3, 3)
    assert got["disagreements"] == [
        r["id"] for r, a, h in zip(rows[:3], auto, human, strict=True) if a != h
    ]
    rows[1]["human_verdict"] = "maybe"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(ValueError, match="yes or no"):
        import_review(path)


def test_cli_synth_help_and_import_review(tmp_path: Path) -> None:
    res = runner.invoke(app, ["graph", "synth", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for words in ("--import-review", "--checker", "--review-size", "--review-seed",
                  "execution and code only", "human_verdict"):  # fmt: skip
        assert words in res.stdout, words
    review = tmp_path / "r.jsonl"
    lines = [{"id": "p1", "auto_verdict": "keep", "human_verdict": "yes"},
             {"id": "p2", "auto_verdict": "keep", "human_verdict": "no"},
             {"id": "p3", "auto_verdict": "reject", "human_verdict": "no"},
             {"id": "p4", "auto_verdict": "reject", "human_verdict": ""}]  # fmt: skip
    review.write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = runner.invoke(app, ["graph", "synth", "--import-review", str(review), "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["reviewed"] == 3 and got["agreement"] == 0.667 and got["disagreements"] == ["p2"]
    assert got["agreement_kept"] == 0.5 and got["agreement_rejected"] == 1.0
    res = runner.invoke(app, ["graph", "synth", "--import-review", str(review)])
    assert "human agrees with the automatic check on 67%" in res.stdout


def test_cli_synth_says_who_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the CLI with the default bindings (judge = compose's model): no model check,
    and the output says so; with the judge bound elsewhere the judge checks."""
    from graph_films import FILMS, NODES, RELS

    import footnote.models.roles as roles_mod
    from footnote.config import GraphSettings
    from footnote.store.graph.base import GraphSpec
    from footnote.workspace import graph_catalog

    ws = tmp_path / "ws"
    graph_catalog(GraphSettings(), ws).create(GraphSpec.model_validate(FILMS), NODES, RELS)
    judged: list[str] = []

    def factory(binding: ModelBinding, _settings: ModelSettings) -> FakeChatModel:
        if binding.url.endswith("0.5b"):
            return FakeChatModel(
                lambda m: judged.append("x") or '{"matches": true}', name=binding.url
            )
        return _writer_naming_the_literal()

    monkeypatch.setattr(roles_mod, "make_chat_model", factory)
    for role in ("UNDERSTAND", "CYPHER", "EMBED"):
        monkeypatch.setenv(f"FOOTNOTE_MODELS__{role}__URL", "")
    args = ["graph", "synth", "films", "--n", "2", "--out", str(tmp_path / "p.jsonl"),
            "-w", str(ws), "--review", str(tmp_path / "r.csv"), "--review-seed", "3"]  # fmt: skip
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "execution and code only" in res.stdout and "seed 3" in res.stdout and not judged
    monkeypatch.setenv("FOOTNOTE_MODELS__JUDGE__URL", "local:qwen2.5-coder-0.5b")
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["checked_by"] == "judge (local:qwen2.5-coder-0.5b)" and judged
