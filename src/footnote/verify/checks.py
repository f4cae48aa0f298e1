"""Per-citation checks: code first (id, quote, numbers), then an optional entailment judge.

A citation's verdict:
- the id was not among the evidence given → `fabricated` (the citation is dropped and counted);
- the quote is not in the cited (shown) item but in another item shown → the citation moves to
  that item and is counted as *re-cited* (`recited_from` names the item the model cited);
  a quote matches exactly (after normalisation) or fuzzily (most tokens in order; for OCR-read
  blocks most characters), but a fuzzy match that adds or removes a negation (not, no, never,
  不, 没有, 未, 无 …) is no match; `span` holds the evidence's own words that matched, which is
  what is shown and exported, never the model's string;
- a bare "Yes."/"No." is checked as the answer to its question (the claim the judge sees is
  the question with the answer); without a judge its polarity cannot be checked, so it is at most
  `weak`; a fragment ("The United States.") is judged as the answer to its question too;
- a number in the sentence occurs in no form in the cited text → `unsupported`;
- a citation of a result row (`Evidence.kind == "row"`) is checked value by value against the
  rows the sentence cites (`verify.values`: names, numbers, dates): a value in none of them →
  `unsupported`; with every value present the judge decides when given, else `supported`
  (a sentence that negates what the rows state is `unsupported`; one that states no value at
  all is `weak`);
- otherwise the judge's P(yes) decides (`supported` ≥ supported_threshold > `weak` ≥ weak_threshold);
  without a judge, a polarity difference (the claim negates what the cited text states, or the
  reverse) is `unsupported`, only a verbatim extract is `supported` (or a sentence code wrote
  from the item's own labels and value, `DraftSentence.by_code`), and anything else is at most
  `weak` by content-word overlap.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from footnote.textnorm import (
    CJK_WIDE,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    contains,
    normalise,
    quantities,
    stem_inflected,
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
    span: str = ""
    """The evidence's own words that the quote matched (exact or fuzzy): what is shown and
    exported as the quote, never the model's string."""
    recited_from: str | None = None
    """The id the model cited when the quote was found in another shown item instead."""
    numbers_missing: tuple[str, ...] = ()
    values_missing: dict[str, list[str]] = field(default_factory=dict)
    """For row evidence: kind (`numbers`, `dates`, `names`) → values in none of the cited rows."""
    judge_p: float | None = None
    reasons: dict[str, str] = field(default_factory=dict)


_OCR_MATCH = 0.85
"""Share of a quote's characters that must occur, in order, in OCR-read evidence."""
_FUZZY = 0.85
"""Share of a quote's tokens that must occur, in order and close together, in the evidence."""


def _quote_span(ev: Evidence, quote: str) -> tuple[str, str] | None:
    """How a quote occurs in an item — ("exact" | "fuzzy", the item's own words it matched) —
    or None. A fuzzy match is token-level (for OCR-read blocks, which misread a letter here and
    there, also character-level); one that adds or removes a negation is no match."""
    hay = ev.text + "\n" + ev.context
    q = normalise(quote)
    if not q:
        return None
    norm, where = _normalised_map(hay)
    pos = norm.find(q)
    if pos >= 0:
        return "exact", _original(hay, norm, where, pos, pos + len(q))
    for start, end in _fuzzy_windows(norm, quote, ev.block.ocr_confidence is not None):
        span = _original(hay, norm, where, start, end)
        if negations(span) == negations(quote):
            return "fuzzy", span
    return None


def _fuzzy_windows(norm: str, quote: str, ocr: bool) -> list[tuple[int, int]]:
    """Windows of `norm` (offsets) holding most of the quote's tokens in order, best first; for
    OCR, then the window holding most of its characters in order."""
    n = tokens(quote)
    found: list[tuple[int, int, int]] = []
    h = _token_offsets(norm)
    for first in range(len(h)):
        if not n or h[first][0] != n[0]:
            continue
        i, matched, last = first, 0, first
        for tok in n:
            for j in range(i, min(len(h), i + 3)):
                if h[j][0] == tok:
                    matched, last, i = matched + 1, j, j + 1
                    break
        if matched >= _FUZZY * len(n):
            found.append((matched, h[first][1], h[last][2]))
    found.sort(key=lambda f: -f[0])
    windows = [(a, b) for _, a, b in found]
    q = normalise(quote)
    if ocr and q:
        matcher = difflib.SequenceMatcher(None, norm, q, autojunk=False)
        blocks = [m for m in matcher.get_matching_blocks() if m.size]
        if blocks:
            start, end = blocks[0].a, blocks[-1].a + blocks[-1].size
            if sum(m.size for m in blocks) >= _OCR_MATCH * len(q) and end - start <= 1.3 * len(q):
                windows.append((start, end))
    return windows


