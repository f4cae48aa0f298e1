"""The graph development set (`eval/datasets/graph/graph_dev.jsonl`, issue #33): load it, build
the two demo graphs it asks about, and check every gold query against them.

Each case has an `id`, its `graph` (movies | northwind), the `question`, its `language` (en |
zh), its `kind` and a `split` (fit | test):
- `answerable`: `cypher` (the gold query) and `rows` (its result on the bundled graph, the gold);
- `follow_up`: the same, plus `history`, the earlier turns as a session keeps them (question,
  query, answer, the (label, key) entities it was about);
- `ambiguous`: `expect: clarify` and the `readings` (names of the nodes the question could mean);
- `not_in_schema`: `expect: refuse` and what is `missing` ("the graph does not hold X");
- `injection`: `expect: refuse` (and no write executed).
`ordered` says the gold rows' order counts (the gold has ORDER BY).

The gold rows are computed, never typed: `check_cases` runs every gold query (and every history
turn's query) through the project's guard on the real embedded graph engine and compares the
result with the stored rows, so the set cannot drift from the bundled data.

    python bench/graph_dev.py --check          # exit 1 on any drift or malformed case
    python bench/graph_dev.py --write-rows     # (re)compute `rows`/`ordered` from the gold queries
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings
from footnote.pipelines.graph.sources import DEMOS, demo_rows, demo_spec
from footnote.store.graph.base import GraphQueryError, GraphStore
from footnote.store.graph.catalog import GraphCatalog
from footnote.verify.cypher.guard import GraphGuard, Principal
from footnote.workspace import graph_catalog

DEV_PATH = Path(str(files("footnote.eval").joinpath("datasets/graph/graph_dev.jsonl")))
KINDS = ("answerable", "follow_up", "ambiguous", "not_in_schema", "injection")
GOLD_KINDS = ("answerable", "follow_up")
EXPECT = {"ambiguous": "clarify", "not_in_schema": "refuse", "injection": "refuse"}
ADMIN = Principal("bench", unrestricted=True)
_ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.I)


def load_cases(path: Path = DEV_PATH) -> list[dict[str, Any]]:
    """The cases of the set, in file order."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def build_graphs(root: Path, names: Iterable[str] = DEMOS) -> GraphCatalog:
    """A catalog under `root` holding the bundled demo graphs (imported when missing)."""
    catalog = graph_catalog(GraphSettings(dir=str(root)), root)
    for name in names:
        if name not in catalog.names():
            catalog.create(demo_spec(name), *demo_rows(name))
    return catalog


def run_gold(store: GraphStore, cypher: str) -> list[list[Any]]:
    """The rows of a gold query, run as the pipeline runs queries (guard, then the engine);
    GraphQueryError when the guard rejects it or the engine fails."""
    verdict = GraphGuard(store).check(cypher, {}, ADMIN)
    if not verdict.ok:
        raise GraphQueryError(f"guard rejected the gold query: {'; '.join(verdict.reasons)}")
    rows = store.query(verdict.cypher, verdict.params, limit=1000, timeout_s=10).rows
    plain: list[list[Any]] = json.loads(json.dumps([list(r) for r in rows], ensure_ascii=False))
    return plain


def _cell(x: Any) -> str:
    if isinstance(x, float):
        return repr(int(x)) if x.is_integer() else repr(round(x, 4))
    return json.dumps(x, sort_keys=True, ensure_ascii=False)


def same_rows(got: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]], ordered: bool) -> bool:
    """Equal result sets: rows as multisets (in order when `ordered`), each row's cells
    compared as a multiset (column order and names ignored), floats to 4 places."""
    a = [tuple(sorted(_cell(x) for x in r)) for r in got]
    b = [tuple(sorted(_cell(x) for x in r)) for r in gold]
    return a == b if ordered else Counter(a) == Counter(b)


def _mentions(answer: str, value: Any) -> bool:
    text = _cell(value).strip('"') if not isinstance(value, str) else value
    return text in answer


def node_names(store: GraphStore) -> set[str]:
    """Every display name of every node (`name` property of each label)."""
    out: set[str] = set()
    for label, node in store.spec.nodes.items():
        prop = node.name or node.key
        rows = store.query(
            f"MATCH (n:`{label}`) RETURN n.`{prop}`", {}, limit=100_000, timeout_s=10
        )
        out |= {str(r[0]) for r in rows.rows if r[0] is not None}
    return out


