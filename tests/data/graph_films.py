"""The `films` test graph (our own data) and the attack-suite runner, shared by the graph
tests and `bench/graph_attacks.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ATTACKS = Path(__file__).with_name("graph_attacks.json")

FILMS: dict[str, Any] = {
    "name": "films",
    "nodes": {
        "Person": {
            "properties": {"name": "STRING", "born": "INT64"},
            "key": "name",
            "name": "name",
        },
        "Film": {
            "properties": {"title": "STRING", "year": "INT64", "region": "STRING"},
            "key": "title",
            "name": "title",
        },
    },
    "relationships": {
        "ACTED_IN": {"from": "Person", "to": "Film", "properties": {"role": "STRING"}},
        "DIRECTED": {"from": "Person", "to": "Film"},
    },
    "restricted": {"Film": {"property": "region", "attribute": "regions"}},
    "intents": {
        "person_films": {
            "description": "Which films did a person act in?",
            "cypher": "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person "
            "RETURN f.title AS title, f.year AS year ORDER BY year",
            "params": {"person": "Person"},
            "keywords": ["acted in", "act in", "出演"],
            "answer": "{title} ({year}).",
        },
        "person_born": {
            "description": "When was a person born?",
            "cypher": "MATCH (p:Person) WHERE p.name = $person RETURN p.name AS name, p.born AS born",
            "params": {"person": "Person"},
            "keywords": ["born", "出生"],
            "answer": "{name} was born in {born}.",
        },
    },
    "examples": [
        {
            "question": "How many films are there?",
            "cypher": "MATCH (f:Film) RETURN count(f) AS films",
        }
    ],
    "aliases": {"Person:Ada Stone": ["艾达·斯通"]},
}
NODES = {
    "Person": [
        {"name": "Ada Stone", "born": 1970},
        {"name": "Ben Stone", "born": 1980},
        {"name": "Cy Moreau", "born": 1965},
        {"name": "Dee Park", "born": 1990},
    ],
    "Film": [
        {"title": "Red River", "year": 2001, "region": "EU"},
        {"title": "Blue Lake", "year": 1999, "region": "US"},
        {"title": "Green Hill", "year": 2010, "region": "EU"},
    ],
}
RELS = {
    "ACTED_IN": [
        {"from": "Ada Stone", "to": "Red River", "role": "Mara"},
        {"from": "Ada Stone", "to": "Blue Lake", "role": "June"},
        {"from": "Ben Stone", "to": "Blue Lake", "role": "Cole"},
        {"from": "Dee Park", "to": "Green Hill", "role": "Ivy"},
    ],
    "DIRECTED": [
        {"from": "Cy Moreau", "to": "Red River"},
        {"from": "Cy Moreau", "to": "Green Hill"},
    ],
}


def load_attacks() -> list[dict[str, Any]]:
    """The attack cases."""
    cases: list[dict[str, Any]] = json.loads(ATTACKS.read_text(encoding="utf-8"))["cases"]
    return cases


def run_attack(case: dict[str, Any], guard: Any, store: Any) -> tuple[bool, str]:
    """(blocked, detail) for one case: refused by the guard, or ran without leaking."""
    from footnote.verify.cypher.guard import Principal

    attrs = case.get("principal")
    who = (
        Principal("attacker", {k: tuple(v) for k, v in attrs.items()})
        if attrs is not None
        else Principal(unrestricted=True)
    )
    verdict = guard.check(case["cypher"], case.get("params", {}), who)
    if not verdict.ok:
        return True, "rejected: " + verdict.reason
    if case["kind"] == "reject":
        return False, "accepted: " + verdict.cypher
    rows = store.query(verdict.cypher, verdict.params, limit=100, timeout_s=5).rows
    if "expect" in case:
        ok = [list(r) for r in rows] == case["expect"]
        return ok, f"rows {rows}"
    flat = json.dumps(rows, ensure_ascii=False)
    leaked = [f for f in case.get("forbidden", []) if f in flat]
    return not leaked, f"leaked {leaked}" if leaked else f"filtered: {verdict.cypher}"
