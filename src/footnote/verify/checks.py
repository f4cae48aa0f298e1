"""Per-citation checks: code first (id, quote, numbers), then an optional entailment judge.

A citation's verdict:
- the id was not among the evidence given → `fabricated` (the citation is dropped and counted);
- the quote is not in the cited (shown) item but in another item shown → the citation moves to
  that item and is counted as *re-cited* (`recited_from` names the item the model cited);
- a bare "Yes."/"No." is checked as the answer to its question (the claim the judge sees is
  the question with the answer); without a judge its polarity cannot be checked, so it is at most
  `weak`; a fragment ("The United States.") is judged as the answer to its question too;
- a number in the sentence occurs in no form in the cited text → `unsupported`;
- a citation of a result row (`Evidence.kind == "row"`) is checked value by value against the
  rows the sentence cites (`verify.values`: names, numbers, dates): a value in none of them →
  `unsupported`; with every value present the judge decides when given, else `supported`
  (a sentence that states no value at all is `weak`);
- otherwise the judge's P(yes) decides (`supported` ≥ supported_threshold > `weak` ≥ weak_threshold);
  without a judge, content-word overlap between sentence and cited text decides, and a verbatim
  extract counts as supported.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from footnote.textnorm import (
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    contains,
    fuzzy_contains,
    normalise,
    quantities,
    tokens,
    unmatched_numbers,
)
from footnote.types import Verdict
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.values import VALUE_KINDS, missing_values, states_values

Judge = Callable[[str, str], float]
"""`judge(claim, passage) -> P(passage supports claim)`."""

_STOP = STOP_WORDS_EN | STOP_WORDS_ZH


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
    recited_from: str | None = None
    """The id the model cited when the quote was found in another shown item instead."""
    numbers_missing: tuple[str, ...] = ()
    values_missing: dict[str, list[str]] = field(default_factory=dict)
    """For row evidence: kind (`numbers`, `dates`, `names`) → values in none of the cited rows."""
    judge_p: float | None = None
    reasons: dict[str, str] = field(default_factory=dict)


_OCR_MATCH = 0.85
"""Share of a quote's characters that must occur, in order, in OCR-read evidence."""


def _fuzzy(ev: Evidence, quote: str) -> bool:
    """Token-level fuzzy match; for OCR-read blocks (which misread a letter here and there)
    also a character-level one: most of the quote's characters in order within one window."""
    if fuzzy_contains(ev.text, quote):
        return True
    if ev.block.ocr_confidence is None:
        return False
    q, hay = normalise(quote), normalise(ev.text)
    if not q:
        return False
    matcher = difflib.SequenceMatcher(None, hay, q, autojunk=False)
    blocks = [m for m in matcher.get_matching_blocks() if m.size]
    if not blocks:
        return False
    matched = sum(m.size for m in blocks)
    span = blocks[-1].a + blocks[-1].size - blocks[0].a
    return matched >= _OCR_MATCH * len(q) and span <= 1.3 * len(q)


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
    question: str = "",
    companions: Sequence[str] = (),
) -> CitationCheck:
    """Run every check on one (sentence, citation) pair (`question`: what a yes/no answers;
    `companions`: the sentence's other citations, whose rows a row's value checks include)."""
    reasons: dict[str, str] = {}
    ev = evidence.resolve(evidence_id)
    recited_from = None
    quote_match = "none"
    if quote.strip():
        if ev is not None and contains(ev.text + "\n" + ev.context, quote):
            quote_match = "exact"
        elif ev is not None and _fuzzy(ev, quote):
            quote_match = "fuzzy"
        elif ev is None:
            quote_match = "missing"  # an id never shown is fabricated, whatever it quotes
        else:
            # re-cite: the quote is real but the model named the wrong item (counted)
            other = next((e for e in evidence if contains(e.text, quote)), None) or next(
                (e for e in evidence if _fuzzy(e, quote)), None
            )
            if other is not None:
                recited_from, ev, evidence_id = evidence_id, other, other.id
                quote_match = "exact" if contains(other.text, quote) else "fuzzy"
                reasons["recited"] = f"quote found in {other.id}, not in the cited {recited_from}"
            else:
                quote_match = "missing"
                reasons["quote"] = "quoted text does not occur in the cited evidence"
    if ev is None:
        reasons["id"] = f"{evidence_id} was not among the evidence given"
        return CitationCheck(evidence_id, "unsupported", fabricated=True, reasons=reasons)
    if ev.kind == "row":
        return _check_row(sentence, ev, evidence, companions, judge, thresholds, reasons)
    missing = tuple(unmatched_numbers(sentence, ev.text))
    if missing:
        reasons["numbers"] = "not in the cited text: " + ", ".join(missing)
        return CitationCheck(
            evidence_id,
            "unsupported",
            evidence=ev,
            quote=quote,
            quote_match=quote_match,
            recited_from=recited_from,
            numbers_missing=missing,
            reasons=reasons,
        )
    p: float | None = None
    bare = is_yes_no(sentence) and question.strip() != ""
    short = not bare and judge is not None and question.strip() != "" and is_fragment(sentence)
    claim = yes_no_claim(question, sentence) if bare or short else sentence
    if judge is not None:
        p = judge(claim, (ev.context + "\n" + ev.text).strip())
        verdict = _verdict_from_p(p, thresholds)
        reasons["judge"] = f"P(supported) = {p:.2f}"
    else:
        ov = 1.0 if contains(ev.text, claim) else overlap(claim, f"{ev.context} {ev.text}")
        verdict = "supported" if ov >= 0.7 else ("weak" if ov >= 0.4 else "unsupported")
        reasons["overlap"] = f"{ov:.0%} of the claim's content words occur in the cited text"
        if bare and verdict == "supported":
            verdict = "weak"
            reasons["yes_no"] = "whether the evidence says yes or no needs the judge"
    if quote_match == "missing" and verdict == "supported":
        verdict = "weak"
    return CitationCheck(
        evidence_id,
        verdict,
        evidence=ev,
        quote=quote,
        quote_match=quote_match,
        recited_from=recited_from,
        judge_p=p,
        reasons=reasons,
    )


