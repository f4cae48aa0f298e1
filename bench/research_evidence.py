"""Where a research brief loses its key points (issue #32): per gold quote, the stage it
reaches on the real pipeline with every model role unbound (template planner, code ranking,
cards' own sentences; deterministic, minutes not hours).

For every library question of the research dev set and the multi-document set (optionally
the fixture-web ones too, `--web`), one brief is run through `Workspace` research exactly as
the CLI runs it (the outline confirmed as proposed), then every gold quote — key points' and
conflict values' — is followed through three stages:

- `retrieved`: a block the library search returned (top `research.library_k`) for a query of
  the run's stored plan holds the quote (library only: a fixture-web page is not searched
  again, so with `--web` a web quote can be carded without being counted here);
- `carded`: a card of the brief holds it (used or not);
- `cited`: a card a claim of the brief cites holds it.

Also printed: the cards per configuration, and the brief's conflicts scored as the quality
bench scores them (gold conflict values shown side by side; gold conflicts shown whole;
apparent conflicts reported as real; conflicts reported).

A quote "is in" a text when their longest common run of characters (NFKC, whitespace removed)
is at least 60 % of the quote, or the text is a sentence of at least 40 characters inside the
quote. A key point reaches a stage when any of its quotes does. Every rate is printed with
k/n and its 95 % Wilson interval; a question whose run failed counts every quote of it as lost
at every stage (the error is printed), never dropped.

`--scoped`: each brief may draw only on its question's own library papers (`source_ids`, as
`footnote research run --source` gives them), not the whole 30-paper library.

Configurations (`--configs`, each `NAME` or `NAME:research.KEY=JSON,...`) run in one process
on one workspace, so a setting's effect is read off one table:

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/research_evidence.py \\
        --configs today,k24:research.library_k=24 --dump bench/out/research_evidence.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from footnote.eval.metrics import rate
from footnote.eval.research import load_cases
from footnote.eval.research_metrics import conflict_scores
from footnote.eval.research_multidoc import conflict_values, load_multidoc, squash

OUT = Path(__file__).parent / "out"
STAGES = ("retrieved", "carded", "cited")
SHARE = 0.6
"""Of a quote's characters, the longest run a text must share with it."""
MIN_INSIDE = 40
"""A sentence inside a quote, at least this long, holds it."""


def holds(text: str, quote: str) -> bool:
    """Whether `text` holds `quote` (see the module docstring)."""
    t, q = squash(text), squash(quote)
    if not t or not q:
        return False
    if q in t or (len(t) >= MIN_INSIDE and t in q):
        return True
    m = SequenceMatcher(None, q, t, autojunk=False).find_longest_match(0, len(q), 0, len(t))
    return m.size >= SHARE * len(q)


def gold_quotes(case: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, quote) of every key point's and conflict value's quote."""
    out = [(kp["id"], s["quote"]) for kp in case["key_points"] for s in kp["sources"]]
    out += [(f"conflict:{cf['metric']}", v["quote"]) for cf in case.get("conflicts", [])
            for v in cf["values"]]  # fmt: skip
    return out


def parse_configs(text: str) -> dict[str, dict[str, Any]]:
    """`NAME` or `NAME:research.KEY=JSON,research.KEY=JSON` → research overrides per name."""
    out: dict[str, dict[str, Any]] = {}
    for item in filter(None, (x.strip() for x in text.split(";"))):
        name, _, rest = item.partition(":")
        conf: dict[str, Any] = {}
        for part in filter(None, rest.split(",")):
            key, sep, raw = part.partition("=")
            if not sep or not key.startswith("research."):
                raise SystemExit(f"--configs {item!r}: expected NAME:research.KEY=JSON,...")
            conf[key.removeprefix("research.")] = json.loads(raw)
        out[name] = conf
    return out


def stages_of(
    ws: Any, run_id: str | None, brief: dict[str, Any] | None, source_ids: Sequence[str] = ()
) -> dict[str, list[str]]:
    """The texts each stage holds: retrieved blocks (searched as the run searched: within
    `source_ids` when scoped), cards, cited cards."""
    from footnote.index import SearchFilters
    from footnote.workspace.research import research_store

    if brief is None or run_id is None:
        return {s: [] for s in STAGES}
    plan = research_store(ws).get_artifact(run_id, "plan") or {"sub_questions": []}
    k = ws.settings.research.library_k
    retrieved: dict[str, str] = {}
    for sq in plan["sub_questions"]:
        for query in sq["queries"]:
            for hit in ws.searcher.search(
                query, k=k, filters=SearchFilters(source_ids=tuple(source_ids))
            ):
                b = hit.block
                retrieved[b.id] = b.table.as_text() if b.table is not None else b.text
    cards = {c["id"]: c["snippet"] for c in brief["cards"]}
    cited = {cid for s in brief["sections"] for cl in s["claims"] for cid in cl.get("card_ids", [])}
    return {
        "retrieved": list(retrieved.values()),
        "carded": list(cards.values()),
        "cited": [t for cid, t in cards.items() if cid in cited],
    }


def score(case: dict[str, Any], texts: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Per gold quote: the stages it reached."""
    return [
        {"what": what, "quote": quote[:80], **{s: any(holds(t, quote) for t in texts[s]) for s in STAGES}}
        for what, quote in gold_quotes(case)
    ]  # fmt: skip


