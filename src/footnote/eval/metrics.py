"""Scoring one case's output and aggregating many.

A case output (what the runner stores) is a dict with at least `status`, `answer`,
`citations` (`[{id, page, text, sentence, verdict, fabricated, det_supported, judge_supported}]`),
`fabricated_trace`, `recited_trace`, `checked_citations`, `latency_s`, `tokens`, `model_calls`,
`support_score`. Matching uses `footnote.textnorm`, the verifier's own normalisation.

Rules that keep the figures honest: status `error` (a crash, a model error, a timeout) is an
error, counted on its own: never a refusal, never correct (not even on an unanswerable case);
it counts as a failure in every accuracy-type rate and is excluded, and said to be, from the
rates about the pipeline's choices (false refusals, precision). A refusal that still shows an
answer sentence is *hedged*: never a clean refusal, so never correct on an unanswerable case.
Every rate of `aggregate` carries k, n, its 95 % Wilson interval and what its denominator is
(`rates`). `fabricated_ids` counts what the *model* cited without being shown it (from the
trace); `fabricated_in_output` counts such ids that reached the output (must be 0). Re-cited
citations are counted apart.
"""

from __future__ import annotations

import math
import re
import statistics
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from footnote.eval.cases import Case, GoldEvidence
from footnote.textnorm import (
    contains,
    fuzzy_contains,
    is_cjk,
    normalise,
    quantities,
    same_quantity,
)

