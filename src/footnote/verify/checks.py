"""Per-citation checks: code first (id, quote, numbers), then an optional entailment judge.

A citation's verdict:
- the id was not among the evidence given → `fabricated` (the citation is dropped and counted);
- a number in the sentence occurs in no form in the cited text → `unsupported`;
- otherwise the judge's P(yes) decides (`supported` ≥ supported_threshold > `weak` ≥ weak_threshold);
  without a judge, content-word overlap between sentence and cited text decides, and a verbatim
  extract counts as supported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from footnote.textnorm import contains, fuzzy_contains, quantities, tokens, unmatched_numbers
from footnote.types import Verdict
from footnote.verify.evidence import Evidence, EvidenceSet

Judge = Callable[[str, str], float]
"""`judge(claim, passage) -> P(passage supports claim)`."""

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "by",
        "with",
        "from",
        "as",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "we",
        "our",
        "they",
        "their",
        "which",
        "what",
        "who",
        "how",
        "why",
        "when",
        "where",
        "do",
        "does",
        "did",
        "not",
        "no",
        "yes",
        "than",
        "then",
        "there",
        "here",
        "can",
        "could",
        "may",
        "might",
        "will",
        "would",
        "should",
        "also",
        "such",
        "into",
        "about",
        "over",
        "de",
        "的",
        "了",
        "是",
        "在",
        "和",
        "与",
        "及",
        "或",
        "也",
        "都",
        "而",
        "其",
        "该",
        "这",
        "那",
        "一个",
        "我们",
        "他们",
    ]
)


def content_tokens(text: str) -> list[str]:
    """Normalised tokens minus stop words."""
    return [t for t in tokens(text) if t not in _STOP]


def overlap(claim: str, passage: str) -> float:
    """Share of the claim's content tokens found in the passage (0 when the claim has none)."""
    claim_toks = content_tokens(claim)
    if not claim_toks:
        return 0.0
    have = set(tokens(passage))
    return sum(1 for t in claim_toks if t in have) / len(claim_toks)


@dataclass(frozen=True)
class Thresholds:
    """Judge probability cut-offs."""

    supported: float = 0.6
    weak: float = 0.3


@dataclass(frozen=True)
class CitationCheck:
    """Everything the checks found about one citation."""

    evidence_id: str
    verdict: Verdict
    fabricated: bool = False
    evidence: Evidence | None = None
    quote: str = ""
    quote_match: str = "none"
    """exact | fuzzy | missing | none (no quote given)"""
    repaired_from: str | None = None
    numbers_missing: tuple[str, ...] = ()
    judge_p: float | None = None
    reasons: dict[str, str] = field(default_factory=dict)


def _verdict_from_p(p: float, t: Thresholds) -> Verdict:
    if p >= t.supported:
        return "supported"
    return "weak" if p >= t.weak else "unsupported"


def check_citation(
    sentence: str,
    evidence_id: str,
    evidence: EvidenceSet,
    *,
    quote: str = "",
    judge: Judge | None = None,
    thresholds: Thresholds = Thresholds(),
) -> CitationCheck:
    """Run every check on one (sentence, citation) pair."""
    reasons: dict[str, str] = {}
    ev = evidence.resolve(evidence_id)
    repaired_from = None
    quote_match = "none"
    if quote.strip():
        if ev is not None and contains(ev.text + "\n" + ev.context, quote):
            quote_match = "exact"
        elif ev is not None and fuzzy_contains(ev.text, quote):
            quote_match = "fuzzy"
        else:
            # cite repair: the quote is real but the model named the wrong item
            other = next((e for e in evidence if contains(e.text, quote)), None) or next(
                (e for e in evidence if fuzzy_contains(e.text, quote)), None
            )
            if other is not None:
                repaired_from, ev, evidence_id = evidence_id, other, other.id
                quote_match = "exact" if contains(other.text, quote) else "fuzzy"
                reasons["repaired"] = f"quote found in {other.id}, not in {repaired_from}"
            else:
                quote_match = "missing"
                reasons["quote"] = "quoted text does not occur in the cited evidence"
    if ev is None:
        reasons["id"] = f"{evidence_id} was not among the evidence given"
        return CitationCheck(evidence_id, "unsupported", fabricated=True, reasons=reasons)
    missing = tuple(unmatched_numbers(sentence, ev.text))
    if missing:
        reasons["numbers"] = "not in the cited text: " + ", ".join(missing)
        return CitationCheck(
            evidence_id,
            "unsupported",
            evidence=ev,
            quote=quote,
            quote_match=quote_match,
            repaired_from=repaired_from,
            numbers_missing=missing,
            reasons=reasons,
        )
    p: float | None = None
    if judge is not None:
        p = judge(sentence, (ev.context + "\n" + ev.text).strip())
        verdict = _verdict_from_p(p, thresholds)
        reasons["judge"] = f"P(supported) = {p:.2f}"
    else:
        ov = 1.0 if contains(ev.text, sentence) else overlap(sentence, f"{ev.context} {ev.text}")
        verdict = "supported" if ov >= 0.7 else ("weak" if ov >= 0.4 else "unsupported")
        reasons["overlap"] = f"{ov:.0%} of the sentence's content words occur in the cited text"
    if quote_match == "missing" and verdict == "supported":
        verdict = "weak"
    return CitationCheck(
        evidence_id,
        verdict,
        evidence=ev,
        quote=quote,
        quote_match=quote_match,
        repaired_from=repaired_from,
        judge_p=p,
        reasons=reasons,
    )


def is_factual(sentence: str) -> bool:
    """Whether a sentence states something checkable (not a bare connective or a question)."""
    s = sentence.strip()
    if not s or s.endswith(("?", "？")):
        return False
    return bool(content_tokens(s)) or bool(quantities(s))