def _check_row(
    sentence: str,
    ev: Evidence,
    evidence: EvidenceSet,
    companions: Sequence[str],
    judge: Judge | None,
    thresholds: Thresholds,
    reasons: dict[str, str],
) -> CitationCheck:
    """The value checks of a sentence citing result rows, then the judge when given."""
    cited = [ev] + [o for c in companions if (o := evidence.resolve(c)) is not None and o.id != ev.id]
    rows = "\n".join(dict.fromkeys(o.text for o in cited))
    reasons["id"] = "shown"
    missing = missing_values(sentence, rows, ev.context)
    for kind in VALUE_KINDS:
        miss = missing.get(kind, [])
        reasons[kind] = "missing: " + ", ".join(miss) if miss else "present"
    p: float | None = None
    if missing:
        verdict: Verdict = "unsupported"
    elif judge is not None:
        p = judge(sentence, (ev.context + "\n" + rows).strip())
        verdict = _verdict_from_p(p, thresholds)
        reasons["judge"] = f"P(supported) = {p:.2f}"
    elif states_values(sentence):
        verdict = "supported"
    else:
        verdict = "weak"
        reasons["values"] = "states no name, number or date the rows could confirm"
    return CitationCheck(
        ev.id,
        verdict,
        evidence=ev,
        numbers_missing=tuple(missing.get("numbers", ())),
        values_missing=missing,
        judge_p=p,
        reasons=reasons,
    )


_YES_NO = re.compile(
    r"^\s*(?:yes|no|是的?|不是|否|对|不对)\s*(?:[,.!;:，。！；：]|$)",
    re.IGNORECASE,
)


def is_yes_no(sentence: str) -> bool:
    """Whether a sentence answers yes or no ("Yes.", "No, it does not.", "是的。")."""
    return _YES_NO.match(sentence) is not None


_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def is_fragment(sentence: str) -> bool:
    """Whether a sentence is a bare answer ("The United States.", "1965", "约 30%") rather than
    a statement: at most four words (six characters in Chinese); a yes/no is not one."""
    s = sentence.strip().strip(".。!！;；")
    if not s or is_yes_no(sentence):
        return False
    if _CJK_CHAR.search(s):
        return len(re.sub(r"\s", "", s)) <= 6
    return len(s.split()) <= 4


def yes_no_claim(question: str, sentence: str) -> str:
    """What a yes/no sentence claims: the answer to its question."""
    return f"{question.strip()} {sentence.strip()}"


def is_factual(sentence: str) -> bool:
    """Whether a sentence states something checkable (not a bare connective or a question);
    a yes/no answer is factual: it needs a citation like any other claim."""
    s = sentence.strip()
    if not s or s.endswith(("?", "？")):
        return False
    return is_yes_no(s) or bool(content_tokens(s)) or bool(quantities(s))
