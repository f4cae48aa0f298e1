"""Scoring one case's output and aggregating many.

A case output (what the runner stores) is a dict with at least `status`, `answer`,
`citations` (`[{id, page, text, sentence, verdict, fabricated, det_supported, judge_supported}]`),
`fabricated_trace`, `recited_trace`, `checked_citations`, `latency_s`, `tokens`, `model_calls`,
`support_score`. Matching uses `footnote.textnorm`, the verifier's own normalisation.

Rules that keep the figures honest: status `error` (a crash, a model error, a timeout) is an
error, counted on its own: never a refusal, never correct (not even on an unanswerable case),
and never dropped from a denominator. `fabricated_ids` counts what the *model* cited without
being shown it (from the trace); `fabricated_in_output` counts such ids that reached the
output (must be 0). Re-cited citations are counted apart.
"""

from __future__ import annotations

import re
import statistics
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from footnote.eval.cases import Case, GoldEvidence
from footnote.textnorm import contains, fuzzy_contains, normalise, quantities, same_quantity

REFUSALS = frozenset({"no_evidence", "weak_evidence", "refused"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


ERROR = "error"


def is_refusal(status: str) -> bool:
    """Whether an answer status is one of the two kinds of "I don't know" (or a refusal);
    an error is not."""
    return status in REFUSALS


# -- answers ---------------------------------------------------------------------------------
def _matches_one(answer: str, a: str | float) -> bool:
    if isinstance(a, str):
        if contains(answer, a):
            return True
        wanted = quantities(a) if re.fullmatch(r"[\s\d.,%+-]*\S*", a.strip()) else []
    else:
        wanted = quantities(repr(a))
    found = quantities(answer) if wanted else []
    return any(same_quantity(w, q) or same_quantity(q, w) for w in wanted for q in found)


def answer_matches(
    answer: str,
    accept: Iterable[str | float],
    accept_all: Iterable[str] = (),
    accept_min: int = 1,
) -> bool:
    """The answer contains every `accept_all` string and at least `accept_min` of `accept`
    (strings normalised; numbers equal in value and kind)."""
    if not all(_matches_one(answer, a) for a in accept_all):
        return False
    options = list(accept)
    if not options:
        return True
    return sum(_matches_one(answer, a) for a in options) >= min(accept_min, len(options))


def _qasper_tokens(text: str) -> list[str]:
    text = _ARTICLES.sub(" ", normalise(text).translate(_PUNCT))
    return text.split()


def token_f1(prediction: str, gold: str) -> float:
    """QASPER/SQuAD token F1 (lower-case, punctuation and articles removed)."""
    p, g = _qasper_tokens(prediction), _qasper_tokens(gold)
    if not p or not g:
        return float(p == g)
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def answer_f1(case: Case, answer: str, refused: bool) -> float:
    """Token F1 against the best gold answer; a refusal scores 1 on a refusal case, else 0.

    For a yes/no gold the answer's first word decides (1 or 0), as in QASPER.
    """
    if case.unanswerable or refused:
        return float(case.unanswerable and refused)
    golds = [g for g in (case.answer, *case.answers, *case.accept) if isinstance(g, str) and g]
    best = 0.0
    for gold in golds:
        if normalise(gold) in ("yes", "no"):
            first = _qasper_tokens(answer)[:1]
            best = max(best, float(first == [normalise(gold)]))
        else:
            best = max(best, token_f1(answer, gold))
    return best


# -- evidence --------------------------------------------------------------------------------
def evidence_found(gold: GoldEvidence, block: dict[str, Any]) -> str | None:
    """`strict` or `fuzzy` when a cited block (right page) holds the gold quote, else None.

    A block that is a long piece of a longer gold paragraph (blocks split long paragraphs)
    also counts.
    """
    if gold.page is not None and block.get("page") not in (None, gold.page):
        return None
    text = str(block.get("text", ""))
    piece = len(normalise(text)) >= 80
    if contains(text, gold.quote) or (piece and contains(gold.quote, text)):
        return "strict"
    if fuzzy_contains(text, gold.quote) or (piece and fuzzy_contains(gold.quote, text)):
        return "fuzzy"
    return None


def evidence_scores(case: Case, cited: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Evidence recall (strict and with fuzzy fallback), precision and F1 of the cited blocks."""
    if not case.evidence:
        return {
            "evidence_recall": None,
            "evidence_recall_strict": None,
            "evidence_precision": None,
            "evidence_f1": None,
        }
    strict = fuzzy = 0
    for g in case.evidence:
        kinds = {evidence_found(g, b) for b in cited}
        strict += "strict" in kinds
        fuzzy += bool(kinds - {None})
    useful = sum(1 for b in cited if any(evidence_found(g, b) for g in case.evidence))
    recall = fuzzy / len(case.evidence)
    precision = useful / len(cited) if cited else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "evidence_recall": recall,
        "evidence_recall_strict": strict / len(case.evidence),
        "evidence_precision": precision if cited else None,
        "evidence_f1": f1,
    }


# -- one case ----------------------------------------------------------------------------------
def _share(items: Sequence[bool | None]) -> float | None:
    known = [x for x in items if x is not None]
    return sum(known) / len(known) if known else None


def score_case(case: Case, out: dict[str, Any]) -> dict[str, Any]:
    """Every per-case metric (None where it does not apply)."""
    refused = is_refusal(out["status"])
    error = out["status"] == ERROR
    answer = out.get("answer", "")
    cites: list[dict[str, Any]] = out.get("citations", [])
    blocks = list({c["id"]: c for c in cites}.values())
    sentences: dict[str, list[dict[str, Any]]] = {}
    for c in cites:
        sentences.setdefault(c["sentence"], []).append(c)
    factual = [s for s in out.get("sentences", []) if s.get("factual", True)]
    scores: dict[str, Any] = {
        "refused": refused,
        "error": error,
        "answer_f1": 0.0 if error else answer_f1(case, answer, refused),
        "answer_match": None
        if case.unanswerable or not (case.accept or case.accept_all)
        else (
            not refused
            and not error
            and answer_matches(answer, case.accept, case.accept_all, case.accept_min)
        ),
        "citations": len(cites),
        "citation_precision": _share([c.get("det_supported") for c in cites]),
        "citation_precision_judge": _share([c.get("judge_supported") for c in cites]),
        "citation_recall": _share(
            [any(c.get("det_supported") for c in sentences.get(s["text"], [])) for s in factual]
        ),
        "citation_recall_judge": None
        if any(c.get("judge_supported") is None for c in cites)
        else _share(
            [any(c["judge_supported"] for c in sentences.get(s["text"], [])) for s in factual]
        ),
        "pipeline_supported": _share([c.get("verdict") == "supported" for c in cites]),
        "fabricated_output": sum(1 for c in cites if c.get("fabricated")),
        "fabricated_trace": int(out.get("fabricated_trace", 0)),
        "recited_trace": int(out.get("recited_trace", 0)),
        "checked_citations": int(out.get("checked_citations", 0)),
        "latency_s": float(out.get("latency_s", 0.0)),
        "tokens": int(out.get("tokens", 0)),
        "model_calls": int(out.get("model_calls", 0)),
        "support_score": float(out.get("support_score", 0.0)),
    }
    scores.update(evidence_scores(case, blocks) if not refused else _refused_evidence(case))
    scores["correct"] = _correct(case, scores)
    return scores


def _refused_evidence(case: Case) -> dict[str, float | None]:
    if not case.evidence:
        return evidence_scores(case, [])
    return {
        "evidence_recall": 0.0,
        "evidence_recall_strict": 0.0,
        "evidence_precision": None,
        "evidence_f1": 0.0,
    }


def _correct(case: Case, s: dict[str, Any]) -> bool:
    """Correct = right refusal, or an answer that matches an accept string or has F1 ≥ 0.5;
    with `accept_all` strings, only a match (all of them) counts. An error is never correct."""
    if s.get("error"):
        return False
    if case.unanswerable or s["refused"]:
        return bool(case.unanswerable and s["refused"])
    if case.accept_all:
        return bool(s["answer_match"])
    return bool(s["answer_match"]) or s["answer_f1"] >= 0.5


# -- many cases --------------------------------------------------------------------------------
def _mean(values: Iterable[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if q < 1 else ordered[-1]


def aggregate(cases: Sequence[Case], scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Summary metrics over cases (rates are None when nothing applies)."""
    n = len(scores)
    refused = [s["refused"] for s in scores]
    unans = [c.unanswerable for c in cases]
    n_ref, n_un = sum(refused), sum(unans)
    right_ref = sum(r and u for r, u in zip(refused, unans, strict=True))
    false_ref = sum(r and not u for r, u in zip(refused, unans, strict=True))
    checked = sum(s["checked_citations"] for s in scores)
    cites = sum(s["citations"] for s in scores)
    errors = sum(bool(s.get("error")) for s in scores)
    lat = [s["latency_s"] for s in scores]
    return {
        "n": n,
        "answer_match": _mean(s["answer_match"] for s in scores),
        "answer_f1": _mean(s["answer_f1"] for s in scores),
        "answer_f1_answerable": _mean(
            s["answer_f1"] for s, u in zip(scores, unans, strict=True) if not u
        ),
        "correct": _mean(s["correct"] for s in scores),
        "evidence_recall": _mean(s["evidence_recall"] for s in scores),
        "evidence_recall_strict": _mean(s["evidence_recall_strict"] for s in scores),
        "evidence_precision": _mean(s["evidence_precision"] for s in scores),
        "evidence_f1": _mean(s["evidence_f1"] for s in scores),
        "citation_precision": _mean(s["citation_precision"] for s in scores),
        "citation_recall": _mean(s["citation_recall"] for s in scores),
        "citation_precision_judge": _mean(s["citation_precision_judge"] for s in scores),
        "citation_recall_judge": _mean(s["citation_recall_judge"] for s in scores),
        "pipeline_supported": _mean(s["pipeline_supported"] for s in scores),
        # what the model cited without being shown it, per citation checked (from the trace)
        "fabricated_ids": round(sum(s["fabricated_trace"] for s in scores) / checked, 4)
        if checked
        else 0.0,
        "fabricated_ids_count": sum(s["fabricated_trace"] for s in scores),
        # such ids that reached the output: must be 0
        "fabricated_in_output": sum(s["fabricated_output"] for s in scores),
        "recited": sum(s.get("recited_trace", 0) for s in scores),
        "recited_rate": round(sum(s.get("recited_trace", 0) for s in scores) / checked, 4)
        if checked
        else 0.0,
        "output_citations": cites,
        "errors": errors,
        "error_rate": round(errors / n, 4) if n else None,
        "unanswerable": n_un,
        "refusals": n_ref,
        "refusal_precision": round(right_ref / n_ref, 4) if n_ref else None,
        "refusal_recall": round(right_ref / n_un, 4) if n_un else None,
        "false_refusal_rate": round(false_ref / (n - n_un), 4) if n - n_un else None,
        "latency_p50_s": _pct(lat, 0.5),
        "latency_p90_s": _pct(lat, 0.9),
        "tokens_per_case": _mean(s["tokens"] for s in scores),
        "model_calls_per_case": _mean(s["model_calls"] for s in scores),
    }


def calibration(scores: Sequence[dict[str, Any]], buckets: int = 5) -> list[dict[str, Any]]:
    """Accuracy of answered cases by support-score bucket (equal width over [0, 1])."""
    rows = []
    for b in range(buckets):
        lo, hi = b / buckets, (b + 1) / buckets
        inside = [
            s
            for s in scores
            if not s["refused"]
            and lo <= s["support_score"] < hi + (1e-9 if b == buckets - 1 else 0)
        ]
        rows.append(
            {
                "lo": lo,
                "hi": hi,
                "n": len(inside),
                "accuracy": _mean(s["correct"] for s in inside),
                "mean_score": _mean(s["support_score"] for s in inside),
            }
        )
    return rows


def grouped(
    cases: Sequence[Case], scores: Sequence[dict[str, Any]], key: str
) -> dict[str, dict[str, Any]]:
    """`aggregate` per value of a case attribute (`type` or `lang`)."""
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        groups.setdefault(str(getattr(c, key)), []).append(i)
    return {
        g: aggregate([cases[i] for i in idx], [scores[i] for i in idx])
        for g, idx in sorted(groups.items())
    }