def _token_offsets(norm: str) -> list[tuple[str, int, int]]:
    """The tokens of normalised text with their offsets."""
    out: list[tuple[str, int, int]] = []
    at = 0
    for tok in tokens(norm):
        start = norm.find(tok, at)
        if start < 0:
            break
        at = start + len(tok)
        out.append((tok, start, at))
    return out


_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*(\w)")
_DASH = re.compile(r"[\u2010-\u2015\u2212]")
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_WIDE = re.compile(f"[{CJK_WIDE}]")


def _normalised_map(text: str) -> tuple[str, list[int] | None]:
    """`normalise(text)` and, for each of its characters, the index of the character of `text`
    it comes from (None where the two could not be aligned)."""
    skip = {i for m in _HYPHEN_BREAK.finditer(text) for i in range(m.end(1), m.start(2))}
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if i in skip or ch == "\u00ad":
            continue
        piece = _DASH.sub("-", unicodedata.normalize("NFKC", ch).translate(_CURLY)).lower()
        for c in piece:
            if c.isspace():
                if not chars or chars[-1] == " ":
                    continue
                c = " "
            chars.append(c)
            where.append(i)
    if chars and chars[-1] == " ":
        chars.pop()
        where.pop()
    keep = [
        k
        for k, c in enumerate(chars)
        if not (
            c == " "
            and 0 < k < len(chars) - 1
            and _WIDE.match(chars[k - 1])
            and _WIDE.match(chars[k + 1])
        )
    ]
    norm = "".join(chars[k] for k in keep)
    expected = normalise(text)
    if norm != expected:
        return expected, None
    return norm, [where[k] for k in keep]


def _original(text: str, norm: str, where: list[int] | None, start: int, end: int) -> str:
    """The words of `text` that normalised offsets [start, end) come from."""
    if where is None or end <= start:
        return norm[start:end]
    return text[where[start] : where[end - 1] + 1].strip()


_NOT = re.compile(r"(?<=\w)n't\b|\bcannot\b")
_NEGATIONS_EN = frozenset({"not", "no", "never", "nor", "neither", "none", "without"})
_NEGATIONS_ZH = frozenset("不没未无")
_NOT_NEGATIONS_ZH = frozenset(
    {"不同", "不仅", "不但", "不断", "不少", "不久", "不过", "未来", "无论"}
)
"""Words that start with a negation character but do not negate ("不同" differs, "未来" future)."""


def _polar_tokens(text: str) -> list[tuple[str, bool]]:
    """Tokens of `text` (negations as `not`), each with whether it is a negation."""
    toks = tokens(_NOT.sub(" not", normalise(text)))
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if t in _NEGATIONS_ZH and t + nxt not in _NOT_NEGATIONS_ZH:
            out.append(("not", True))
            i += 2 if t + nxt == "没有" else 1
            continue
        out.append((t, t in _NEGATIONS_EN))
        i += 1
    return out


def negations(text: str) -> Counter[str]:
    """The negations of a text ("not", "no", "never", "n't", 不, 没有, 未, 无 …), counted."""
    return Counter(t for t, neg in _polar_tokens(text) if neg)


def _polarity(text: str) -> tuple[set[str], set[str], bool]:
    """The content words a negation governs (the first after it), the other content words
    (stemmed), and whether the text negates anything at all."""
    negated: set[str] = set()
    plain: set[str] = set()
    pending = any_negation = False
    for t, neg in _polar_tokens(text):
        if neg:
            pending = any_negation = True
        elif t not in _STOP and not t.replace(".", "").isdigit():
            (negated if pending else plain).add(stem_inflected(t))
            pending = False
    return negated, plain, any_negation


