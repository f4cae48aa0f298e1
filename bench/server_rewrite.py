"""Follow-up rewriting: how often the cue detector skips the model, whether it misses real
follow-ups, and what a rewrite costs with the embedded model (`summarise` role).

    .venv/bin/python bench/server_rewrite.py [--model local:qwen2.5-coder-1.5b] [--calls 6]
"""

from __future__ import annotations

import argparse
import statistics
import time

from footnote.config import ModelSettings
from footnote.models import build_roles
from footnote.models.base import Message
from footnote.pipelines.chat.pipeline import _clean_rewrite, needs_rewrite
from footnote.prompts import render

# (question, needs the history to be understood)
LABELLED = [
    ("What recall did hybrid retrieval reach on QASPER?", False),
    ("How many annotated papers are in the corpus?", False),
    ("Which fusion method combines BM25 and dense rankings?", False),
    ("What is the accuracy of the baseline model on SciQ?", False),
    ("Who collected the ACL Anthology corpus?", False),
    ("How is the triplet loss defined in the method section?", False),
    ("What does Table 2 report for BM25?", False),
    ("Does the paper compare against ColBERT?", False),
    ("What is the learning rate used for fine-tuning the encoder?", False),
    ("BM25 的召回率是多少？", False),
    ("论文使用了哪个数据集？", False),
    ("How large is the test set of the benchmark?", False),
    ("What dataset did they use?", True),
    ("What recall did it reach?", True),
    ("And for Chinese?", True),
    ("What about recall?", True),
    ("Why?", True),
    ("How does that compare with BM25?", True),
    ("Is the second one faster?", True),
    ("What did the authors conclude about it?", True),
    ("And the baseline?", True),
    ("How many of those were annotated?", True),
    ("它的准确率是多少？", True),
    ("那这个方法呢？", True),
    ("Which one is better?", True),
    ("What about the test set?", True),
]

HISTORY = (
    "user: How does hybrid retrieval work in the retrieval study?\n"
    "assistant: It indexes paragraphs with BM25 and dense vectors and fuses the rankings with "
    "reciprocal rank fusion."
)


def detector() -> None:
    tp = sum(1 for q, y in LABELLED if y and needs_rewrite(q))
    fp = sum(1 for q, y in LABELLED if not y and needs_rewrite(q))
    fn = [q for q, y in LABELLED if y and not needs_rewrite(q)]
    standalone = sum(1 for _, y in LABELLED if not y)
    print(f"cue detector on {len(LABELLED)} labelled questions:")
    print(f"  follow-ups caught {tp}/{tp + len(fn)} (missed: {fn or 'none'})")
    print(f"  standalone questions sent to the model anyway: {fp}/{standalone} "
          f"-> model calls skipped on {standalone - fp}/{standalone} standalone turns")  # fmt: skip


def latency(url: str, calls: int) -> None:
    roles = build_roles(ModelSettings.model_validate({"summarise": {"url": url}}))
    model = roles.chat("summarise")
    t0 = time.perf_counter()
    model.complete([Message("user", "Say OK.")], max_tokens=4)
    print(f"model {url}: first call (load + 4 tokens) {time.perf_counter() - t0:.1f} s")
    times, outs = [], []
    for q, _ in [x for x in LABELLED if x[1]][:calls]:
        prompt = render("chat_rewrite", conversation=HISTORY, question=q)
        t0 = time.perf_counter()
        out = model.complete([Message("user", prompt)], max_tokens=96)
        times.append(time.perf_counter() - t0)
        outs.append((q, _clean_rewrite(out.text, q, HISTORY)))
    print(f"  rewrite latency: median {statistics.median(times):.2f} s, "
          f"max {max(times):.2f} s over {len(times)} calls (a skipped rewrite costs ~0 s)")  # fmt: skip
    for q, r in outs:
        print(f"    {q!r} -> {r!r}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--calls", type=int, default=6)
    ap.add_argument("--no-model", action="store_true")
    args = ap.parse_args()
    detector()
    if not args.no_model:
        latency(args.model, args.calls)


if __name__ == "__main__":
    main()
