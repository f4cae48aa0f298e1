"""Answers with the embedded model: today's pipeline vs the answering changes, same run, same cases.

Each configuration is a set of `answering.*` overrides on one workspace (swapped case by case,
so the two configurations of a case run back to back on the same loaded model; papers ingested once,
in `bench/out/ask_retrieval/dev` for the dev set and `bench/out/ask_quality/qasper` for QASPER).
`main` is the pipeline before issue #29 (`answering.responsive=false`: support is checked, not
whether the answer answers the question). `today` switches every #14 change off (search order,
no table cells by code, no translated query,
no answerability call); `new` is the defaults; `+rerank` is `new` with `retrieval.rerank` on
(the judge role reranks the first 12 fused hits); `+repair` repairs paraphrased quotes and
`+extract` adds to it the verbatim quote shown for a misplaced "Yes"/"No" or a bare value
(`answering.quote_spans`). Cases run one at a time through `Workspace.ask`
in `cite` mode with the bound compose/judge models (the embedded Qwen2.5-Coder-1.5B by default)
and are scored by `eval.metrics.score_case`, the evaluator's own rules.

Printed per configuration, by `eval.metrics.aggregate` (every rate with its n and 95 % Wilson
interval; an error is counted on its own, never as a refusal, and as wrong in accuracy-type
rates): errors, hedged refusals (a sentence shown), precision (right answers / answers given),
accuracy on answerable cases, false refusals on answerable cases that ran, clean refusals on
unanswerable, false premises corrected (numeric traps answered with the paper's value), gold
evidence cited (page + fuzzy quote, `evidence_recall`), QASPER token F1 on answerable, p50 and
max seconds, first status event, model calls, tokens and prompt tokens per question.
`--dump FILE` writes every case's output and scores as JSONL (used by `ask_calibrate.py`).
The whole test half of the development set: `--dev-half test --per-type 0`.

Usage: python bench/ask_quality.py [--dev-ids fd-001,fd-003,...] [--dev-half test|fit|none]
           [--per-type N] [--qasper N] [--configs main,new] [--mode cite] [--dump FILE]
           [--resume] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.cases import Case
from footnote.eval.loaders import Dataset, default_data_dir, dev_half, load_dataset
from footnote.eval.metrics import aggregate, score_case
from footnote.eval.report import fmt_rate
from footnote.eval.runner import ask_case, ingest_papers
from footnote.events import Status

CONFIGS: dict[str, dict[str, Any]] = {
    "today": {
        "retrieval": "search",
        "tables": False,
        "translate": False,
        "answerability": False,
    },
    "new": {},
    # main before issue #29: support checked, not whether the answer answers the question
    "main": {"responsive": False},
    # a quote the model paraphrased replaced by the cited passage's sentence holding the answer
    "+repair": {"repair_quotes": True},
    # the extractive spans of issue #29: a paraphrased quote repaired to the passage's sentence,
    # then a misplaced "Yes"/"No" or a bare value shown as its verbatim quote
    "+extract": {"repair_quotes": True, "quote_spans": True},
    # the setting issue #13 wired, against `new` (a key with a dot names another section)
    "+rerank": {"retrieval.rerank": True},
}


def pick_dev(ds: Dataset, ids: Sequence[str], half: str, per_type: int) -> list[Case]:
    """The named cases, or the first `per_type` of each type in the half (0: the whole half;
    half `none`: no dev case)."""
    if ids:  # in the order given (a shuffled list samples every type early)
        by_id = {c.id: c for c in ds.cases}
        return [by_id[i] for i in ids if i in by_id]
    chosen: list[Case] = []
    counts: dict[str, int] = {}
    for c in ds.cases:
        if dev_half(c.id) != half or (per_type and counts.get(c.type, 0) >= per_type):
            continue
        counts[c.type] = counts.get(c.type, 0) + 1
        chosen.append(c)
    return chosen


def pick_qasper(ds: Dataset, n: int, skip: int = 0) -> list[Case]:
    """The first `n` questions in file order after `skip` (a few papers, so ingestion stays
    small; unanswerable ones included as they come)."""
    return ds.cases[skip : skip + n]


async def run_one(ws: Any, case: Case, source_id: str, mode: str = "cite") -> dict[str, Any]:
    """One case through the evaluator's `ask_case`, with the first status event timed."""
    real_ask = ws.ask
    first: dict[str, float] = {}

    def timed_ask(*a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        events = real_ask(*a, **kw)

        async def wrapped() -> Any:
            async for e in events:
                if isinstance(e, Status) and "status" not in first:
                    first["status"] = time.perf_counter() - t0
                yield e

        return wrapped()

    ws.ask = timed_ask
    try:
        out = await ask_case(ws, case, source_id, mode, None)
    finally:
        ws.ask = real_ask
    out["first_status_s"] = round(first.get("status", float("nan")), 4)
    spans = ws.runs.spans(out.get("run_id", ""))
    out["answerable_p"] = next(
        (s.data.get("p_answerable") for s in spans if s.name == "answerability"), None
    )
    out["prompt_tokens"] = out.get("tokens_in", 0)
    # for the per-stage reading of wrong answers (`ask_stages.py`): every draft the model wrote,
    # and the text of each passage it was shown
    out["drafts"] = [s.data.get("output", "") for s in spans if s.name == "compose"]
    blocks = ws.store.get_blocks(out.get("shown", []))
    out["shown_text"] = {i: b.text for i, b in blocks.items()}
    return out


def summarise(cases: Sequence[Case], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One configuration's figures, by the evaluator's own `aggregate`: every rate with its n
    and 95 % Wilson interval (errors count as wrong in accuracy-type rates, and are left out,
    said so, of false refusals and precision), hedged refusals and errors counted apart."""
    m = aggregate(cases, [r["scores"] for r in rows])
    rates = m["rates"]
    lat = [r["output"].get("latency_s", 0.0) for r in rows]
    first = [r["output"].get("first_status_s") for r in rows]
    first = [f for f in first if isinstance(f, float) and f == f]

    def per_q(key: str) -> float | None:
        vals = [float(r["output"].get(key, 0) or 0) for r in rows]
        return round(statistics.fmean(vals), 2) if vals else None

    return {
        "n": m["n"],
        "errors": f"{m['errors']} ({m['errors_answerable']} answerable)",
        "hedged": f"{m['hedged']} ({round(rates['hedged_rate']['k'])}/{rates['hedged_rate']['n']} unanswerable)",
        "precision": fmt_rate(rates["precision"]),
        "accuracy_answerable": fmt_rate(rates["accuracy_answerable"]),
        "false_refusals": fmt_rate(rates["false_refusal_rate"]),
        "clean_refusals": fmt_rate(rates["clean_refusal_rate"]),
        "premise_corrected": fmt_rate(rates["premise_corrected"]),
        "evidence_cited": fmt_rate(rates["evidence_recall"]),
        "f1_answerable": fmt_rate(rates["answer_f1_answerable"]),
        "p50_s": round(statistics.median(lat), 1) if lat else None,
        "max_s": round(max(lat), 1) if lat else None,
        "first_status_s": round(max(first), 3) if first else None,
        "calls_per_q": per_q("model_calls"),
        "tokens_per_q": per_q("tokens"),
        "prompt_tokens_per_q": per_q("prompt_tokens"),
    }


COLUMNS = [
    "n", "errors", "hedged", "precision", "accuracy_answerable", "false_refusals",
    "clean_refusals", "premise_corrected", "evidence_cited", "f1_answerable", "p50_s", "max_s",
    "first_status_s", "calls_per_q", "tokens_per_q", "prompt_tokens_per_q",
]  # fmt: skip
RATE_NOTE = (
    "rates: value [95% Wilson interval] n=denominator. precision: answers given (errors, "
    "refusals, hedged left out); accuracy: answerable cases (errors, refusals, hedged = wrong); "
    "false refusals: answerable cases that ran (errors left out); clean refusals: unanswerable "
    "cases refused with no answer sentence; hedged: refused but showing a sentence."
)


def table(results: dict[tuple[str, str], dict[str, Any]]) -> str:
    """The printed Markdown table, one row per (set, configuration), and the rate note."""
    lines = ["| set | config | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (len(COLUMNS) + 2)]
    for (set_name, config), summary in results.items():
        lines.append(
            f"| {set_name} | {config} | " + " | ".join(str(summary[c]) for c in COLUMNS) + " |"
        )
    return "\n".join([*lines, "", RATE_NOTE])


def workspace(path: Path, answering: dict[str, Any], extra: dict[str, Any]) -> Any:
    """The bench workspace at `path` with setting overrides (`answering` is swapped per case)."""
    from footnote.workspace import Workspace

    overrides: dict[str, Any] = {"answering": answering}
    for key, value in extra.items():
        section, name = key.split(".", 1)
        overrides.setdefault(section, {})[name] = value
    return Workspace.open(path, overrides=overrides)


def finished_in(dump: Path) -> set[tuple[str, str, str]]:
    """(set, case, configuration) of every row a dump holds (none when it does not exist)."""
    if not dump.exists():
        return set()
    rows = (json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines() if x)
    return {(r["set"], r["case"], r["config"]) for r in rows}


def summary_of(dump: Path) -> str:
    """The table of a dump, paired: only cases that every configuration in it finished."""
    rows = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines() if line]
    dev = load_dataset(
        "footnote-dev",
        data_dir=default_data_dir(),
        cache_dir=OUT / "ask_retrieval" / "dev" / "cache",
    )
    by_id = {c.id: c for c in dev.cases}
    configs = sorted({r["config"] for r in rows})
    done = {
        key
        for key in {(r["set"], r["case"]) for r in rows}
        if all(any((r["set"], r["case"], r["config"]) == (*key, c) for r in rows) for c in configs)
    }
    results = {}
    for config in configs:
        mine = [r for r in rows if r["config"] == config and (r["set"], r["case"]) in done]
        for r in mine:
            r["scores"] = score_case(by_id[r["case"]], r["output"])
        results[("footnote-dev", config)] = summarise([by_id[r["case"]] for r in mine], mine)
    return f"{len(done)} cases finished by every configuration ({', '.join(configs)})\n" + table(
        results
    )


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--dev-ids", default="", help="these dev cases only, in this order (comma-separated ids)"
    )
    p.add_argument(
        "--dev-half", default="test", choices=("fit", "test", "none"), help="none: no dev case"
    )
    p.add_argument(
        "--per-type", type=int, default=2, help="dev cases per type (0: every case of the half)"
    )
    p.add_argument("--qasper", type=int, default=0)
    p.add_argument("--qasper-skip", type=int, default=18, help="first case (18: paper 1908.06606)")
    p.add_argument(
        "--configs", default="main,new", help="today (before #14), main (before #29), new"
    )
    p.add_argument("--mode", default="cite", help="compose mode (extractive: no generative model)")
    p.add_argument("--dump", default="")
    p.add_argument(
        "--resume",
        action="store_true",
        help="skip each case and configuration the --dump file already holds (a run cut short "
        "goes on where it stopped; the table then covers this invocation's cases only — "
        "--summary-of DUMP gives the whole run)",
    )
    p.add_argument(
        "--summary-of",
        default="",
        help="print the table of an earlier (or unfinished) --dump file, over the cases every "
        "configuration in it finished (re-scored by today's evaluator); runs nothing",
    )
    p.add_argument("--set", action="append", default=[], help="SECTION.KEY=JSON, every config")
    a = p.parse_args(argv)
    if a.summary_of:
        print(summary_of(Path(a.summary_of)))
        return
    extra_answering: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for item in a.set:
        key, value = item.split("=", 1)
        target = extra_answering if key.startswith("answering.") else extra
        target[key.removeprefix("answering.") if target is extra_answering else key] = json.loads(
            value
        )
    data = default_data_dir()
    sets: list[tuple[str, Path, Dataset, list[Case]]] = []
    dev_path = OUT / "ask_retrieval" / "dev"
    dev = load_dataset("footnote-dev", data_dir=data, cache_dir=dev_path / "cache")
    ids = [x for x in a.dev_ids.split(",") if x]
    dev_cases = pick_dev(dev, ids, a.dev_half, a.per_type) if ids or a.dev_half != "none" else []
    if dev_cases:
        sets.append(("footnote-dev", dev_path, dev, dev_cases))
    if a.qasper:
        q_path = OUT / "ask_quality" / "qasper"
        qds = load_dataset("qasper-train", data_dir=data, cache_dir=q_path / "cache")
        sets.append(("qasper-train", q_path, qds, pick_qasper(qds, a.qasper, a.qasper_skip)))
    done = finished_in(Path(a.dump)) if a.resume and a.dump else set()
    dump = open(a.dump, "a", encoding="utf-8") if a.dump else None  # noqa: SIM115
    configs = a.configs.split(",")
    rows_by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for set_name, path, ds, cases in sets:
        ws = workspace(path, {}, extra)
        base = ws.settings
        sources = ingest_papers(ws, ds, cases)
        for case in cases:  # configurations interleaved per case: a cut-short run stays paired
            for config in configs:
                if (set_name, case.id, config) in done:
                    continue
                conf = CONFIGS[config]
                answering = base.answering.model_copy(
                    update={**{k: v for k, v in conf.items() if "." not in k}, **extra_answering}
                )
                sections: dict[str, Any] = {"answering": answering}
                for key, value in conf.items():
                    if "." in key:
                        name, field = key.split(".", 1)
                        section = sections.get(name, getattr(base, name))
                        sections[name] = section.model_copy(update={field: value})
                ws.settings = base.model_copy(update=sections)
                source = sources.get(str(ds.paper_path(case)))
                if source is None:
                    out = {"status": "error", "answer": "", "error": "not ingested",
                           "citations": [], "sentences": [], "latency_s": 0.0,
                           "first_status_s": float("nan"), "prompt_tokens": 0}  # fmt: skip
                else:
                    out = asyncio.run(run_one(ws, case, source, a.mode))
                row = {"set": set_name, "config": config, "case": case.id, "type": case.type,
                       "lang": case.lang, "output": out, "scores": score_case(case, out)}  # fmt: skip
                rows_by.setdefault((set_name, config), []).append(row)
                print(
                    f"[{set_name}/{config}] {case.id} {case.type}: {out['status']} "
                    f"correct={row['scores']['correct']} {out.get('latency_s')}s "
                    f"calls={out.get('model_calls')} p_ans={out.get('answerable_p')} "
                    f"| {out.get('answer', '')[:90]!r}",
                    flush=True,
                )
                if dump:
                    dump.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                    dump.flush()
        ws.close()
    results = {}
    for (set_name, config), rows in rows_by.items():
        by_id = {c.id: c for _, _, _, cs in sets for c in cs}
        results[(set_name, config)] = summarise([by_id[r["case"]] for r in rows], rows)
    print("\n" + table(results))


if __name__ == "__main__":
    main()