def polarity_differs(claim: str, passage: str) -> bool:
    """Whether a claim negates what the passage states, or states what it negates: a word the
    claim negates is stated and never negated in the passage (or the passage negates nothing
    at all), or a word the claim states is only ever negated in the passage."""
    c_neg, c_plain, _ = _polarity(claim)
    p_neg, p_plain, p_any = _polarity(passage)
    if c_neg and not p_any:
        return True
    return any(w in p_plain and w not in p_neg for w in c_neg) or any(
        w in p_neg and w not in p_plain for w in c_plain
    )


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
    as_answer: bool = False,
    by_code: bool = False,
) -> CitationCheck:
    """Run every check on one (sentence, citation) pair (`question`: what a yes/no answers;
    `companions`: the sentence's other citations, whose rows a row's value checks include;
    `as_answer`: judge the sentence as the answer to `question`, as a fragment is; `by_code`:
    code wrote the sentence from the cited item's labels and value, see `DraftSentence`)."""
    reasons: dict[str, str] = {}
    ev = evidence.resolve(evidence_id)
    recited_from = None
    quote_match, span = "none", ""
    if quote.strip():
        found = _quote_span(ev, quote) if ev is not None else None
        if found is not None:
            quote_match, span = found
        elif ev is None:
            quote_match = "missing"  # an id never shown is fabricated, whatever it quotes
        else:
            # re-cite: the quote is real but the model named the wrong item (counted)
            elsewhere = [(e, f) for e in evidence if (f := _quote_span(e, quote)) is not None]
            elsewhere.sort(key=lambda ef: ef[1][0] != "exact")
            if elsewhere:
                other, (quote_match, span) = elsewhere[0]
                recited_from, ev, evidence_id = evidence_id, other, other.id
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
            span=span,
            recited_from=recited_from,
            numbers_missing=missing,
            reasons=reasons,
        )
    p: float | None = None
    bare = is_yes_no(sentence) and question.strip() != ""
    short = (
        not bare
        and question.strip() != ""
        and (as_answer or (judge is not None and is_fragment(sentence)))
    )
    claim = yes_no_claim(question, sentence) if bare or short else sentence
    if judge is not None:
        p = judge(claim, (ev.context + "\n" + ev.text).strip())
        verdict = _verdict_from_p(p, thresholds)
        reasons["judge"] = f"P(supported) = {p:.2f}"
    else:
        verdict = _unjudged(claim, ev, reasons, by_code=by_code)
        if bare and verdict != "unsupported":
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
        span=span,
        recited_from=recited_from,
        judge_p=p,
        reasons=reasons,
    )


def _unjudged(claim: str, ev: Evidence, reasons: dict[str, str], *, by_code: bool) -> Verdict:
    """The verdict without a judge: a reversed polarity is `unsupported`; only a verbatim span
    of the cited text (or a sentence code wrote from the item's labels and value, when most of
    its words occur there) is `supported`; otherwise content-word overlap makes it `weak` at
    best."""
    passage = f"{ev.context}\n{ev.text}"
    if polarity_differs(claim, passage):
        reasons["polarity"] = "the claim negates what the cited text states, or the reverse"
        return "unsupported"
    if contains(ev.text, claim.strip().rstrip(".。!！;；")):
        reasons["overlap"] = "a verbatim span of the cited text"
        return "supported"
    ov = overlap(claim, passage)
    reasons["overlap"] = f"{ov:.0%} of the claim's content words occur in the cited text"
    if ov < 0.4:
        return "unsupported"
    if by_code and ov >= 0.7:
        return "supported"
    reasons["verbatim"] = "not a verbatim span of the cited text: weak at best without the judge"
    return "weak"


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
    cited = [ev] + [
        o for c in companions if (o := evidence.resolve(c)) is not None and o.id != ev.id
    ]
    rows = "\n".join(dict.fromkeys(o.text for o in cited))
    reasons["id"] = "shown"
    missing = missing_values(sentence, rows, ev.context)
    for kind in VALUE_KINDS:
        miss = missing.get(kind, [])
        reasons[kind] = "missing: " + ", ".join(miss) if miss else "present"
    p: float | None = None
    if missing:
        verdict: Verdict = "unsupported"
    elif judge is None and polarity_differs(sentence, f"{ev.context}\n{rows}"):
        verdict = "unsupported"
        reasons["polarity"] = "the sentence negates what the rows state (needs the judge)"
    elif judge is not None:
        p = judge(sentence, (ev.context + "\n" + rows).strip())
        verdict = _verdict_from_p(p, thresholds)
        reasons["judge"] = f"P(supported) = {p:.2f}"
    elif states_values(sentence) or _is_a_cell(sentence, rows):
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


def _is_a_cell(sentence: str, rows: str) -> bool:
    """Whether `sentence` is, word for word, one value of the rows (`col: value; …` lines):
    a list rendered one value a sentence ("Chai.") states that value."""
    said = normalise(sentence.strip().rstrip(".。!！"))
    cells = (part.split(": ", 1)[-1] for line in rows.splitlines() for part in line.split("; "))
    return bool(said) and any(normalise(c) == said for c in cells)


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
    """Whether a sentence states something checkable: it has content words or numbers, whatever
    its punctuation (a question too); a yes/no answer is factual as well. Only a bare
    connective ("So?", "And:") is not."""
    s = sentence.strip()
    if not s:
        return False
    return is_yes_no(s) or bool(content_tokens(s)) or bool(quantities(s))