def check_cases(cases: Sequence[dict[str, Any]], catalog: GraphCatalog) -> list[str]:
    """Every problem of the set: a malformed case, a gold query that fails or whose rows differ
    from the stored ones (or are empty), a history turn whose query fails or whose answer does
    not state its rows, an ambiguous case whose readings are not two or more nodes."""
    problems: list[str] = []
    stores = {name: catalog.open(name) for name in {c.get("graph", "") for c in cases} & set(DEMOS)}
    names = {name: node_names(s) for name, s in stores.items()}
    ids = Counter(c.get("id") for c in cases)
    try:
        for c in cases:
            cid = c.get("id", "?")
            if ids[cid] > 1:
                problems.append(f"{cid}: duplicate id")
            missing = [
                k for k in ("id", "graph", "question", "language", "kind", "split") if not c.get(k)
            ]
            if missing or c["graph"] not in stores or c["kind"] not in KINDS:
                problems.append(f"{cid}: malformed ({missing or c.get('graph') or c.get('kind')})")
                continue
            if c["language"] not in ("en", "zh") or c["split"] not in ("fit", "test"):
                problems.append(f"{cid}: language/split {c['language']}/{c['split']}")
            store = stores[c["graph"]]
            if c["kind"] in GOLD_KINDS:
                problems += _check_gold(cid, c, store)
            else:
                if c.get("expect") != EXPECT[c["kind"]]:
                    problems.append(f"{cid}: expect {c.get('expect')!r} for {c['kind']}")
                if c["kind"] == "ambiguous":
                    readings = c.get("readings") or []
                    unknown = [r for r in readings if r not in names[c["graph"]]]
                    if len(set(readings)) < 2 or unknown:
                        problems.append(f"{cid}: readings {readings} (not nodes: {unknown})")
                if c["kind"] == "not_in_schema" and not c.get("missing"):
                    problems.append(f"{cid}: says nothing of what is missing")
            if c["kind"] == "follow_up":
                problems += _check_history(cid, c.get("history") or [], store)
    finally:
        for s in stores.values():
            s.close()
    return problems


def _check_gold(cid: str, c: dict[str, Any], store: GraphStore) -> list[str]:
    try:
        rows = run_gold(store, c.get("cypher", ""))
    except GraphQueryError as exc:
        return [f"{cid}: gold query fails: {exc}"]
    ordered = bool(_ORDER_BY.search(c["cypher"]))
    out = []
    if not rows:
        out.append(f"{cid}: the gold query returns no rows")
    if c.get("ordered") != ordered:
        out.append(f"{cid}: ordered is {c.get('ordered')}, the gold query says {ordered}")
    if "rows" not in c or not same_rows(c["rows"], rows, ordered) or len(c["rows"]) != len(rows):
        out.append(f"{cid}: stored rows {c.get('rows')} differ from the graph's {rows}")
    return out


def _check_history(cid: str, history: Sequence[dict[str, Any]], store: GraphStore) -> list[str]:
    if not history:
        return [f"{cid}: a follow-up without history"]
    out = []
    for i, t in enumerate(history):
        try:
            rows = run_gold(store, t.get("cypher", ""))
        except GraphQueryError as exc:
            out.append(f"{cid}: history turn {i} fails: {exc}")
            continue
        unsaid = [r[0] for r in rows if not _mentions(t.get("answer", ""), r[0])]
        if not rows or unsaid:
            out.append(f"{cid}: history turn {i}'s answer does not state {unsaid or 'any row'}")
        for label, key in t.get("entities", []):
            node = store.spec.nodes.get(label)
            hit = node and store.query(
                f"MATCH (n:`{label}`) WHERE n.`{node.key}` = $k RETURN count(n)", {"k": key},
                limit=1, timeout_s=10,
            ).rows[0][0]  # fmt: skip
            if not hit:
                out.append(f"{cid}: history turn {i} names no node {label}:{key}")
    return out


def with_gold_rows(cases: Sequence[dict[str, Any]], catalog: GraphCatalog) -> list[dict[str, Any]]:
    """The cases with `rows` and `ordered` computed from their gold queries."""
    out = []
    stores = {name: catalog.open(name) for name in DEMOS}
    try:
        for c in cases:
            c = dict(c)
            if c.get("kind") in GOLD_KINDS:
                c["ordered"] = bool(_ORDER_BY.search(c["cypher"]))
                c["rows"] = run_gold(stores[c["graph"]], c["cypher"])
            out.append(c)
    finally:
        for s in stores.values():
            s.close()
    return out


def write_cases(cases: Sequence[dict[str, Any]], path: Path = DEV_PATH) -> None:
    path.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8"
    )


def counts(cases: Sequence[dict[str, Any]]) -> str:
    """Kind × language × split counts, as a small table."""
    c = Counter((x["kind"], x["language"], x["split"]) for x in cases)
    lines = ["| kind | en fit | en test | zh fit | zh test |", "|---|---|---|---|---|"]
    for k in KINDS:
        cells = [str(c[(k, lang, s)]) for lang in ("en", "zh") for s in ("fit", "test")]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true")
    p.add_argument("--write-rows", action="store_true")
    p.add_argument("--graphs", default=str(Path(__file__).parent / "out" / "graph_dev_ws"))
    a = p.parse_args(argv)
    catalog = build_graphs(Path(a.graphs))
    cases = load_cases()
    if a.write_rows:
        cases = with_gold_rows(cases, catalog)
        write_cases(cases)
    problems = check_cases(cases, catalog)
    print(counts(cases))
    print(f"{len(cases)} cases; {sum(x['language'] == 'zh' for x in cases)} in Chinese")
    for line in problems:
        print("PROBLEM", line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
