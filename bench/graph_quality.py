"""Graph QA quality (issue #33, "Measure"): today's pipeline vs the wave-3 graph changes, same
run, same cases, on the graph development set and optional samples of the shared sets.

Configurations (`graph.*` overrides on one workspace, every other setting as configured):
- `main`: today's defaults with the wave-3 graph changes switched off where a setting allows:
  the fallback rung (`graph.fallback_candidates=0`), the rules-first reading
  (`understand=model`: the model reads every question, as `auto` did before) and, where this checkout has them, the
  relaxation rung (`relax=false`) and `unsure=answer`. The clarification signals stay on in
  both: no `clarify_threshold` gives the old rule (only entity-name ties ask back; at 1.0 even
  keyword ties stop asking back, below it the new signals fire). The others cannot
  be switched off (the user's words kept beside the rewrite, conversations, the write-in-a-value
  refusal, honest empty results, the invented-attribute gate, alias nodes and the persisted
  vector index, typed slots, engine-specific prompts): compare `new` with the issue's recorded
  figures too (`ISSUE_BEFORE`, printed under the table).
- `new`: the defaults.

Sets: `dev` (`eval/datasets/graph/graph_dev.jsonl`, see bench/graph_dev.py; `--split`),
`--text2cypher N` (N per demo graph of neo4j-text2cypher, gold run here), `--tugraph N`
(tugraph-text2cypher-zh `common`, movie graph), `--cypherbench N` (N CypherBench-AU items of
the held-out movie graph, rebuilt as graph_cypherbench_au.py does: decisions only — the
corrupted question must ask back (AMBIGUOUS) or refuse (UNANSWERABLE), the original go ahead).
Every question runs through `Workspace.graph` (the pipeline the CLI and server use, with the
bound models; the embedded Qwen2.5-Coder-1.5B by default), a follow-up with its history turns.

Printed per (set, configuration), every rate with k/n and its 95 % Wilson interval
(`eval.metrics.rate`): execution accuracy on questions with gold rows (overall, en, zh; result
rows equal to the gold's, extra columns of ours forgiven; `strict`: no extra columns),
follow-ups, ambiguous/not-in-schema handled right (asked back / refused), clarification
precision and recall (asked back on ambiguous cases / all asked back; / all ambiguous),
injections refused, "answered a different question" (status answered but rows ≠ gold, or an
answer to a not-in-schema question), writes executed (the graph's fingerprint changed, or an
executed query held a write clause; must be 0), errors, p50/max seconds, model calls per
question (the ledger's records of the run).

    OMP_WAIT_POLICY=PASSIVE nice -n 10 .venv/bin/python bench/graph_quality.py \\
        --configs main,new --dump bench/out/graph_quality.jsonl --resume \\
        --text2cypher 10 --tugraph 10 --cypherbench 10 > bench/out/graph_quality.log 2>&1
    .venv/bin/python bench/graph_quality.py --limit 3 --no-model     # smoke run, no model
    .venv/bin/python bench/graph_quality.py --summary-of bench/out/graph_quality.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import graph_cypherbench_au
import graph_text2cypher
from footnote.config import GraphSettings, ModelBinding, ModelSettings, shared_data_candidates
from footnote.eval.metrics import rate
from footnote.eval.report import fmt_rate
from footnote.pipelines.graph.answer import uncovered_rows
from footnote.pipelines.graph.conversation import GraphTurn
from footnote.pipelines.graph.qa import GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import demo_rows, demo_spec
from footnote.store.graph.base import GraphQueryError, GraphRows, GraphStore
from footnote.textnorm import CJK_RE
from footnote.verify.cypher.guard import Principal
from footnote.verify.cypher.parse import tokenize
from graph_dev import DEV_PATH, GOLD_KINDS, load_cases, run_gold, same_rows
from graph_text2cypher import contains_gold

OUT = Path(__file__).parent / "out"
ADMIN = Principal("bench", unrestricted=True)
CONFIGS: dict[str, dict[str, Any]] = {
    # the wave-3 fallback rung, off; every question read by the model (before rules-first)
    "main": {"fallback_candidates": 0, "understand": "model"},
    "new": {},
}
MAIN_IF_PRESENT: dict[str, Any] = {
    "relax": False,  # the relaxation rung of empty results
    "unsure": "answer",  # the default before clarification signals
}
"""Wave-3 switches under way in this issue: `main` sets each one this checkout's settings hold."""
ISSUE_BEFORE = (
    "issue #33 before wave 3 (40 held-out questions, two graphs, embedded model, hand-read): "
    "execution accuracy 0.46 (0.29 a week earlier), ambiguous/not-in-graph handled right 3/8, "
    "2 answers to a different question, 0 writes executed, the injected-ID attempt answered"
)
WRITES = {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "LOAD", "COPY",
          "ALTER", "INSTALL", "ATTACH", "CALL"}  # fmt: skip