def table(rows: Sequence[dict[str, Any]]) -> str:
    """Recall per stage and configuration: quotes, key points (any quote), conflict values."""
    lines = ["config | unit | " + " | ".join(STAGES), "---|---|" + "---|" * len(STAGES)]
    for config in dict.fromkeys(r["config"] for r in rows):
        mine = [r for r in rows if r["config"] == config]
        quotes = [q for r in mine for q in r["quotes"] if not q["what"].startswith("conflict:")]
        values = [q for r in mine for q in r["quotes"] if q["what"].startswith("conflict:")]
        points = []
        for r in mine:
            ids = dict.fromkeys(
                q["what"] for q in r["quotes"] if not q["what"].startswith("conflict:")
            )
            points += [
                {s: any(q[s] for q in r["quotes"] if q["what"] == i) for s in STAGES} for i in ids
            ]
        for unit, items in (("key-point quotes", quotes), ("key points", points),
                            ("conflict values", values)):  # fmt: skip
            cells = []
            for s in STAGES:
                r_ = rate(sum(x[s] for x in items), len(items), unit)
                cells.append(f"{r_['k']:g}/{r_['n']} = {r_['value']} [{r_['lo']}–{r_['hi']}]")
            lines.append(f"{config} | {unit} | " + " | ".join(cells))
    for config in dict.fromkeys(r["config"] for r in rows):
        n = [r.get("cards", 0) for r in rows if r["config"] == config and not r.get("error")]
        lines.append(f"{config}: {sum(n)} cards over {len(n)} briefs")
        got = [r["conflicts"] for r in rows if r["config"] == config]
        shown = rate(sum(g["shown"] for g in got), sum(g["values"] for g in got), "gold values")
        lines.append(
            f"{config}: gold conflict values shown side by side in the brief's conflicts "
            f"{shown['k']:g}/{shown['n']} = {shown['value']} [{shown['lo']}–{shown['hi']}]"
        )
        flagged = [r["flagged"] for r in rows if r["config"] == config and r.get("flagged")]
        lines.append(
            f"{config}: conflicts reported {sum(f['reported'] for f in flagged)}; gold conflicts "
            f"shown whole {sum(f['shown'] for f in flagged)}/{sum(f['gold'] for f in flagged)}; "
            f"apparent conflicts reported as real {sum(f['false_conflicts'] for f in flagged)}"
            f"/{sum(f['apparent'] for f in flagged)}"
        )
    failed = [f"{r['config']} {r['case']}: {r['error']}" for r in rows if r.get("error")]
    return "\n".join(lines + ([f"failed runs (every quote counted lost): {len(failed)}", *failed]
                              if failed else []))  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default="today", help="NAME[:research.KEY=JSON,...];NAME...")
    p.add_argument("--ids", default="", help="these questions only (comma-separated)")
    p.add_argument("--web", action="store_true", help="the fixture-web questions too")
    p.add_argument("--templates", default="free", choices=("free", "named"))
    p.add_argument("--workspace", default=str(OUT / "research_evidence" / "ws"))
    p.add_argument("--data", default="", help="shared data folder (default: as the eval finds it)")
    p.add_argument("--dump", default="")
    p.add_argument("--scoped", action="store_true",
                   help="each brief drawn from its question's own papers only (`research run "
                        "--source`), as an analyst asking about 'these papers' runs it")  # fmt: skip
    a = p.parse_args(argv)
    configs = parse_configs(a.configs)
    ids = {x for x in a.ids.split(",") if x}
    cases = [c for c in [*load_cases(), *load_multidoc()]
             if (not ids or c["id"] in ids) and (a.web or not c["web"])]  # fmt: skip
    rows = run(a, configs, cases)
    print("\n" + table(rows))


