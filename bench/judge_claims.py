"""Does the judge separate right answers from wrong ones better with another claim or passage?

Input: `bench/ask_quality.py --dump` files and the workspace their runs used. Every judged
first-round sentence of every case is one item, labelled by the evaluator's rules (the sentence
alone, scored as the case's answer by `eval.metrics.score_case`; any answer to an unanswerable
question is wrong). Each item is judged again, in this process, by the bound `judge` role in
three forms, so all three share one run:

- `today`: the claim and passage the gate builds (a fragment or a bare yes/no is judged as the
  question followed by the answer; the passage is the cited evidence's text);
- `statement`: such a claim written as a statement ("The answer to the question "…" is: …");
- `quote passage`: today's claim against only the passage sentences holding the draft's quote
  (the whole passage when the quote is not found in it).

Printed per form: AUC (the chance a right item scores above a wrong one), and right / wrong
items at or above 0.5 and 0.6. Usage:

    python bench/judge_claims.py DUMP.jsonl [DUMP.jsonl ...] [--workspace DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.loaders import default_data_dir, load_dataset
from footnote.eval.metrics import score_case
from footnote.models.judge import judge_support
from footnote.pipelines.ask.retrieve import _text
from footnote.textnorm import contains
from footnote.types import parse_evidence_id
from footnote.verify.evidence import Evidence, EvidenceSet


def _spans(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (k, n, json.loads(d))
        for k, n, d in conn.execute(
            "SELECT kind, name, data FROM spans WHERE run_id = ? ORDER BY seq", (run_id,)
        )
    ]


def _quotes(output: str) -> dict[str, str]:
    """answer text → quote, from a compose call's JSON (one answer or `parts`)."""
    try:
        data = json.loads(output)
    except ValueError:
        return {}
    parts = data.get("parts", [data]) if isinstance(data, dict) else []
    return {str(p.get("answer", "")).strip(): str(p.get("quote", "")) for p in parts
            if isinstance(p, dict)}  # fmt: skip


def items(
    conn: sqlite3.Connection, rows: list[dict[str, Any]], cases: dict[str, Any], ws: Any
) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        spans = _spans(conn, r["output"].get("run_id", ""))
        composes = [i for i, (k, n, _) in enumerate(spans) if k == "model" and n == "compose"]
        if not composes:
            continue
        end = composes[1] if len(composes) > 1 else len(spans)
        first = spans[composes[0] : end]
        quotes = _quotes(str(first[0][2].get("output", "")))
        claim = ""
        for kind, name, data in first:
            if kind == "model" and name == "judge":
                claim = str(data.get("claim", ""))
            if kind != "check" or data.get("judge_p") is None or not claim:
                continue
            block_id, _cell = parse_evidence_id(data["evidence_id"])
            block = ws.store.get_block(block_id)
            if block is None:
                continue
            ev = EvidenceSet([Evidence(block.id, _text(block), block)]).resolve(data["evidence_id"])
            if ev is None:
                continue
            case = cases[r["case"]]
            sentence = str(data["sentence"])
            right = False if case.unanswerable else bool(score_case(case, {
                "status": "answered", "answer": sentence, "citations": [],
                "sentences": [{"text": sentence, "factual": True}]})["correct"])  # fmt: skip
            out.append({"case": r["case"], "config": r["config"], "question": case.question,
                        "sentence": sentence, "claim": claim,
                        "passage": (ev.context + "\n" + ev.text).strip(),
                        "quote": quotes.get(sentence, ""), "right": right})  # fmt: skip
            claim = ""
    return out


def statement(item: dict[str, Any]) -> str:
    if item["claim"] == item["sentence"]:
        return item["claim"]
    return f'The answer to the question "{item["question"].strip()}" is: {item["sentence"].strip()}'


def quote_passage(item: dict[str, Any]) -> str:
    quote, passage = item["quote"].strip(), item["passage"]
    if not quote or not contains(passage, quote):
        return passage
    sentences = re.split(r"(?<=[.!?。！？])\s+", passage)
    held = [s for s in sentences if contains(s, quote) or contains(quote, s.strip())]
    return " ".join(held) if held else passage


def auc(right: list[float], wrong: list[float]) -> float | None:
    if not right or not wrong:
        return None
    wins = sum(1.0 if r > w else 0.5 if r == w else 0.0 for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dumps", nargs="+")
    p.add_argument("--workspace", default=str(OUT / "ask_retrieval" / "dev"))
    p.add_argument("--limit", type=int, default=0)
    a = p.parse_args()
    from footnote.workspace import Workspace

    ws = Workspace.open(Path(a.workspace))
    ds = load_dataset(
        "footnote-dev", data_dir=default_data_dir(), cache_dir=Path(a.workspace) / "cache"
    )
    cases = {c.id: c for c in ds.cases}
    rows = [
        json.loads(line)
        for d in a.dumps
        for line in Path(d).read_text().splitlines()
        if line.strip()
    ]
    rows = [r for r in rows if r["set"] == "footnote-dev" and r["output"]["status"] != "error"]
    conn = sqlite3.connect(Path(a.workspace) / "footnote.db")
    todo = items(conn, rows, cases, ws)[: a.limit or None]
    judge = ws.models.chat("judge")
    print(f"{len(todo)} judged first-round sentences from {len(rows)} cases "
          f"({sum(i['right'] for i in todo)} right); judge = {judge.name}")  # fmt: skip
    forms = {
        "today": lambda i: (i["claim"], i["passage"]),
        "statement": lambda i: (statement(i), i["passage"]),
        "quote passage": lambda i: (i["claim"], quote_passage(i)),
    }
    scores: dict[str, list[float]] = {f: [] for f in forms}
    seconds: dict[str, float] = {f: 0.0 for f in forms}
    for item in todo:
        for form, build in forms.items():
            claim, passage = build(item)
            t0 = time.perf_counter()
            scores[form].append(judge_support(judge, claim, passage, labels=()))
            seconds[form] += time.perf_counter() - t0
    print("| form | AUC | right ≥ 0.5 | wrong ≥ 0.5 | right ≥ 0.6 | wrong ≥ 0.6 | s / call |")
    print("|---|---|---|---|---|---|---|")
    for form, ps in scores.items():
        right = [s for s, i in zip(ps, todo, strict=True) if i["right"]]
        wrong = [s for s, i in zip(ps, todo, strict=True) if not i["right"]]
        area = auc(right, wrong)
        cells = [f"{area:.2f}" if area is not None else "–"]
        for t in (0.5, 0.6):
            cells += [
                f"{sum(s >= t for s in right)}/{len(right)}",
                f"{sum(s >= t for s in wrong)}/{len(wrong)}",
            ]
        print(f"| {form} | " + " | ".join(cells) + f" | {seconds[form] / max(1, len(todo)):.1f} |")
    ws.close()


if __name__ == "__main__":
    main()