REFUSALS = frozenset({"no_evidence", "weak_evidence", "refused"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


ERROR = "error"


def is_refusal(status: str) -> bool:
    """Whether an answer status is one of the two kinds of "I don't know" (or a refusal);
    an error is not."""
    return status in REFUSALS


# -- answers ---------------------------------------------------------------------------------
_NUMERALS = frozenset("0123456789零〇一二两三四五六七八九十百千万亿")
_IN_NUMBER = re.compile(r"\d[.,]$")
_NUMBER_GOES_ON = re.compile(r"[.,]\d")


def _word(ch: str) -> bool:
    """A letter or digit of a spaced script (CJK characters are their own tokens)."""
    return ch.isalnum() and not is_cjk(ch)


def _edge_ok(inner: str, outer: str, around: str) -> bool:
    """Whether a match ending in `inner` may sit next to `outer`: not inside a longer word or
    number (`around` is the text beyond `outer`, for "1.21" and "2,100")."""
    if not outer:
        return True
    if inner in _NUMERALS and (outer in _NUMERALS or (outer in ".," and around[:1].isdigit())):
        return False
    return not (_word(inner) and _word(outer))


def contains_token(haystack: str, needle: str) -> bool:
    """`needle` occurs in `haystack` (both normalised) as whole tokens: not inside a longer word
    or number ("six" is not in "sixteen", "21%" not in "121%", "120万" not in "1120万"). A CJK
    needle may sit inside a CJK run (Chinese has no spaces), but its numbers may not grow."""
    h, n = normalise(haystack), normalise(needle)
    if not n:
        return False
    i = h.find(n)
    while i >= 0:
        j = i + len(n)
        before, after = h[i - 1 : i], h[j : j + 1]
        if _edge_ok(n[0], before, h[max(0, i - 2) : i - 1]) and _edge_ok(
            n[-1], after, h[j + 1 : j + 2]
        ):
            return True
        i = h.find(n, i + 1)
    return False


def _matches_one(answer: str, a: str | float) -> bool:
    if isinstance(a, str):
        if contains_token(answer, a):
            return True
        wanted = quantities(a) if re.fullmatch(r"[\s\d.,%+-]*\S*", a.strip()) else []
    else:
        wanted = quantities(repr(a))
    found = quantities(answer) if wanted else []
    # the answer's number must state the accepted one (a rounded answer may stand for a more
    # precise gold value, never the reverse: "21" does not accept "21.5")
    return any(same_quantity(q, w) for w in wanted for q in found)


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


def shown_sentences(out: dict[str, Any]) -> int:
    """How many answer sentences an output shows (factual ones: a refusal's own note is not
    an answer); an output stored without sentences counts its answer text as one."""
    if "sentences" in out:
        return sum(1 for s in out["sentences"] if s.get("factual", True) and s.get("text"))
    return int(bool(str(out.get("answer", "")).strip()))


def score_case(case: Case, out: dict[str, Any]) -> dict[str, Any]:
    """Every per-case metric (None where it does not apply)."""
    refused = is_refusal(out["status"])
    error = out["status"] == ERROR
    hedged = refused and shown_sentences(out) > 0
    answer = out.get("answer", "")
    cites: list[dict[str, Any]] = out.get("citations", [])
    blocks = list({c["id"]: c for c in cites}.values())
    sentences: dict[str, list[dict[str, Any]]] = {}
    for c in cites:
        sentences.setdefault(c["sentence"], []).append(c)
    factual = [s for s in out.get("sentences", []) if s.get("factual", True)]
    scores: dict[str, Any] = {
        "refused": refused,
        "hedged": hedged,
        "error": error,
        # a hedged answer to an unanswerable question is an answer, not QASPER's "unanswerable"
        "answer_f1": 0.0
        if error
        else answer_f1(case, answer, refused and not (hedged and case.unanswerable)),
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
    """Correct = a clean refusal (no answer sentence shown) where the paper cannot answer, or an
    answer that matches an accept string or has F1 ≥ 0.5; with `accept_all` strings, only a
    match (all of them) counts. An error is never correct; a hedged refusal never is either."""
    if s.get("error"):
        return False
    if case.unanswerable or s["refused"]:
        return bool(case.unanswerable and s["refused"] and not s.get("hedged"))
    if case.accept_all:
        return bool(s["answer_match"])
    return bool(s["answer_match"]) or s["answer_f1"] >= 0.5


# -- many cases --------------------------------------------------------------------------------
Z95 = 1.959964


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share k/n (95 % by default); (0, 1) when n is 0.

    For a mean of values in [0, 1] (F1, recall) pass k = mean × n: an approximation."""
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, k / n))
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def rate(k: float, n: int, of: str) -> dict[str, Any]:
    """One rate: its value (None when n is 0), k, n, the 95 % Wilson interval, what n counts."""
    lo, hi = wilson(k, n)
    value = round(k / n, 4) if n else None
    return {"value": value, "k": round(k, 4), "n": n, "lo": lo, "hi": hi, "of": of}


def _mean_rate(values: Iterable[Any], of: str) -> dict[str, Any]:
    vals = [float(v) for v in values if v is not None]
    return rate(sum(vals), len(vals), of + " (mean; interval approximate)")


RATES: dict[str, str] = {
    "correct": "all cases; errors count as wrong",
    "accuracy_answerable": "answerable cases; refusals, hedged answers and errors count as wrong",
    "precision": "answers given (status answered); excludes refusals, hedged answers and errors",
    "answer_match": "answerable cases with accept values; errors and refusals count as no match",
    "answer_f1": "all cases; errors score 0",
    "answer_f1_answerable": "answerable cases; errors score 0",
    "premise_corrected": "numeric traps whose answer states the paper's value; errors count as wrong",
    "evidence_recall": "cases with gold evidence; refusals and errors score 0",
    "evidence_recall_strict": "cases with gold evidence; refusals and errors score 0",
    "evidence_precision": "cases with output citations; excludes refusals and errors",
    "evidence_f1": "cases with gold evidence; refusals and errors score 0",
    "citation_precision": "cases with output citations; deterministic checks, blind to negation",
    "citation_recall": "cases with factual sentences; deterministic checks, blind to negation",
    "citation_precision_judge": "cases with judged citations",
    "citation_recall_judge": "cases whose every citation was judged",
    "pipeline_supported": "cases with output citations",
    "fabricated_ids": "citations checked (trace); 0 by construction where ids are only shown ones",
    "recited_rate": "citations checked (trace)",
    "error_rate": "all cases",
    "refusal_precision": "refusals (incl. hedged); excludes errors",
    "refusal_recall": "unanswerable cases, any refusal (incl. hedged); errors count as wrong",
    "clean_refusal_rate": "unanswerable cases refused with no answer sentence; errors count as wrong",
    "hedged_rate": "unanswerable cases refused but showing a sentence; errors count as not hedged",
    "false_refusal_rate": "answerable cases that ran; excludes errors (stated apart)",
}
"""Every rate `aggregate` reports, with what its denominator counts and excludes."""


def _mean(values: Iterable[Any]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(statistics.fmean(vals), 4) if vals else None


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if q < 1 else ordered[-1]


def _rates(cases: Sequence[Case], scores: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    pairs = list(zip(cases, scores, strict=True))
    ans = [s for c, s in pairs if not c.unanswerable]
    una = [s for c, s in pairs if c.unanswerable]
    ran_ans = [s for s in ans if not s.get("error")]
    given = [s for s in scores if not s["refused"] and not s.get("error")]
    refusals = [(c, s) for c, s in pairs if s["refused"]]
    traps = [s for c, s in pairs if c.type == "numeric_trap"]
    checked = sum(s["checked_citations"] for s in scores)
    out = {
        "correct": rate(sum(s["correct"] for s in scores), len(scores), RATES["correct"]),
        "accuracy_answerable": rate(
            sum(s["correct"] for s in ans), len(ans), RATES["accuracy_answerable"]
        ),
        "precision": rate(sum(s["correct"] for s in given), len(given), RATES["precision"]),
        "premise_corrected": rate(
            sum(bool(s["answer_match"]) for s in traps), len(traps), RATES["premise_corrected"]
        ),
        "fabricated_ids": rate(
            sum(s["fabricated_trace"] for s in scores), checked, RATES["fabricated_ids"]
        ),
        "recited_rate": rate(
            sum(s.get("recited_trace", 0) for s in scores), checked, RATES["recited_rate"]
        ),
        "error_rate": rate(
            sum(bool(s.get("error")) for s in scores), len(scores), RATES["error_rate"]
        ),
        "refusal_precision": rate(
            sum(c.unanswerable for c, _ in refusals), len(refusals), RATES["refusal_precision"]
        ),
        "refusal_recall": rate(sum(s["refused"] for s in una), len(una), RATES["refusal_recall"]),
        "clean_refusal_rate": rate(
            sum(s["refused"] and not s.get("hedged") for s in una),
            len(una),
            RATES["clean_refusal_rate"],
        ),
        "hedged_rate": rate(
            sum(bool(s.get("hedged")) for s in una), len(una), RATES["hedged_rate"]
        ),
        "false_refusal_rate": rate(
            sum(s["refused"] for s in ran_ans), len(ran_ans), RATES["false_refusal_rate"]
        ),
    }
    for key in RATES:
        if key not in out:
            pool = ans if key == "answer_f1_answerable" else scores
            field = "answer_f1" if key == "answer_f1_answerable" else key
            out[key] = _mean_rate((s.get(field) for s in pool), RATES[key])
    return {k: out[k] for k in RATES}


def aggregate(cases: Sequence[Case], scores: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Summary metrics over cases: each rate's value (None when nothing applies) at the top
    level, and under `rates` with k, n, its 95 % Wilson interval and what n counts."""
    n = len(scores)
    rates = _rates(cases, scores)
    lat = [s["latency_s"] for s in scores]
    return {
        "n": n,
        **{k: r["value"] for k, r in rates.items()},
        "rates": rates,
        "fabricated_ids_count": sum(s["fabricated_trace"] for s in scores),
        # such ids that reached the output: must be 0
        "fabricated_in_output": sum(s["fabricated_output"] for s in scores),
        "recited": sum(s.get("recited_trace", 0) for s in scores),
        "output_citations": sum(s["citations"] for s in scores),
        "errors": sum(bool(s.get("error")) for s in scores),
        "errors_answerable": sum(
            bool(s.get("error")) for c, s in zip(cases, scores, strict=True) if not c.unanswerable
        ),
        "hedged": sum(bool(s.get("hedged")) for s in scores),
        "unanswerable": sum(c.unanswerable for c in cases),
        "refusals": sum(s["refused"] for s in scores),
        "answers_given": rates["precision"]["n"],
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
