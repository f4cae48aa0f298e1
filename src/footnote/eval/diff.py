"""Compare two stored runs case by case: which cases got better, which worse.

Only cases present in both runs are compared, and each metric's means are taken over the same
cases on both sides (a case where either run lacks the metric is left out of both means and
counted in `n`), so a delta never compares different questions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from footnote.eval.runs import EvalRun


@dataclass(frozen=True)
class CaseDiff:
    """One case present in both runs."""

    id: str
    question: str
    change: str
    """better | worse | same"""
    a: dict[str, Any]
    b: dict[str, Any]


def _key(scores: dict[str, Any]) -> tuple[float, float, float]:
    """What "better" means, in order: correct, answer F1, evidence recall."""
    return (
        float(bool(scores.get("correct"))),
        round(float(scores.get("answer_f1") or 0.0), 3),
        round(float(scores.get("evidence_recall") or 0.0), 3),
    )


def diff_runs(a: EvalRun, b: EvalRun) -> dict[str, Any]:
    """Per-case changes from run A to run B, plus metric deltas over the shared cases."""
    by_a = {r["case"]["id"]: r for r in a.records}
    rows: list[CaseDiff] = []
    for r in b.records:
        old = by_a.get(r["case"]["id"])
        if old is None:
            continue
        ka, kb = _key(old["scores"]), _key(r["scores"])
        change = "better" if kb > ka else "worse" if kb < ka else "same"
        rows.append(
            CaseDiff(r["case"]["id"], r["case"]["question"], change, old["scores"], r["scores"])
        )
    deltas: dict[str, dict[str, float | int | None]] = {}
    for metric in (
        "answer_f1",
        "correct",
        "evidence_recall",
        "citation_precision",
        "error",
        "latency_s",
        "tokens",
    ):
        pairs = [
            (float(d.a[metric]), float(d.b[metric]))
            for d in rows
            if d.a.get(metric) is not None and d.b.get(metric) is not None
        ]
        ma = sum(a for a, _ in pairs) / len(pairs) if pairs else None
        mb = sum(b for _, b in pairs) / len(pairs) if pairs else None
        deltas[metric] = {
            "a": ma,
            "b": mb,
            "delta": None if ma is None or mb is None else mb - ma,
            "n": len(pairs),
        }
    return {
        "a": a.id,
        "b": b.id,
        "shared": len(rows),
        "only_a": sorted(set(by_a) - {d.id for d in rows}),
        "only_b": sorted({r["case"]["id"] for r in b.records} - set(by_a)),
        "better": sum(d.change == "better" for d in rows),
        "worse": sum(d.change == "worse" for d in rows),
        "same": sum(d.change == "same" for d in rows),
        "metrics": deltas,
        "cases": [
            {
                "id": d.id,
                "question": d.question,
                "change": d.change,
                "a": {
                    k: d.a.get(k) for k in ("correct", "answer_f1", "evidence_recall", "refused")
                },
                "b": {
                    k: d.b.get(k) for k in ("correct", "answer_f1", "evidence_recall", "refused")
                },
            }
            for d in rows
        ],
    }
