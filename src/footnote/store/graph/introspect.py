"""Schema introspection of an existing graph database, with no import step.

`introspect(store, name, database)` reads what a database holds — node labels, relationship
types with their endpoints, typed properties and a few example values per text property —
and returns the `GraphSpec` the pipeline asks with (guard schema, prompts, alignment):

- LadybugDB is typed: `show_tables`, `table_info` (types, primary key) and `show_connection`
  (a relationship's endpoints) say it all;
- FalkorDB is schema-less: labels and types come from `db.labels()` /
  `db.relationshipTypes()`, properties and their types from the values of the first
  `sample_rows` nodes or relationships, endpoints from the labels of sampled edges.

The property that names an entity (for alignment) is guessed: `name`, `title`, then one that
ends in "name" or "title", else a text key. Every query here is written by this module from
names the database itself returned (quoted), never from a user.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from footnote.errors import StoreError
from footnote.store.graph.base import TYPES, GraphSpec, GraphStore, NodeTable, RelTable

_TIMEOUT_S = 30.0
_INTS = {"INT8", "INT16", "INT32", "INT64", "INT128", "UINT8", "UINT16", "UINT32", "UINT64",
         "SERIAL"}  # fmt: skip
_FLOATS = {"FLOAT", "DOUBLE", "DECIMAL"}


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _rows(store: GraphStore, cypher: str, limit: int = 10_000) -> list[tuple[Any, ...]]:
    return list(store.query(cypher, {}, limit=limit, timeout_s=_TIMEOUT_S).rows)


def engine_type(t: str) -> str:
    """An engine's column type as one of the spec's `TYPES` (dates and others as STRING)."""
    up = t.strip().upper()
    if up.endswith("[]"):
        inner = engine_type(up[:-2])
        return inner + "[]" if inner + "[]" in TYPES else "STRING[]"
    base = re.sub(r"\(.*\)$", "", up)
    if base in _INTS:
        return "INT64"
    if base in _FLOATS:
        return "DOUBLE"
    if base in ("BOOL", "BOOLEAN"):
        return "BOOL"
    return "STRING"


def value_type(values: Iterable[Any]) -> str:
    """The spec type of sampled values (schema-less engines)."""
    kinds = {_kind(v) for v in values if v is not None}
    if not kinds:
        return "STRING"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= {"INT64", "DOUBLE"}:
        return "DOUBLE"
    if kinds <= {"INT64[]", "DOUBLE[]"}:
        return "DOUBLE[]"
    return "STRING"


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "BOOL"
    if isinstance(v, int):
        return "INT64"
    if isinstance(v, float):
        return "DOUBLE"
    if isinstance(v, list):
        inner = value_type(v)
        return inner + "[]" if inner in ("INT64", "DOUBLE") else "STRING[]"
    return "STRING"


def name_property(properties: dict[str, str], key: str) -> str:
    """The text property that names an entity ("" when there is none)."""
    text = [p for p, t in properties.items() if t == "STRING"]
    for want in ("name", "title"):
        if want in text:
            return want
    for p in text:
        if p.lower().endswith(("name", "title")):
            return p
    return key if properties.get(key) == "STRING" else ""


def _samples(
    store: GraphStore, nodes: dict[str, NodeTable], n: int
) -> dict[str, dict[str, list[str]]]:
    """Up to `n` distinct values (≤ 40 characters) of each text property of each label."""
    out: dict[str, dict[str, list[str]]] = {}
    for label, node in nodes.items():
        for prop, typ in node.properties.items():
            if typ != "STRING":
                continue
            q = (f"MATCH (n:{_q(label)}) WHERE n.{_q(prop)} IS NOT NULL "
                 f"RETURN DISTINCT n.{_q(prop)} AS v LIMIT {4 * n}")  # fmt: skip
            seen = [str(r[0]).strip() for r in _rows(store, q)]
            seen = list(dict.fromkeys(v for v in seen if v and len(v) <= 40))[:n]
            if seen:
                out.setdefault(label, {})[prop] = seen
    return out


def _ladybug(store: GraphStore) -> tuple[dict[str, NodeTable], dict[str, RelTable]]:
    tables = _rows(store, "CALL show_tables() RETURN name, type")
    nodes: dict[str, NodeTable] = {}
    rels: dict[str, RelTable] = {}
    for name, kind in ((str(t[0]), str(t[1]).upper()) for t in tables):
        info = _rows(store, f"CALL table_info('{name}') RETURN *")  # a name the engine gave
        props = {str(r[1]): engine_type(str(r[2])) for r in info}
        if kind == "NODE":
            key = next((str(r[1]) for r in info if len(r) > 4 and r[4] is True), next(iter(props)))
            nodes[name] = NodeTable(properties=props, key=key, name=name_property(props, key))
        elif kind == "REL":
            ends = _rows(store, f"CALL show_connection('{name}') RETURN *")
            if ends:  # a relationship between several label pairs keeps its first pair
                rels[name] = RelTable.model_validate(
                    {"from": str(ends[0][0]), "to": str(ends[0][1]), "properties": props}
                )
    return nodes, rels


def _falkor(
    store: GraphStore, sample_rows: int
) -> tuple[dict[str, NodeTable], dict[str, RelTable]]:
    nodes: dict[str, NodeTable] = {}
    rels: dict[str, RelTable] = {}
    for (label,) in _rows(store, "CALL db.labels()"):
        label = str(label)
        props = _typed(store, f"MATCH (n:{_q(label)}) WITH n LIMIT {sample_rows} UNWIND keys(n) "
                              "AS k RETURN k, collect(n[k]) AS v")  # fmt: skip
        if not props:
            continue
        named = name_property(props, "")
        key = "id" if "id" in props else named or next(iter(props))
        nodes[label] = NodeTable(properties=props, key=key, name=named or "")
    for (rel,) in _rows(store, "CALL db.relationshipTypes()"):
        rel = str(rel)
        ends = _rows(store, f"MATCH (a)-[r:{_q(rel)}]->(b) WITH a, b LIMIT {sample_rows} "
                            "RETURN labels(a)[0] AS s, labels(b)[0] AS t, count(*) AS c "
                            "ORDER BY c DESC LIMIT 1")  # fmt: skip
        if not ends or str(ends[0][0]) not in nodes or str(ends[0][1]) not in nodes:
            continue
        props = _typed(store, f"MATCH ()-[r:{_q(rel)}]->() WITH r LIMIT {sample_rows} "
                              "UNWIND keys(r) AS k RETURN k, collect(r[k]) AS v")  # fmt: skip
        rels[rel] = RelTable.model_validate(
            {"from": str(ends[0][0]), "to": str(ends[0][1]), "properties": props}
        )
    return nodes, rels


def _typed(store: GraphStore, cypher: str) -> dict[str, str]:
    return {
        str(k): value_type(v if isinstance(v, Sequence) else [v]) for k, v in _rows(store, cypher)
    }


def introspect(
    store: GraphStore, name: str, database: str, *, examples: int = 3, sample_rows: int = 200
) -> GraphSpec:
    """The spec of the database `store` has open (see the module docstring); `database` is
    recorded so the graph is opened there again. StoreError when it holds no node label."""
    backend = getattr(store, "backend", "")
    if backend == "ladybug":
        nodes, rels = _ladybug(store)
    elif backend == "falkordb":
        nodes, rels = _falkor(store, sample_rows)
    else:
        raise StoreError(f"cannot read the schema of a {backend or 'unknown'} graph store")
    if not nodes:
        raise StoreError(f"{database}: no node labels to read (an empty database?)")
    spec = GraphSpec(
        name=name,
        description=f"An existing {backend} database, read in place: {database}",
        nodes=nodes,
        relationships=rels,
        database=database,
    )
    return spec.model_copy(update={"samples": _samples(store, nodes, examples)}).check()
