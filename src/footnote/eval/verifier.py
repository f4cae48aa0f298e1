"""The verifier alone: does `check_citation` call a cited passage supporting when gold says so?

Data in SciFact format (`claims_*.jsonl` + `corpus.jsonl`): a claim, its cited document's
sentences, and SUPPORT / REFUTE (or CONTRADICT) / no-evidence labels. Gold "supported" is
SUPPORT; everything else is "not supported". Two verifiers are scored: the deterministic
checks alone, and the checks with the judge role (what the ask pipeline runs).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.errors import NotFound, UsageError
from footnote.types import Block
from footnote.verify import Evidence, EvidenceSet, Judge, Thresholds, check_citation

_MARKER = re.compile(r"\s*\[?<\|[a-z_]+\|>\]?")
CLAIM_SETS = {
    "citation-integrity": ("citation-integrity", "corpus.jsonl"),
    "scifact": ("scifact-claims", "corpus.jsonl"),
}


@dataclass(frozen=True)
class ClaimItem:
    """One claim with its cited passage and whether gold says the passage supports it."""

    id: str
    claim: str
    passage: str
    supported: bool
    label: str


def load_claims(claims: Path, corpus: Path) -> list[ClaimItem]:
    """Claims joined with their first cited document's sentences."""
    if not corpus.is_file():
        raise NotFound(
            f"corpus {corpus} not found (SciFact's corpus is not in the shared data; use --corpus)"
        )
    docs: dict[str, str] = {}
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            docs[str(d["doc_id"])] = " ".join(d["abstract"])
    items = []
    for line in claims.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        c = json.loads(line)
        cited = [str(d) for d in c.get("cited_doc_ids", [])] or list(c["evidence"])
        doc = next((d for d in cited if d in docs), None)
        if doc is None:
            continue
        labels = {e["label"] for e in c["evidence"].get(doc, [])}
        label = "SUPPORT" if "SUPPORT" in labels else (labels.pop() if labels else "NEI")
        claim = _MARKER.sub("", c["claim"]).strip()
        items.append(ClaimItem(str(c["id"]), claim, docs[doc], label == "SUPPORT", label))
    return items


def claim_files(name: str, data_dir: Path, split: str) -> tuple[Path, Path]:
    """`(claims, corpus)` for a named claim set."""
    if name not in CLAIM_SETS:
        raise UsageError(
            f"unknown claim set {name!r}; known: {', '.join(CLAIM_SETS)} (or a claims .jsonl)"
        )
    folder, corpus = CLAIM_SETS[name]
    return data_dir / folder / f"claims_{split}.jsonl", data_dir / folder / corpus


def _scores(gold: list[bool], pred: list[bool]) -> dict[str, float]:
    tp = sum(g and p for g, p in zip(gold, pred, strict=True))
    fp = sum(p and not g for g, p in zip(gold, pred, strict=True))
    fn = sum(g and not p for g, p in zip(gold, pred, strict=True))
    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold) if gold else 0.0
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {
        "accuracy": round(acc, 4),
        "precision": round(prec, 4),
        "recall": round(rec, 4),
        "f1": round(f1, 4),
    }


def auroc(gold: list[bool], score: list[float]) -> float | None:
    """Probability that a supported item scores above an unsupported one (ties count half)."""
    pos = [s for g, s in zip(gold, score, strict=True) if g]
    neg = [s for g, s in zip(gold, score, strict=True) if not g]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def evaluate_verifier(
    items: list[ClaimItem],
    judge: Judge | None,
    thresholds: Thresholds = Thresholds(),
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Accuracy / precision / recall / F1 (positive = supported) of both verifiers."""
    rows = []
    for i, item in enumerate(items):
        block = Block(f"claim-{item.id}", "claims", "paragraph", item.passage, 1)
        ev = EvidenceSet([Evidence(block.id, item.passage, block)])
        det = check_citation(item.claim, block.id, ev)
        row: dict[str, Any] = {
            "id": item.id,
            "label": item.label,
            "gold": item.supported,
            "deterministic": det.verdict,
        }
        if judge is not None:
            t0 = time.perf_counter()
            jc = check_citation(item.claim, block.id, ev, judge=judge, thresholds=thresholds)
            row.update(
                judge=jc.verdict, judge_p=jc.judge_p, judge_s=round(time.perf_counter() - t0, 3)
            )
        rows.append(row)
        if progress:
            progress(i + 1, len(items))
    gold = [r["gold"] for r in rows]
    out: dict[str, Any] = {
        "n": len(rows),
        "supported": sum(gold),
        "deterministic": _scores(gold, [r["deterministic"] == "supported" for r in rows]),
        "items": rows,
    }
    if judge is not None:
        out["judge"] = _scores(gold, [r["judge"] == "supported" for r in rows])
        out["judge"]["auroc"] = auroc(
            gold, [r["judge_p"] if r["judge_p"] is not None else 0.0 for r in rows]
        )
        times = sorted(r["judge_s"] for r in rows)
        out["judge"]["seconds_p50"] = times[len(times) // 2] if times else None
    return out
