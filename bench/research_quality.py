"""Research briefs with the embedded model: today's pipeline vs the issue #32 changes, same run.

Two sets: the research dev set (`research_dev.jsonl`, 20 questions: QASPER, PaperQA stubs and
the fixture web) and the multi-document set written for issue #32 (`multidoc_dev.jsonl`, 8
questions over 2–4 QASPER papers or PaperQA stubs, 2 in Chinese). Every configuration of a
question runs back to back on one workspace and one loaded model (settings swapped case by
case, as `ask_quality.py` does), through the same path as `footnote eval research-dev`
(`eval.research.run_case`: start, confirm the outline, run to the brief). The library is the
union of both sets' papers, ingested once into the bench workspace; the fixture web is served
on loopback for the web questions.

Configurations (`research.*` overrides; `mode` picks brief or baseline):
- `main`: today's defaults with the #32 changes switched off where a setting allows it:
  `research.planner = "template"` (the report template and its fixed queries),
  `research.model_claims = false` (a card's claim is its snippet) and
  `research.cards_per_question = 6` (the fixed card count, not sized by `target_pages`; the
  old fixed six-sentence chapter cap itself has no setting). Not switchable, so in both
  configurations: the en/zh conflict matching with stated FX rates (`fx_rates` is
  empty by default, so nothing is converted), the web reader without the library handle, the
  paywall record, and the plain-words outline edits (unused here: outlines are confirmed as
  proposed).
- `new`: `research.planner = "model"` (the `understand` model proposes the outline and reads
  what each sub-question still misses).
- `baseline`: `mode = baseline` (one search, one model call), for reference.
- `today`: the installed defaults, nothing overridden.
- `extractive`: the defaults with the cards' own sentences as claims and chapters
  (`research.writer = "extractive"`, `research.model_claims = false`): what the model's writing
  adds or loses on the same cards.
`--scoped`: each brief draws only on its question's own library papers (`source_ids`, as
`footnote research run --source` gives them), as `bench/research_evidence.py --scoped` does.
Questions are asked free (`--templates free`, the default): no report template is named, so
`main` picks one by keywords (as the issue's runs did) and `new` lets the model plan; `--templates
named` passes each question's own template, as `footnote eval research-dev` does (the model then
proposes no outline, only the per-sub-question reading loop differs). As more #32 changes get
a setting, switch them off in `main` alone with `--config-set main:research.KEY=JSON`. The
response cache is off (`models.response_cache_size = 0`): a cache hit is not charged to a
brief's budget, so the second configuration of a question would look cheaper than it is.

Printed per (set, configuration), pooled over briefs by `eval.research_multidoc.summarise`:
briefs, failed runs, key-point coverage (deterministic and judged), conflict values shown with
scope (and shown at all), uncovered items stated (deterministic and judged), inventions
(deterministic and judged), claim citation precision (deterministic and judged), tokens, calls,
minutes and pages per brief; every rate with its n and 95 % Wilson interval, and the judge model
named. Judged figures use the workspace's `judge` role.

Usage: python bench/research_quality.py [--sets dev,multidoc] [--configs main,new] [--limit N]
           [--ids rq-qasper-01,md-02] [--templates free|named] [--budget-tokens N]
           [--budget-minutes M] [--no-judge] [--dump FILE] [--resume] [--summary-of FILE]
           [--set SECTION.KEY=JSON ...] [--config-set CONFIG:research.KEY=JSON ...]
           [--workspace DIR] [--data DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.research import load_cases
from footnote.eval.research_multidoc import load_multidoc, summarise, table

CONFIGS: dict[str, dict[str, Any]] = {
    # a key the installed ResearchSettings lacks is skipped, and said so, at start
    "main": {"planner": "template", "model_claims": False, "cards_per_question": 6},
    "new": {"planner": "model"},
    "baseline": {"mode": "baseline"},
    "today": {},
    "extractive": {"writer": "extractive", "model_claims": False},
}
SETS = ("dev", "multidoc")


def pick(set_name: str, limit: int | None, ids: Sequence[str]) -> list[dict[str, Any]]:
    """The questions of one set: the named ones, else the first `limit` (None: all)."""
    cases = load_cases() if set_name == "dev" else load_multidoc()
    if ids:
        cases = [c for c in cases if c["id"] in ids]
    return cases[:limit] if limit else cases


def parse_sets(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`SECTION.KEY=JSON` items as nested overrides (`models.judge.url=""` → {"models":
    {"judge": {"url": ""}}})."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or "." not in key:
            raise SystemExit(f"--set {item!r}: expected SECTION.KEY=JSON")
        *path, last = key.split(".")
        node: dict[str, Any] = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = json.loads(raw)
    return out


def config_sets(items: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`CONFIG:research.KEY=JSON` items as research overrides per configuration."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        config, sep, rest = item.partition(":")
        parsed = parse_sets([rest]) if sep else {}
        if set(parsed) != {"research"}:
            raise SystemExit(f"--config-set {item!r}: expected CONFIG:research.KEY=JSON")
        out.setdefault(config, {}).update(parsed["research"])
    return out


def finished_in(dump: Path) -> set[tuple[str, str, str]]:
    """(set, case, configuration) of every row a dump holds (none when it does not exist)."""
    if not dump.exists():
        return set()
    rows = (json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines() if x.strip())
    return {(r["set"], r["case"], r["config"]) for r in rows}


def all_cases() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in [*load_cases(), *load_multidoc()]}


def results_of(rows: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """The table over `rows`, paired: only questions every configuration in them finished."""
    cases = all_cases()
    configs = sorted({r["config"] for r in rows})
    keys = {(r["set"], r["case"]) for r in rows}
    done = {k for k in keys if all(any((r["set"], r["case"], r["config"]) == (*k, c) for r in rows)
                                   for c in configs)}  # fmt: skip
    results = {}
    for set_name in [s for s in SETS if any(r["set"] == s for r in rows)]:
        for lang in ("", "zh"):  # the whole set, then its Chinese questions alone
            for config in configs:
                mine = [r for r in rows if r["set"] == set_name and r["config"] == config
                        and (r["set"], r["case"]) in done
                        and (not lang or cases[r["case"]]["lang"] == lang)]  # fmt: skip
                if mine or not lang:
                    results[(f"{set_name} ({lang})" if lang else set_name, config)] = summarise(
                        mine, cases
                    )
    judges = sorted({str(r.get("judge")) for r in rows if r.get("judge")})
    head = f"{len(done)} questions finished by every configuration ({', '.join(configs)})"
    return head, table(results, ", ".join(judges) or None)


def summary_of(dump: Path) -> str:
    rows = [json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines() if x.strip()]
    head, body = results_of(rows)
    return f"{head}\n{body}"


async def run_one(ws: Any, case: dict[str, Any], mode: str, options: dict[str, Any],
                  judge_for: Any, snapshot_text: Any) -> dict[str, Any]:  # fmt: skip
    """One brief, scored by `research_metrics.score_brief` plus `research_multidoc`."""
    from footnote.eval.research import run_case
    from footnote.eval.research_metrics import score_brief
    from footnote.eval.research_multidoc import score_extra

    out = await run_case(ws, case, mode, options)
    row: dict[str, Any] = {"output": out}
    if "brief" in out:
        labels = sorted({lab for c in out["brief"]["cards"] for lab in c.get("labels", [])})
        judge = judge_for(labels) if judge_for is not None else None
        scores = score_brief(case, out["brief"], snapshot_text, judge)
        scores["extra"] = score_extra(case, out["brief"], judge)
        row["scores"] = scores
    return row


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", default="dev,multidoc", help="dev (research_dev.jsonl), multidoc")
    p.add_argument("--configs", default="main,new", help=", ".join(CONFIGS))
    p.add_argument("--limit", type=int, default=None, help="the first N questions of each set")
    p.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    p.add_argument("--budget-tokens", type=int, default=None, help="token budget per brief")
    p.add_argument("--budget-minutes", type=float, default=None, help="minutes per brief")
    p.add_argument(
        "--templates",
        default="free",
        choices=("free", "named"),
        help="free: no report template named, the pipeline picks (keywords under `main`, the "
        "model under `new`); named: each question's own template, as `footnote eval "
        "research-dev` passes it (the model then plans no outline)",
    )
    p.add_argument("--no-judge", action="store_true", help="deterministic scores only")
    p.add_argument(
        "--scoped", action="store_true", help="each brief on its question's own library papers only"
    )
    p.add_argument("--dump", default="", help="append every brief and its scores as JSONL")
    p.add_argument("--resume", action="store_true",
                   help="skip each (set, question, configuration) the --dump file holds")  # fmt: skip
    p.add_argument("--summary-of", default="", help="print the table of a --dump; runs nothing")
    p.add_argument("--set", action="append", default=[],
                   help="SECTION.KEY=JSON for every configuration (research.* keys win over "
                   "the configuration's own)")  # fmt: skip
    p.add_argument(
        "--config-set",
        action="append",
        default=[],
        help="CONFIG:research.KEY=JSON for one configuration only (after --set)",
    )
    p.add_argument("--workspace", default=str(OUT / "research_quality" / "ws"))
    p.add_argument(
        "--data", default="", help="shared data folder (default: found as the eval does)"
    )
    a = p.parse_args(argv)
    if a.summary_of:
        print(summary_of(Path(a.summary_of)))
        return
    configs = [c for c in a.configs.split(",") if c]
    sets = [s for s in a.sets.split(",") if s]
    if set(configs) - set(CONFIGS) or set(sets) - set(SETS) or not configs or not sets:
        raise SystemExit(f"--configs among {', '.join(CONFIGS)}; --sets among {', '.join(SETS)}")
    for name, value in (
        ("--budget-tokens", a.budget_tokens),
        ("--budget-minutes", a.budget_minutes),
    ):
        if value is not None and value <= 0:
            raise SystemExit(f"{name} must be above 0 (got {value})")
    ids = [x for x in a.ids.split(",") if x]
    chosen = [(s, c) for s in sets for c in pick(s, a.limit, ids)]
    extra = parse_sets(a.set)
    per_config = config_sets(a.config_set)
    if set(per_config) - set(CONFIGS):
        raise SystemExit(f"--config-set: configurations among {', '.join(CONFIGS)}")
    run_all(a, configs, chosen, extra, per_config)


def run_all(a: argparse.Namespace, configs: Sequence[str], chosen: Sequence[tuple[str, dict[str, Any]]],
            extra: dict[str, Any], per_config: dict[str, dict[str, Any]]) -> None:  # fmt: skip
    """Open the bench workspace (fixture web on loopback, response cache off, `--set`
    applied), ingest the library once, run every question in every configuration, print."""
    from footnote.eval.fixture_web import FixtureWeb
    from footnote.eval.loaders import default_data_dir
    from footnote.eval.research import library_files, research_overrides
    from footnote.workspace import Workspace

    data = Path(a.data) if a.data else default_data_dir()
    dump_path = Path(a.dump) if a.dump else None
    with FixtureWeb() as web:
        overrides: dict[str, Any] = {"research": research_overrides(web),
                                     "models": {"response_cache_size": 0}}  # fmt: skip
        for section, values in extra.items():
            overrides.setdefault(section, {}).update(values)
        ws = Workspace.open(Path(a.workspace), overrides=overrides)
        try:
            files = library_files([*load_cases(), *load_multidoc()], data,
                                  ws.dir / "eval-cache" / "research")  # fmt: skip
            todo = [f for f in files.values()
                    if ws.store.find_source_by_uri(str(f.resolve())) is None]  # fmt: skip
            if todo:
                print(f"ingesting {len(todo)} library papers", flush=True)
                ws.ingest(todo)
            settings = {c: config_settings(ws, c, extra, per_config) for c in configs}
            rows = run_cases(ws, a, chosen, settings, dump_path, files)
        finally:
            ws.close()
    if dump_path:
        print("\n" + summary_of(dump_path))
    elif rows:
        head, body = results_of(rows)
        print(f"\n{head}\n{body}")


def config_settings(ws: Any, config: str, extra: dict[str, Any],
                    per_config: dict[str, dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
    """One configuration's research overrides (and `mode`): its own, then `--set research.*`,
    then `--config-set`; a key of `CONFIGS` the installed settings lack is skipped, said so."""
    known = set(type(ws.settings.research).model_fields) | {"mode"}
    if missing := sorted(set(CONFIGS[config]) - known):
        print(f"{config}: research.{', research.'.join(missing)} not a setting here: skipped")
    conf = {k: v for k, v in CONFIGS[config].items() if k in known}
    return {**conf, **extra.get("research", {}), **per_config.get(config, {})}


def run_cases(ws: Any, a: argparse.Namespace, chosen: Sequence[tuple[str, dict[str, Any]]],
              settings: dict[str, dict[str, Any]], dump_path: Path | None,
              files: dict[str, Path]) -> list[dict[str, Any]]:  # fmt: skip
    """Every question in every configuration, the configurations of a question back to back
    (a run cut short stays paired); each row printed and appended to the dump."""
    from footnote.eval.research import _judge, source_id
    from footnote.workspace.research import research_store

    done = finished_in(dump_path) if a.resume and dump_path else set()
    options = {"budget_tokens": a.budget_tokens, "budget_minutes": a.budget_minutes}
    judge_for = None if a.no_judge else _judge(ws)
    judge_name = ws.settings.models.judge.url if judge_for is not None else None
    store = research_store(ws)

    def snapshot_text(card: dict[str, Any]) -> str | None:
        if card.get("block_id"):
            block = ws.store.get_block(card["block_id"])
            if block is None:
                return None
            return str(block.table.as_text() if block.table else block.text)
        snap = store.get_snapshot(card.get("snapshot_id") or "")
        return snap.text if snap else None

    base = ws.settings
    rows: list[dict[str, Any]] = []
    dump = dump_path.open("a", encoding="utf-8") if dump_path else None
    try:
        for set_name, case in chosen:
            for config, conf in settings.items():
                if (set_name, case["id"], config) in done:
                    continue
                research = {k: v for k, v in conf.items() if k != "mode"}
                mode = str(conf.get("mode", "brief"))
                ws.settings = base.model_copy(
                    update={"research": base.research.model_copy(update=research)}
                )
                t0 = time.time()
                asked = case if a.templates == "named" else {**case, "template": None}
                scope = ({"source_ids": [source_id(ws, files[ref]) for ref in case["library"]]}
                         if a.scoped and case["library"] else {})  # fmt: skip
                one = asyncio.run(run_one(ws, asked, mode, {**options, **scope}, judge_for,
                                          snapshot_text))  # fmt: skip
                row = {"set": set_name, "case": case["id"], "config": config, "lang": case["lang"],
                       "judge": judge_name, "settings": research, "mode": mode,
                       "template": asked["template"], "scoped": bool(scope), **one}  # fmt: skip
                rows.append(row)
                print(progress_line(row, time.time() - t0), flush=True)
                if dump:
                    dump.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                    dump.flush()
    finally:
        ws.settings = base
        if dump:
            dump.close()
    return rows


def progress_line(row: dict[str, Any], seconds: float) -> str:
    """One brief's line: its main figures, or why it failed."""
    s = row.get("scores")
    head = f"[{row['set']}/{row['config']}] {row['case']}: "
    if not s:
        return head + f"FAILED {row['output'].get('error')} ({seconds:.0f}s)"
    return head + (f"coverage_det={s['coverage_det']} conflict_values={s['extra']['conflict_values']} "
                   f"inventions_det={s['extra']['inventions']['invented_det']} "
                   f"tokens={s['cost']['tokens']:.0f} ({seconds:.0f}s)")  # fmt: skip


if __name__ == "__main__":
    main()
