"""Refusal and clarification on CypherBench-AU: does graph QA ask back or refuse on the
AMBIGUOUS and UNANSWERABLE rewrites, and go ahead on the ORIGINAL (answerable) questions?

The CypherBench graphs are not available locally, so each chosen graph is rebuilt as a small
LadybugDB graph from what the data itself says about its schema:
- relationship types and their endpoint labels from `cypherbench_graph_info.json`;
- node labels and properties from every Cypher in the items (original gold and valid
  readings: `(x:Label {p: …})`, `x.p`) and from the "Existing: …" property lists of the
  unanswerable reasons; relationship properties likewise (`r0.p`, `[r0:T {p: …}]`);
- rows: one node per named entity that the items' Cyphers mention (`{name: '…'}`), no edges
  (so a query that runs usually returns no rows; only the decision is measured here).

Every question (corrupted and original) goes through the full pipeline — understand, align,
route, cypher (the local `cypher` role), guard (schema, read-only, EXPLAIN), run — and is
classified by its outcome: `clarify`, `refused` (no safe query after the retries) or
`proceeded` (a query passed the guard and ran: `answered` or `no_rows`).

    OMP_WAIT_POLICY=PASSIVE nice -n 10 .venv/bin/python bench/graph_cypherbench_au.py \\
        --graphs movie,nba > bench/out/graph_cypherbench_au.log 2>&1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings, load_settings
from footnote.index.graph.align import entity_index
from footnote.models import build_roles
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphSpec
from footnote.verify.cypher.guard import Principal
from footnote.workspace import graph_catalog

OUT = Path(__file__).parent / "out"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cypherbench-au"
WHO = Principal("bench", unrestricted=True)
_NODE = re.compile(r"\((\w*):(\w+)(?:\s*\{([^}]*)\})?\)")
_REL = re.compile(r"\[(\w*):(\w+)(?:\s*\{([^}]*)\})?\]")
_PROP = re.compile(r"\b(\w+)\.(\w+)\b")
_MAP = re.compile(r"(\w+)\s*:\s*('(?:[^'\\]|\\.)*'|\"[^\"]*\"|-?\d+(?:\.\d+)?)")
_EXISTING = re.compile(
    r"entity type '(\w+)'.*?Existing: ([\w, ]+)|on '(\w+)'.*?Existing: ([\w, ]+)"
)


def _value(text: str) -> Any:
    if text[0] in "'\"":
        return text[1:-1].replace("\\'", "'")
    return float(text) if "." in text else int(text)


def build_spec(graph: str, items: list[dict[str, Any]]) -> tuple[GraphSpec, dict[str, Any]]:
    """A spec and rows for one CypherBench graph, from its relation info and the items."""
    info = json.loads((DATA / "cypherbench_graph_info.json").read_text())[graph]
    props: dict[str, dict[str, str]] = defaultdict(lambda: {"name": "STRING"})
    rel_props: dict[str, dict[str, str]] = defaultdict(dict)
    names: dict[str, set[str]] = defaultdict(set)
    rels: dict[str, tuple[str, str]] = {}
    for r in info["relations"]:
        _, src, dst = r["variants"][0].split("#")
        rels[r["label"]] = (src, dst)
        props.setdefault(src, {"name": "STRING"})
        props.setdefault(dst, {"name": "STRING"})
    for it in items:
        cyphers = [it["original_gold_cypher"], *(it.get("valid_cyphers") or [])]
        for cy in cyphers:
            var_label: dict[str, str] = {}
            var_rel: dict[str, str] = {}
            for var, label, body in _NODE.findall(cy):
                if var:
                    var_label[var] = label
                for k, v in _MAP.findall(body or ""):
                    val = _value(v)
                    props[label].setdefault(k, "STRING" if isinstance(val, str) else "DOUBLE")
                    if k == "name" and isinstance(val, str):
                        names[label].add(val)
            for var, typ, body in _REL.findall(cy):
                if var:
                    var_rel[var] = typ
                for k, v in _MAP.findall(body or ""):
                    val = _value(v)
                    rel_props[typ].setdefault(k, "STRING" if isinstance(val, str) else "DOUBLE")
            for var, prop in _PROP.findall(cy):
                if var in var_label:
                    num = re.search(rf"{var}\.{prop}\s*[<>]=?\s*-?\d", cy) is not None
                    if num:
                        props[var_label[var]][prop] = "DOUBLE"
                    props[var_label[var]].setdefault(prop, "STRING")
                elif var in var_rel:
                    rel_props[var_rel[var]].setdefault(prop, "STRING")
        reason = it["corruption"].get("reason_unanswerable") or ""
        m = _EXISTING.search(reason)
        if m:
            label = m.group(1) or m.group(3)
            existing = m.group(2) or m.group(4)
            if label in props:
                for p in existing.split(","):
                    if p.strip():
                        props[label].setdefault(p.strip(), "STRING")
    numeric = re.compile(r"(?:_year|_kg|_cm|_usd|_minute|_count|population|area|elevation)$")
    for ps in [*props.values(), *rel_props.values()]:
        for p in ps:
            if numeric.search(p):
                ps[p] = "DOUBLE"
    nodes = {
        label: {"properties": dict(ps), "key": "name", "name": "name"}
        for label, ps in props.items()
    }
    relationships = {
        typ: {"from": src, "to": dst, "properties": dict(rel_props.get(typ, {}))}
        for typ, (src, dst) in rels.items()
        if src in nodes and dst in nodes
    }
    spec = GraphSpec.model_validate(
        {
            "name": f"cb_{graph}",
            "description": f"CypherBench {graph} schema (rebuilt from CypherBench-AU items)",
            "nodes": nodes,
            "relationships": relationships,
        }
    ).check()
    rows = {"nodes": {label: [{"name": n} for n in sorted(ns)] for label, ns in names.items()}}
    for label in nodes:
        rows["nodes"].setdefault(label, [])
    return spec, rows


async def drain(pipe: GraphQAPipeline, question: str) -> None:
    async for _ in pipe.run(GraphRequest(question, WHO)):
        pass


def kind(status: str) -> str:
    return "proceeded" if status in ("answered", "no_rows") else status


def refusal_cause(reason: str) -> str:
    """`schema` when the last rejection named an unknown label/property/relationship type."""
    if re.search(r"unknown (label|property|relationship)|does not exist|cannot find", reason, re.I):
        return "schema"
    return "other" if reason else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="movie,nba")
    ap.add_argument("--understand", default="auto", choices=["auto", "rules", "model"])
    ap.add_argument("--tag", default="run")
    args = ap.parse_args()
    ws = OUT / "graph_au_ws"
    cfg = GraphSettings(dir=str(ws), understand=args.understand, answer="template", retries=1)
    cat = graph_catalog(cfg, ws)
    settings = load_settings(OUT / "graph_ws_settings")
    roles = build_roles(settings.models)
    cypher = roles.chat("cypher")
    understand = roles.chat("understand") if roles.is_bound("understand") else None
    path = OUT / f"graph_cypherbench_au.{args.tag}.jsonl"
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[(r["id"], r["variant"])] = r
    log = path.open("a", encoding="utf-8")
    records: list[dict[str, Any]] = []
    for graph in args.graphs.split(","):
        items = json.loads((DATA / "curated_200_v4" / f"full_{graph}.json").read_text())
        spec, rows = build_spec(graph, items)
        cat.create(spec, rows["nodes"], {}, replace=True)
        store = cat.open(spec.name)
        index = entity_index(store, roles.embedder().fixed(()), cfg, ws / spec.name / "cache")
        deps = GraphDeps(store, index, cfg, understand_model=understand, cypher_model=cypher)
        pipe = GraphQAPipeline(deps)
        print(f"{graph}: {len(spec.nodes)} labels, {len(spec.relationships)} rel types", flush=True)
        for it in items:
            for variant, question in (
                ("corrupted", it["corrupted_nl_question"]),
                ("original", it["original_nl_question"]),
            ):
                key = (it["corruption_id"], variant)
                if key in done:
                    records.append(done[key])
                    continue
                t0 = time.perf_counter()
                asyncio.run(drain(pipe, question))
                o = pipe.outcome
                expected = it["expected_answer"] if variant == "corrupted" else "ANSWERABLE"
                rec = {"id": it["corruption_id"], "graph": graph, "variant": variant,
                       "expected": expected, "type": it["corruption"]["corruption_type"],
                       "q": question, "status": o.status, "kind": kind(o.status),
                       "cypher": o.cypher, "reason": o.reason, "route": o.route,
                       "refusal": refusal_cause(o.reason) if o.status == "refused" else "",
                       "s": round(time.perf_counter() - t0, 1)}  # fmt: skip
                records.append(rec)
                log.write(json.dumps(rec, ensure_ascii=False) + "\n")
                log.flush()
                print(
                    f"  {expected:12} {rec['kind']:9} {rec['s']:5.1f}s {question[:80]}", flush=True
                )
        store.close()
    summary: dict[str, Any] = {}
    for expected in ("AMBIGUOUS", "UNANSWERABLE", "ANSWERABLE"):
        rs = [r for r in records if r["expected"] == expected]
        c = Counter(r["kind"] for r in rs)
        causes = Counter(r.get("refusal") or "" for r in rs if r["kind"] == "refused")
        summary[expected] = {"n": len(rs), **dict(c), "refusal_causes": dict(causes)}
        if rs:
            summary[expected]["asked_back_or_refused"] = round(
                (c["clarify"] + c["refused"]) / len(rs), 3
            )
    summary["graphs"] = args.graphs
    summary["understand"] = (
        "rules" if args.understand == "rules" or understand is None else "model (understand role)"
    )
    (OUT / f"graph_cypherbench_au.{args.tag}.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