# -- one question ------------------------------------------------------------------------------
def history_of(case: dict[str, Any]) -> tuple[GraphTurn, ...]:
    """The case's earlier turns as the pipeline's history (oldest first)."""
    return tuple(
        GraphTurn(
            t["question"],
            t.get("answer", ""),
            t.get("cypher", ""),
            tuple((str(e[0]), str(e[1])) for e in t.get("entities", [])),
        )
        for t in case.get("history") or []
    )


def has_write(cypher: str) -> bool:
    """A write clause outside string literals (what the guard must never let run)."""
    try:
        toks = tokenize(cypher)
    except Exception:
        return any(w in cypher.upper().split() for w in WRITES)
    return any(t.kind != "string" and t.text.upper() in WRITES for t in toks)


def fingerprint(store: GraphStore) -> str:
    """A digest of every node's and relationship's properties (a write changes it)."""
    h = hashlib.sha256()
    spec = store.spec
    parts = [(f"MATCH (n:`{label}`) RETURN ", "n", list(node.properties)) for label, node in spec.nodes.items()]  # fmt: skip
    parts += [
        (f"MATCH ()-[r:`{typ}`]->() RETURN ", "r", list(rel.properties) or ["_ID"])
        for typ, rel in spec.relationships.items()
    ]
    for head, var, props in parts:
        cols = ", ".join(f"{var}.`{p}`" if p != "_ID" else f"count({var})" for p in props)
        rows = store.query(head + cols, {}, limit=1_000_000, timeout_s=30).rows
        h.update(head.encode())
        for r in sorted(json.dumps(list(r), default=str, ensure_ascii=False) for r in rows):
            h.update(r.encode())
    return h.hexdigest()[:16]


async def _drain(pipe: GraphQAPipeline, request: GraphRequest) -> None:
    async for _ in pipe.run(request):
        pass


def ask(pipe: GraphQAPipeline, case: dict[str, Any], calls: Callable[[str], int]) -> dict[str, Any]:
    """One case through the pipeline: its outcome, seconds, model calls, writes."""
    store = pipe.deps.store
    before = fingerprint(store)
    t0 = time.perf_counter()
    try:
        asyncio.run(_drain(pipe, GraphRequest(case["question"], ADMIN, history=history_of(case))))
        o = pipe.outcome
        out: dict[str, Any] = {
            "status": o.status, "answer": o.answer, "reason": o.reason[:400], "cypher": o.cypher,
            "rows": [list(r.values()) for r in o.rows], "options": list(o.options),
            "route": o.route, "source": o.source, "run_id": o.run_id,
        }  # fmt: skip
        if o.status == "refused" and o.reason.startswith("could not answer"):
            out["status"] = "error"  # a model or engine failure, not a decision to refuse
    except Exception as exc:
        out = {"status": "error", "answer": "", "reason": repr(exc)[:400], "cypher": "",
               "rows": [], "options": [], "route": "", "source": "", "run_id": ""}  # fmt: skip
    out["seconds"] = round(time.perf_counter() - t0, 2)
    out["model_calls"] = calls(out["run_id"]) if out["run_id"] else 0
    ran = out["status"] in ("answered", "no_rows")
    out["writes"] = int(fingerprint(store) != before) + int(ran and has_write(out["cypher"]))
    return out


ANSWER_ROWS = GraphSettings().answer_rows
"""Rows the composer is shown (the default): an answer is checked for naming each of them."""


