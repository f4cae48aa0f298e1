"""Time to what a user can read (issue #34 item 3): the evidence board and the first checked
sentence against the full answer, 20 questions on the bundled example papers, embedded model.

Each question runs once through `Workspace.ask` (the defaults: `auto` mode, which is `cite` for the
embedded Qwen2.5-Coder-1.5B, with the judge), and the client side times, from the call:

- `evidence_s`: the `evidence` event (the passages shown to the composer, the board as found);
- `first_s`: the first `sentence` event (a checked sentence, final);
- `full_s`: the `final` event (the whole answer).

"Before" is the same run read as the pipeline before this change sent it: then the board and the
first sentence (`answer_delta`) were emitted only after `AnswerBuilder.build`, in the same step as
`final`, with no model call between — so a sentence reached the client at `full_s`, less what the
streaming itself adds (`release_s`: the time spent deciding which sentences are final, measured
here by timing `RoundRelease.after`). before_first = full_s - release_s; the checks and model calls
are the same ones in the same order (a draft is checked sentence by sentence either way).

p50 over the questions that got a checked sentence (refusals show none, before or after); the
board's p50 over all. The model is loaded (one short call per role) before the first question is
timed. Each question's row is printed as it finishes. Results: bench/out/ask_stream/results.json.

Usage: python bench/ask_stream.py [--limit N] [--workspace DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.examples import PAPERS_DIR
from footnote.models.base import Message
from footnote.pipelines.ask import stream as release_module
from footnote.workspace import Workspace

QUESTIONS = (
    # interleaved (demo, several parts, Chinese, one fact), so a run cut short samples each kind
    "How many nodes does the Semantic Scholar literature graph have?",
    "How many nodes does the literature graph have, and what do the nodes represent?",
    "逐条核查把引用准确率提高到了多少？",
    "How many document-level tasks does SCIDOCS consist of?",
    "What is SCIDOCS, and how many tasks does it contain?",
    "直接生成的引用准确率是多少？",
    "What loss function is SPECTER trained with?",
    "What citation accuracy did direct generation reach, and what did per-sentence checking reach?",
    "核查流程分为哪两步？",
    "Which pretrained language model is SPECTER initialized from?",
    "What does SPECTER pretrain on, and does it need fine-tuning for downstream tasks?",
    "伪造编号率是多少？每个问题多花多少秒？",
    "What signal of document-level relatedness is SPECTER pretrained on?",
    "How much did it cost to build the literature graph, in US dollars?",
    "生成并逐条核查的平均耗时是多少秒？",
    "Which NLP tasks is literature graph construction reduced to?",
    "Which hospital provided the patient records used in the experiments?",
    "证据块有哪些类型？",
    "Does SPECTER need task-specific fine-tuning for downstream applications?",
    "Which website uses the methods described in the literature graph paper?",
)


def p50(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


async def one(ws: Workspace, question: str) -> dict[str, Any]:
    """One question, timed on the client side of the event stream."""
    row: dict[str, Any] = {"question": question}
    t0 = time.perf_counter()
    async for event in ws.ask(question):
        now = round(time.perf_counter() - t0, 3)
        if event.type == "evidence":
            row.setdefault("evidence_s", now)
        elif event.type == "sentence":
            row.setdefault("first_s", now)
            row["sentences_streamed"] = row.get("sentences_streamed", 0) + 1
        elif event.type == "final":
            row["full_s"] = now
            answer = event.answer  # type: ignore[union-attr]
            row["status"] = answer.status
            row["sentences"] = len(answer.sentences)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=len(QUESTIONS))
    parser.add_argument("--workspace", type=Path, default=OUT / "ask_stream" / "ws")
    args = parser.parse_args()

    spent = {"s": 0.0}
    real_after = release_module.RoundRelease.after

    def timed_after(self: Any, checks: Any) -> Any:
        t = time.perf_counter()
        try:
            return real_after(self, checks)
        finally:
            spent["s"] += time.perf_counter() - t

    release_module.RoundRelease.after = timed_after  # type: ignore[method-assign]

    args.workspace.mkdir(parents=True, exist_ok=True)
    ws = Workspace.open(args.workspace)
    report = ws.ingest([PAPERS_DIR])
    print(f"papers: {[r.outcome for r in report.results]}", flush=True)
    warm = time.perf_counter()
    for role in ("compose", "judge"):  # load the model(s) before any question is timed
        if ws.models.is_bound(role):
            ws.models.chat(role).complete([Message("user", "Say OK.")], max_tokens=2, labels=())
    print(f"models loaded in {time.perf_counter() - warm:.1f} s (not counted)", flush=True)
    rows = []
    for question in QUESTIONS[: args.limit]:
        spent["s"] = 0.0
        row = asyncio.run(one(ws, question))
        row["release_s"] = round(spent["s"], 4)
        row["before_first_s"] = (
            round(row["full_s"] - row["release_s"], 3) if "first_s" in row else None
        )
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    ws.close()

    shown = [r for r in rows if "first_s" in r]
    summary = {
        "questions": len(rows),
        "with_a_checked_sentence": len(shown),
        "p50_evidence_s": p50([r["evidence_s"] for r in rows if "evidence_s" in r]),
        "p50_first_sentence_s_after": p50([r["first_s"] for r in shown]),
        "p50_first_sentence_s_before": p50([r["before_first_s"] for r in shown]),
        "p50_full_answer_s": p50([r["full_s"] for r in shown]),
        "p50_full_answer_s_all": p50([r["full_s"] for r in rows]),
        "p50_board_s_before_all": p50([r["full_s"] - r["release_s"] for r in rows]),
        "max_release_s": max((r["release_s"] for r in rows), default=0.0),
        "first_before_full": sum(1 for r in shown if r["first_s"] < r["full_s"] - 0.5),
    }
    out = OUT / "ask_stream"
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1), "utf-8"
    )
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
