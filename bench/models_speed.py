"""Model-layer speed and judge accuracy, against baselines measured in the same run.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/models_speed.py [--pairs 100] [--skip-judge]

Prints: generation and prompt tok/s of the local GGUF models; embeddings/s (English and
Chinese) for e5 and wordllama; judge latency per pair and accuracy on Citation-Integrity
pairs (SUPPORT vs REFUTE/NEI: citing sentence + cited rationale sentences) next to a
bag-of-words overlap baseline with its best threshold chosen on the same pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from footnote.models import E5Embedder, LlamaCppChatModel, Message, WordLlamaEmbedder
from footnote.models.judge import judge_support
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "citation-integrity"
EN = (
    "The committee reviewed the annual budget and approved funding for three new research "
    "projects on renewable energy storage, grid stability and long-term battery degradation, "
    "with a final report due to the ministry before the end of the next fiscal year."
)
ZH = (
    "委员会审议了年度预算，批准为三个可再生能源储存新研究项目提供资金，涉及电网稳定性和电池长期衰减，"
    "最终报告须在下一财政年度结束前提交给主管部门。研究团队还将公开全部数据和代码，以便同行复核。"
)
rows: list[tuple[str, str, str]] = []


def row(what: str, value: str, note: str = "") -> None:
    rows.append((what, value, note))
    print(f"{what:<46} {value:>14}  {note}", flush=True)


def bench_llm(name: str) -> LlamaCppChatModel:
    m = LlamaCppChatModel(name, n_ctx=4096)
    t = time.perf_counter()
    m.load()
    row(f"{name} load", f"{time.perf_counter() - t:.2f} s")
    prompt = [Message("user", "Summarise in one paragraph:\n" + EN * 6)]
    m.complete([Message("user", "hi")], max_tokens=2)  # warm-up
    t = time.perf_counter()
    out = m.complete(prompt, max_tokens=1)
    pt = time.perf_counter() - t
    row(f"{name} prompt", f"{out.tokens_in / pt:.1f} tok/s", f"{out.tokens_in} tokens")
    t = time.perf_counter()
    out = m.complete(
        [Message("user", "Write a long story about a lighthouse keeper.")], max_tokens=128
    )
    gt = time.perf_counter() - t
    row(f"{name} generation", f"{out.tokens_out / gt:.1f} tok/s", f"{out.tokens_out} tokens")
    return m


def bench_embed() -> None:
    en, zh = [f"{i}. {EN}" for i in range(128)], [f"{i}。{ZH}" for i in range(64)]
    for emb in (E5Embedder(), WordLlamaEmbedder()):
        emb.embed_passages(["warm up"])
        for lang, texts in (("en", en), ("zh", zh)):
            t = time.perf_counter()
            emb.embed_passages(texts)
            row(f"{emb.name} passages {lang}", f"{len(texts) / (time.perf_counter() - t):.1f} /s")


def load_pairs(n: int) -> list[tuple[str, str, bool]]:
    corpus = {}
    for line in (DATA / "corpus.jsonl").open(encoding="utf-8"):
        d = json.loads(line)
        corpus[d["doc_id"]] = d["abstract"]
    pos: list[tuple[str, str, bool]] = []
    neg: list[tuple[str, str, bool]] = []
    for fname in ("claims_dev.jsonl", "claims_test.jsonl"):
        for line in (DATA / fname).open(encoding="utf-8"):
            d = json.loads(line)
            claim = re.sub(r"\[?<\|[a-z_]+\|>\]?", "", d["claim"]).strip()
            if d["evidence"]:
                for doc, evs in d["evidence"].items():
                    for ev in evs:
                        sents = corpus.get(int(doc), [])
                        passage = " ".join(sents[i] for i in ev["sentences"] if i < len(sents))
                        if passage:
                            (pos if ev["label"] == "SUPPORT" else neg).append(
                                (claim, passage, ev["label"] == "SUPPORT")
                            )
            else:
                for doc in d.get("cited_doc_ids", [])[:1]:
                    sents = corpus.get(int(doc), [])
                    if sents:
                        neg.append((claim, " ".join(sents[:2]), False))
    rng = random.Random(0)
    rng.shuffle(pos)
    rng.shuffle(neg)
    pairs = pos[: n // 2] + neg[: n - n // 2]
    rng.shuffle(pairs)
    return pairs


def overlap(claim: str, passage: str) -> float:
    words = lambda s: {w for w in re.findall(r"[a-z0-9]+", s.lower()) if len(w) > 2}  # noqa: E731
    c = words(claim)
    return len(c & words(passage)) / max(1, len(c))


def best_threshold_acc(scores: list[float], labels: list[bool]) -> tuple[float, float]:
    best = (0.0, 0.0)
    for th in [*sorted(set(scores)), 1.1]:
        acc = sum((s >= th) == y for s, y in zip(scores, labels, strict=True)) / len(labels)
        best = max(best, (acc, th))
    return best


def bench_judge(model: LlamaCppChatModel, n: int) -> None:
    pairs = load_pairs(n)
    labels = [y for _, _, y in pairs]
    role = RoleModel("judge", model, ledger=Ledger(), external=False)
    scores, t = [], time.perf_counter()
    for i, (claim, passage, _) in enumerate(pairs, 1):
        scores.append(judge_support(role, claim, passage))
        if i % 10 == 0:
            print(
                f"  judged {i}/{len(pairs)} ({(time.perf_counter() - t) / i:.1f} s/pair)",
                flush=True,
            )
    dt = (time.perf_counter() - t) / len(pairs)
    acc05 = sum((s >= 0.5) == y for s, y in zip(scores, labels, strict=True)) / len(pairs)
    acc_best, th = best_threshold_acc(scores, labels)
    base = [overlap(c, p) for c, p, _ in pairs]
    b_acc, b_th = best_threshold_acc(base, labels)
    pos = sum(labels)
    row("judge pairs", f"{len(pairs)}", f"{pos} SUPPORT / {len(pairs) - pos} REFUTE+NEI")
    row(f"judge {model.name} latency", f"{dt:.2f} s/pair")
    row(f"judge {model.name} accuracy @0.5", f"{acc05:.2%}")
    row(f"judge {model.name} accuracy @best", f"{acc_best:.2%}", f"threshold {th:.3f} (oracle)")
    row("bag-of-words overlap accuracy @best", f"{b_acc:.2%}", f"threshold {b_th:.3f} (oracle)")
    row("majority class accuracy", f"{max(pos, len(pairs) - pos) / len(pairs):.2%}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--skip-judge", action="store_true")
    ap.add_argument("--judge-model", default="qwen2.5-coder-1.5b")
    args = ap.parse_args()
    print(f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')} cores={os.cpu_count()}")
    models = {n: bench_llm(n) for n in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")}
    bench_embed()
    if not args.skip_judge:
        bench_judge(models[args.judge_model], args.pairs)
    print("\n| measure | value | note |\n|---|---|---|")
    for what, value, note in rows:
        print(f"| {what} | {value} | {note} |")


if __name__ == "__main__":
    main()