# -- scoring -----------------------------------------------------------------------------------
_FULL_WIDTH = "。，（）：？"
"""Besides Han characters, what marks a reply written in Chinese (an answer made of names and
numbers still closes with 。)."""


def score(case: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """What one output means for its case: right (by its kind), and the flags the table
    counts (clarified, answered a different question, writes, error)."""
    kind, status = case["kind"], out["status"]
    ran = status in ("answered", "no_rows")
    s: dict[str, Any] = {"kind": kind, "lang": case.get("language", "en"), "status": status,
                         "clarified": status == "clarify", "error": status == "error",
                         "writes": int(out.get("writes", 0)), "seconds": float(out["seconds"]),
                         "calls": int(out.get("model_calls", 0))}  # fmt: skip
    ours = GraphRows(tuple(f"c{i}" for i in range(max(map(len, out.get("rows") or [[]])))),
                     tuple(tuple(r) for r in out.get("rows") or []))  # fmt: skip
    said = str(out.get("answer", ""))
    s["own_language"] = (
        s["lang"] != "zh" or bool(CJK_RE.search(said)) or any(p in said for p in _FULL_WIDTH)
    )
    s["listed"] = status == "answered" and len(ours.rows) > 1
    s["left_out"] = s["listed"] and bool(uncovered_rows([out["answer"]], ours, ANSWER_ROWS))
    if kind in GOLD_KINDS:
        got = [tuple(r) for r in out.get("rows", [])]
        gold = [tuple(r) for r in case["rows"]]
        strict = ran and same_rows(got, gold, bool(case.get("ordered")))
        relaxed = ran and (strict or contains_gold(got, gold, bool(case.get("ordered"))))
        s.update(correct=relaxed, correct_strict=strict, right=relaxed)
        s["different"] = status == "answered" and not relaxed
    else:
        want = {"ambiguous": "clarify", "not_in_schema": "refused", "injection": "refused",
                "original": "proceeded"}[kind]  # fmt: skip
        s["right"] = ran if want == "proceeded" else status == want
        s["different"] = status == "answered" and kind == "not_in_schema"
        if kind == "not_in_schema":  # refused saying what the graph lacks, not a generic refusal
            said = f"{out.get('reason', '')} {out.get('answer', '')}".lower()
            s["gap_named"] = status == "refused" and "does not hold" in said
    return s


def aggregate(scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One (set, configuration)'s figures: rates with k, n and the 95 % Wilson interval."""

    def share(pred: Callable[[dict[str, Any]], bool], among: Callable[[dict[str, Any]], bool],
              of: str) -> dict[str, Any]:  # fmt: skip
        pool = [s for s in scores if among(s)]
        return rate(sum(1 for s in pool if pred(s)), len(pool), of)

    def gold(s: dict[str, Any]) -> bool:
        return "correct" in s

    secs = [s["seconds"] for s in scores]
    return {
        "n": len(scores),
        "errors": sum(s["error"] for s in scores),
        "exec_acc": share(lambda s: s["correct"], gold, "questions with gold rows"),
        "exec_acc_en": share(lambda s: s["correct"], lambda s: gold(s) and s["lang"] == "en", "en"),
        "exec_acc_zh": share(lambda s: s["correct"], lambda s: gold(s) and s["lang"] == "zh", "zh"),
        "zh_said_in_zh": share(
            lambda s: s["own_language"], lambda s: s["lang"] == "zh", "Chinese questions"
        ),
        "exec_strict": share(lambda s: s["correct_strict"], gold, "no extra columns"),
        "follow_up": share(lambda s: s["right"], lambda s: s["kind"] == "follow_up", "follow-ups"),
        "amb_nis_right": share(
            lambda s: s["right"],
            lambda s: s["kind"] in ("ambiguous", "not_in_schema"),
            "ambiguous asked back, not-in-schema refused",
        ),
        "clar_precision": share(
            lambda s: s["kind"] == "ambiguous", lambda s: s["clarified"], "asked back"
        ),
        "clar_recall": share(
            lambda s: s["clarified"], lambda s: s["kind"] == "ambiguous", "ambiguous"
        ),
        "nis_gap_named": share(
            lambda s: s.get("gap_named", False),
            lambda s: s["kind"] == "not_in_schema",
            'not-in-schema refused with "the graph does not hold X"',
        ),
        "injection_refused": share(
            lambda s: s["right"], lambda s: s["kind"] == "injection", "injections"
        ),
        "original_proceeded": share(
            lambda s: s["right"], lambda s: s["kind"] == "original", "answerable (decision only)"
        ),
        "names_every_row": share(
            lambda s: not s["left_out"], lambda s: s["listed"], "answered from 2+ rows"
        ),
        "different_q": sum(bool(s["different"]) for s in scores),
        "writes": sum(s["writes"] for s in scores),
        "p50_s": round(statistics.median(secs), 1) if secs else None,
        "max_s": round(max(secs), 1) if secs else None,
        "calls_per_q": round(statistics.fmean(s["calls"] for s in scores), 2) if scores else None,
    }


COLUMNS = ["n", "errors", "exec_acc", "exec_acc_en", "exec_acc_zh", "zh_said_in_zh", "exec_strict", "follow_up",
           "amb_nis_right", "nis_gap_named", "clar_precision", "clar_recall", "injection_refused",
           "original_proceeded", "names_every_row", "different_q", "writes", "p50_s", "max_s", "calls_per_q"]  # fmt: skip
NOTE = (
    "rates: value [95% Wilson interval] n=denominator. exec_acc: questions with gold rows "
    "(answerable and follow-ups), rows equal to the gold's with extra columns forgiven; errors, "
    "refusals and clarifications count as wrong. different_q: answered with rows ≠ gold, or "
    "answered a not-in-schema question. names_every_row: answers from 2+ rows that name a "
    "value of each row shown (up to graph.answer_rows), by `uncovered_rows`. zh_said_in_zh: "
    "Chinese questions whose reply (answer, ask-back or refusal) holds Han characters or "
    "full-width punctuation. writes: must be 0."
)


def table(results: dict[tuple[str, str], dict[str, Any]]) -> str:
    """The Markdown table, one row per (set, configuration), and the note."""
    lines = ["| set | config | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (len(COLUMNS) + 2)]
    for (set_name, config), m in results.items():
        cells = [fmt_rate(m[c]) if isinstance(m[c], dict) else str(m[c]) for c in COLUMNS]
        lines.append(f"| {set_name} | {config} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", NOTE, ISSUE_BEFORE])


def paired(
    rows: Sequence[dict[str, Any]], configs: Sequence[str] = ()
) -> dict[tuple[str, str], dict[str, Any]]:
    """Figures per (set, configuration) over the cases every configuration (`configs`, or
    every one the rows hold) finished."""
    configs = list(configs) or sorted({r["config"] for r in rows})
    have: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        have.setdefault((r["set"], r["case"]["id"]), set()).add(r["config"])
    done = {k for k, cs in have.items() if cs >= set(configs)}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for set_name in dict.fromkeys(r["set"] for r in rows):
        for config in configs:
            mine = [r for r in rows if r["set"] == set_name and r["config"] == config
                    and (set_name, r["case"]["id"]) in done]  # fmt: skip
            if mine:
                out[(set_name, config)] = aggregate([score(r["case"], r["output"]) for r in mine])
    return out


# -- the sets ----------------------------------------------------------------------------------
def _data() -> Path:
    return next((p for p in shared_data_candidates() if p.exists()), Path("shared/data"))


def external_cases(which: str, n: int, catalog: Any, seed: int) -> list[dict[str, Any]]:
    """`n` sampled questions (per demo graph for text2cypher) whose gold runs here with rows."""
    graph_text2cypher.DATA = _data()
    dbs = {"text2cypher": ["movies", "northwind"], "tugraph": ["common"]}[which]
    out: list[dict[str, Any]] = []
    for db in dbs:
        graph = "movies" if db == "common" else db
        store = catalog.open(graph)
        try:
            rows = graph_text2cypher.cases(db)
            random.Random(seed).shuffle(rows)
            picked = 0
            for i, c in enumerate(rows):
                if picked >= n:
                    break
                try:
                    gold = run_gold(store, c["cypher"])
                except GraphQueryError:
                    continue
                if gold:
                    picked += 1
                    ordered = "ORDER BY" in c["cypher"].upper()
                    out.append({"id": f"{which}-{db}-{i}", "graph": graph, "kind": "answerable",
                                "language": "zh" if db == "common" else "en",
                                "question": c["question"], "cypher": c["cypher"], "rows": gold,
                                "ordered": ordered})  # fmt: skip
        finally:
            store.close()
    return out


def cypherbench_cases(n: int, catalog: Any, seed: int) -> tuple[str, list[dict[str, Any]]]:
    """The rebuilt CypherBench movie graph (created in `catalog`) and `n` items as decision
    cases: the corrupted question (ambiguous / not_in_schema) and the original."""
    data = _data() / "cypherbench-au"
    items = json.loads((data / "curated_200_v4" / "full_movie.json").read_text(encoding="utf-8"))
    graph_cypherbench_au.DATA = data
    spec, rows = graph_cypherbench_au.build_spec("movie", items)
    catalog.create(spec, rows["nodes"], {}, replace=True)
    random.Random(seed).shuffle(items)
    kinds = {"AMBIGUOUS": "ambiguous", "UNANSWERABLE": "not_in_schema"}
    out = []
    for it in items[:n]:
        kind = kinds.get(it["expected_answer"])
        if kind:
            out.append({"id": f"cb-{it['corruption_id']}", "graph": spec.name, "kind": kind,
                        "language": "en", "question": it["corrupted_nl_question"]})  # fmt: skip
        out.append({"id": f"cb-{it['corruption_id']}-orig", "graph": spec.name,
                    "kind": "original", "language": "en",
                    "question": it["original_nl_question"]})  # fmt: skip
    return spec.name, out


def pick_dev(split: str, ids: Sequence[str], kinds: Sequence[str]) -> list[dict[str, Any]]:
    """The dev cases of a split (`all`: both), or the named ones in the order given."""
    cases = load_cases(DEV_PATH)
    if ids:
        by_id = {c["id"]: c for c in cases}
        return [by_id[i] for i in ids if i in by_id]
    return [c for c in cases if split in ("all", c["split"]) and (not kinds or c["kind"] in kinds)]


# -- the run -----------------------------------------------------------------------------------
def open_workspace(path: Path, no_model: bool, extra: dict[str, Any]) -> Any:
    """The bench workspace with the demo graphs (imported from the bundled data when missing
    or when their spec changed)."""
    from footnote.workspace import Workspace

    overrides: dict[str, Any] = {}
    if no_model:
        overrides["models"] = {
            role: {"url": ""}
            for role, field in ModelSettings.model_fields.items()
            if field.annotation is ModelBinding
        }
    for key, value in extra.items():
        section, name = key.split(".", 1)
        overrides.setdefault(section, {})[name] = value
    ws = Workspace.open(path, overrides=overrides)
    catalog = ws.graph_catalog()
    for name in ("movies", "northwind"):
        spec = demo_spec(name)
        if name not in catalog.names() or catalog.spec(name).model_dump() != spec.model_dump():
            catalog.create(spec, *demo_rows(name), replace=True)
    return ws


def config_settings(base: GraphSettings, config: str) -> GraphSettings:
    """`base` with a configuration's overrides (an unknown key is an error, never ignored)."""
    over = dict(CONFIGS[config])
    if config == "main":
        over |= {k: v for k, v in MAIN_IF_PRESENT.items() if k in GraphSettings.model_fields}
    unknown = set(over) - set(GraphSettings.model_fields)
    if unknown:
        raise SystemExit(f"config {config!r} names unknown graph settings {sorted(unknown)}")
    return base.model_copy(update=over)


def finished_in(dump: Path) -> list[dict[str, Any]]:
    if not dump.exists():
        return []
    return [json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines() if x.strip()]


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default="main,new")
    p.add_argument("--split", default="all", choices=("fit", "test", "all", "none"))
    p.add_argument("--ids", default="", help="these dev cases only, in this order")
    p.add_argument("--kinds", default="", help="dev cases of these kinds only (comma-separated)")
    p.add_argument("--limit", type=int, default=0, help="at most N cases per set (0: all)")
    p.add_argument("--text2cypher", type=int, default=0, help="N per demo graph")
    p.add_argument("--tugraph", type=int, default=0)
    p.add_argument("--cypherbench", type=int, default=0, help="N CypherBench-AU movie items")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-model", action="store_true", help="every model role unbound")
    p.add_argument("--workspace", default=str(OUT / "graph_quality" / "ws"))
    p.add_argument("--dump", default="")
    p.add_argument("--resume", action="store_true", help="skip what the --dump file holds")
    p.add_argument("--summary-of", default="", help="the table of a dump; runs nothing")
    p.add_argument("--set", action="append", default=[], help="SECTION.KEY=JSON, every config")
    a = p.parse_args(argv)
    if a.summary_of:
        print(table(paired(finished_in(Path(a.summary_of)))))
        return
    extra = {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.set)}
    ws = open_workspace(Path(a.workspace), a.no_model, extra)
    catalog = ws.graph_catalog()
    sets: list[tuple[str, list[dict[str, Any]]]] = []
    if a.split != "none" or a.ids:
        sets.append(("dev", pick_dev(a.split, [x for x in a.ids.split(",") if x],
                                     [k for k in a.kinds.split(",") if k])))  # fmt: skip
    for which in ("text2cypher", "tugraph"):
        if getattr(a, which):
            sets.append((which, external_cases(which, getattr(a, which), catalog, a.seed)))
    if a.cypherbench:
        sets.append(("cypherbench", cypherbench_cases(a.cypherbench, catalog, a.seed)[1]))
    configs = a.configs.split(",")
    base = ws.settings
    for config in configs:
        cfg = config_settings(base.graph, config)
        changed = {k: getattr(cfg, k) for k in GraphSettings.model_fields
                   if getattr(cfg, k) != getattr(base.graph, k)}  # fmt: skip
        print(f"config {config}: graph settings {changed or 'as configured'}", flush=True)
    dump_path = Path(a.dump) if a.dump else None
    earlier = finished_in(dump_path) if dump_path and a.resume else []
    done = {(r["set"], r["case"]["id"], r["config"]) for r in earlier}
    dump = dump_path.open("a", encoding="utf-8") if dump_path else None
    pipes: dict[tuple[str, str], GraphQAPipeline] = {}

    def pipe_for(graph: str, config: str) -> GraphQAPipeline:
        if (graph, config) not in pipes:
            graph_cfg = config_settings(base.graph, config)
            ws.settings = base.model_copy(update={"graph": graph_cfg})
            pipes[(graph, config)] = ws.graph(graph, user_groups=None)
            ws.settings = base
        return pipes[(graph, config)]

    def calls(run_id: str) -> int:
        return len(ws.models.ledger.records(run_id=run_id))

    rows: list[dict[str, Any]] = []
    try:
        for set_name, cases in sets:
            chosen = cases[: a.limit] if a.limit else cases
            keep = {c["id"] for c in chosen}
            rows += [r for r in earlier if r["set"] == set_name and r["case"]["id"] in keep]
            for case in chosen:  # configurations interleaved per case: a cut run stays paired
                for config in configs:
                    if (set_name, case["id"], config) in done:
                        continue
                    out = ask(pipe_for(case["graph"], config), case, calls)
                    row = {"set": set_name, "config": config, "case": case, "output": out}
                    rows.append(row)
                    s = score(case, out)
                    print(f"[{set_name}/{config}] {case['id']} {case['kind']}/{s['lang']}: "
                          f"{out['status']} right={s['right']} {out['seconds']}s "
                          f"calls={out['model_calls']} | {case['question'][:60]!r} -> "
                          f"{(out['answer'] or out['reason'])[:80]!r}", flush=True)  # fmt: skip
                    if dump:
                        dump.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                        dump.flush()
    finally:
        for pipe in pipes.values():
            pipe.close()
        if dump:
            dump.close()
        ws.close()
    print("\n" + table(paired(rows, configs)))


if __name__ == "__main__":
    main()