def run(a: argparse.Namespace, configs: dict[str, dict[str, Any]],
        cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:  # fmt: skip
    """Every question in every configuration on one workspace with no model bound."""
    from footnote.eval.fixture_web import FixtureWeb
    from footnote.eval.loaders import default_data_dir
    from footnote.eval.research import library_files, research_overrides, run_case, source_id
    from footnote.workspace import Workspace

    data = Path(a.data) if a.data else default_data_dir()
    rows: list[dict[str, Any]] = []
    with FixtureWeb() as web, ExitStack() as stack:
        dump = stack.enter_context(Path(a.dump).open("a", encoding="utf-8")) if a.dump else None
        unbound = {"url": ""}
        overrides = {"research": research_overrides(web),
                     "models": {"judge": unbound, "compose": unbound, "understand": unbound}}  # fmt: skip
        ws = Workspace.open(Path(a.workspace), overrides=overrides)
        base = ws.settings
        try:
            files = library_files([*load_cases(), *load_multidoc()], data,
                                  ws.dir / "eval-cache" / "research")  # fmt: skip
            todo = [
                f for f in files.values() if ws.store.find_source_by_uri(str(f.resolve())) is None
            ]
            if todo:
                print(f"ingesting {len(todo)} library papers", flush=True)
                ws.ingest(todo)
            for case in cases:
                asked = case if a.templates == "named" else {**case, "template": None}
                for config, conf in configs.items():
                    ws.settings = base.model_copy(
                        update={"research": base.research.model_copy(update=conf)}
                    )
                    t0 = time.time()
                    ids = [source_id(ws, files[ref]) for ref in case["library"]] if a.scoped else []
                    opts = {"source_ids": ids} if a.scoped else {}
                    out = asyncio.run(run_case(ws, asked, "brief", opts))
                    texts = stages_of(ws, out.get("run_id"), out.get("brief"), ids)
                    row = {"case": case["id"], "config": config, "lang": case["lang"],
                           "settings": conf, "error": out.get("error"),
                           "seconds": round(time.time() - t0, 1),
                           "template": (out.get("brief") or {}).get("outline", {}).get("template"),
                           "cards": len(texts["carded"]),
                           "conflicts": conflict_values(case, out["brief"]) if out.get("brief") else
                           {"values": sum(len(cf["values"]) for cf in case.get("conflicts", [])), "shown": 0},
                           "flagged": conflict_scores(case, out["brief"]) if out.get("brief") else None,
                           "quotes": score(case, texts)}  # fmt: skip
                    rows.append(row)
                    got = {s: sum(q[s] for q in row["quotes"]) for s in STAGES}
                    print(f"{case['id']} {config}: {got} of {len(row['quotes'])} quotes "
                          f"({row['template']}, {row['seconds']} s){' ' + str(row['error']) if row['error'] else ''}",
                          flush=True)  # fmt: skip
                    if dump:
                        dump.write(json.dumps(row, ensure_ascii=False) + "\n")
                        dump.flush()
        finally:
            ws.settings = base
            ws.close()
    return rows


if __name__ == "__main__":
    sys.exit(main())
