"""`graph synth` keeps only pairs that pass the guard, compile and return rows (scripted model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from footnote.eval.graph_synth import synthesise
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.store.graph.ladybug import LadybugGraph

BATCH = {
    "pairs": [
        {"question": "Which films did Ada Stone act in?",
         "cypher": "MATCH (p:Person {name: 'Ada Stone'})-[:ACTED_IN]->(f:Film) RETURN f.title"},
        {"question": "which films did ada stone act in?",  # duplicate question
         "cypher": "MATCH (f:Film) RETURN f.title"},
        {"question": "Delete everyone", "cypher": "MATCH (p:Person) DETACH DELETE p"},
        {"question": "List actors", "cypher": "MATCH (a:Actor) RETURN a.name"},  # unknown label
        {"question": "Films from 3000?", "cypher": "MATCH (f:Film) WHERE f.year > 3000 RETURN f"},
        {"question": "How many films did Dee Park direct?",  # one row, but a count of 0
         "cypher": "MATCH (:Person {name: 'Dee Park'})-[:DIRECTED]->(f:Film) RETURN count(f)"},
        {"question": "Who was born when?",
         "cypher": "MATCH (p:Person) RETURN p.name AS name, p.born AS born;"},  # semicolon
        {"question": "Films of a person?",
         "cypher": "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person RETURN f"},
    ]
}  # fmt: skip


def _model(replies: Sequence[str]) -> RoleModel:
    return RoleModel("cypher", FakeChatModel(list(replies)), ledger=Ledger(), external=False)


def test_synth_keeps_only_checked_pairs(films: LadybugGraph, tmp_path: Path) -> None:
    out = tmp_path / "pairs.jsonl"
    # a batch, then a reply that stays invalid after the repair round, then the same batch twice
    # (4 calls at most for 5 pairs in batches of 7)
    model = _model([json.dumps(BATCH), "not json", "still not json", *[json.dumps(BATCH)] * 2])
    report = synthesise(films, model, 5, out, batch=7)
    assert report["model_calls"] == 4 and report["generated"] == 24 and report["kept"] == 2
    assert report["rejected"] == {
        "duplicate": 1 + 8 + 8, "guard": 3, "no_rows": 2, "error": 0, "model_error": 1,
        "same_shape": 0, "literal_missing": 0, "disagreed": 0,
    }  # fmt: skip
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [m["role"] for m in lines[0]["messages"]] == ["system", "user", "assistant"]
    assert lines[0]["messages"][1]["content"] == "Which films did Ada Stone act in?"
    assert "(:Film" in lines[0]["messages"][0]["content"]  # the schema is in the system prompt
    assert lines[1]["messages"][2]["content"] == (
        "MATCH (p:Person) RETURN p.name AS name, p.born AS born"
    )
    assert films.query("MATCH (p:Person) RETURN count(p)", {}, limit=1, timeout_s=5).rows == ((4,),)


def test_synth_stops_when_enough_pairs_are_kept(films: LadybugGraph, tmp_path: Path) -> None:
    calls: list[Sequence[Message]] = []

    def reply(msgs: Sequence[Message]) -> str:
        calls.append(msgs)
        return json.dumps(BATCH)

    model = RoleModel("cypher", FakeChatModel(reply), ledger=Ledger(), external=False)
    notes: list[str] = []
    report = synthesise(films, model, 1, tmp_path / "p.jsonl", batch=7, progress=notes.append)
    assert report["kept"] == 1 and len(calls) == 1
    assert len(notes) == 1 and notes[0].startswith("call 1: kept 1 of 8 (1/1")
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 1


def test_synth_limits_pairs_of_one_shape(films: LadybugGraph, tmp_path: Path) -> None:
    people = ["Ada Stone", "Ben Stone", "Dee Park"]
    batch = {
        "pairs": [
            {"question": f"Which films did {p} act in?",
             "cypher": f"MATCH (p:Person {{name: '{p}'}})-[:ACTED_IN]->(f:Film) RETURN f.title"}
            for p in people
        ]
    }  # fmt: skip
    report = synthesise(
        films, _model([json.dumps(batch)] * 3), 3, tmp_path / "p.jsonl", max_per_shape=2
    )
    assert report["kept"] == 2 and report["rejected"]["same_shape"] == 1


def test_synth_from_facts_keeps_checked_pairs(films: LadybugGraph, tmp_path: Path) -> None:
    import random

    from footnote.eval.graph_facts import fact_query, synthesise_from_facts

    rng = random.Random(1)
    for shape in ("property", "neighbours", "reverse", "count", "top"):
        fact = fact_query(films, shape, rng)
        assert fact is not None and fact.cypher.startswith("MATCH"), shape

    def question(msgs: Sequence[Message]) -> str:  # names the query's literal, as it must
        query = msgs[-1].content.split("Query:")[1].split("First result")[0]
        named = query.split("'")[1] if "'" in query else "the graph"
        return json.dumps({"question": f"Question on {named} ({len(query)})?"})

    writer = RoleModel(
        "compose", FakeChatModel(question, name="fake:w"), ledger=Ledger(), external=False
    )
    verdicts = [json.dumps({"matches": i % 2 == 0}) for i in range(40)]  # every other disagrees
    checker = RoleModel("judge", FakeChatModel(verdicts, name="fake:c"), ledger=Ledger(),
                        external=False)  # fmt: skip
    out, lib = tmp_path / "pairs.jsonl", tmp_path / "examples.jsonl"
    report = synthesise_from_facts(films, writer, checker, 3, out, library=lib, seed=3)
    assert report["kept"] == 3 and report["rejected"]["disagreed"] >= 2
    assert report["model_calls"] == 2 * (report["kept"] + report["rejected"]["disagreed"])
    pairs = [json.loads(x) for x in lib.read_text().splitlines()]
    assert len(pairs) == 3 and all(p["cypher"].startswith("MATCH") for p in pairs)
    for p in pairs:  # every kept query runs and returns a value
        assert films.query(p["cypher"], {}, limit=5, timeout_s=5).rows
    assert len(out.read_text().splitlines()) == 3
