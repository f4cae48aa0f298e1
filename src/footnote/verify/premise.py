"""The premise check: does the question assume a figure the evidence contradicts?

A number of the question that has a kind (a unit, a percent, a currency, a count with its noun)
and occurs in no shown evidence is compared with the numbers of the cited evidence. A
correction is made only from a number of the *same kind* (same unit family; for counts the same
noun) that measures the question's metric noun ("95% accuracy" / "an accuracy of 85%", not "improves
accuracy by 3%" or "a 3% improvement") and whose surrounding words share a referent with the
question's. The correction is a claim of its own (`PremiseNote.claim`: "accuracy: 85%."), which
`AnswerBuilder` checks, as the answer to the question, like any other sentence (numbers, quote,
judge); it quotes the sentence it rests on. When no such number exists, two fit equally well, or
the claim fails its checks, the note says the evidence does not state the figure instead.
Bare numbers (no unit, no noun: "Table 2", "BERT 12") are never treated as premises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.textnorm import (
    CJK_RE,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    Quantity,
    quantities,
    same_quantity,
    split_sentences,
    stem,
    tokens,
)
from footnote.verify.checks import content_tokens
from footnote.verify.evidence import Evidence, EvidenceSet

_REFERENCE = re.compile(
    r"(?:table|tab\.|figure|fig\.|section|sec\.|eq\.|equation|appendix|chapter|表|图|第)\s*$",
    re.IGNORECASE,
)
_WINDOW = 6


@dataclass(frozen=True)
class PremiseNote:
    """A note on the question's premise: a correction citing `evidence_id` with `quote`, or (no
    evidence id) the statement that the evidence does not decide it."""

    text: str
    asked: str
    evidence_id: str | None = None
    quote: str = ""
    claim: str = ""
    """What the correction claims ("accuracy: 85%."), checked as the answer to the question."""


def _near(text: str, q: Quantity) -> set[str]:
    """Content words within a few tokens of a number (its referent)."""
    before = content_tokens(text[: q.start])[-_WINDOW:]
    after = content_tokens(text[q.start + len(q.text) :])[:_WINDOW]
    return {t for t in before + after if not t.replace(".", "").isdigit()}


_NOUN = re.compile(r"\s*-?\s*(?:[^\W\d_]+|[\u4e00-\u9fff])")


def _as_written(text: str, q: Quantity) -> str:
    """A number as written, with its noun when it counts something ("8 GPUs")."""
    if q.family != "count":
        return q.text
    m = _NOUN.match(text, q.start + len(q.text))
    return q.text + (m.group(0) if m else "")


def _same_kind(asked: Quantity, found: Quantity) -> bool:
    if asked.family != found.family:
        return False
    if asked.family == "count":
        return asked.noun in found.after or found.noun in asked.after
    return True


def _stated(q: Quantity, evidence: EvidenceSet) -> bool:
    return any(same_quantity(q, e) for ev in evidence for e in quantities(ev.text))


def _asked(question: str) -> list[Quantity]:
    return [
        q for q in quantities(question) if q.family and not _REFERENCE.search(question[: q.start])
    ]


def premise_note(
    question: str, cited: Sequence[Evidence], shown: EvidenceSet, lang: str = "en"
) -> PremiseNote | None:
    """The note on the first figure of the question that no shown evidence states (or None)."""
    for asked in _asked(question):
        if _stated(asked, shown):
            continue
        said = _as_written(question, asked)
        metric = metric_noun(question, asked)
        if not metric:
            return unstated_note(said, lang)
        referent = _near(question, asked) | ({asked.noun} if asked.noun else set())
        scored: list[tuple[int, Evidence, str, Quantity]] = []
        for ev in cited:
            for sentence in split_sentences(ev.text) or [ev.text]:
                for found in quantities(sentence):
                    if not _same_kind(asked, found):
                        continue
                    if not _same_noun(metric, metric_noun(sentence, found)):
                        continue
                    words = _near(sentence, found) | set(tokens(found.noun))
                    shared = len(referent & words)
                    if shared:
                        scored.append((shared, ev, sentence, found))
        scored.sort(key=lambda s: -s[0])
        if scored and (len(scored) == 1 or scored[0][0] > scored[1][0]):
            _, ev, sentence, found = scored[0]
            reported = _as_written(sentence, found)
            if lang != "zh":
                text = (
                    f'The question assumes {said}, but the source reports {reported}: "{sentence}"'
                )
                claim = f"{reported}." if asked.family == "count" else f"{metric}: {reported}."
            else:
                text = f"问题中的 {said} 与原文不符，原文为 {reported}：“{sentence}”"
                claim = f"{reported}。" if asked.family == "count" else f"{metric}{reported}。"
            return PremiseNote(text, said, ev.id, sentence, claim)
        return unstated_note(said, lang)
    return None


def unstated_note(said: str, lang: str = "en") -> PremiseNote:
    """The note for a figure of the question that the evidence shown does not state."""
    text = (
        f"The question assumes {said}; the evidence shown does not state this figure, "
        "and no figure of the same kind in it could be matched to it."
        if lang != "zh"
        else f"问题中的 {said} 在所示证据中没有出现，也找不到可对应的同类数字。"
    )
    return PremiseNote(text, said)


_CLAUSE_END = re.compile(r"[,.;:!?()\[\]，。；：！？（）]")
_LINKS = frozenset({
    "of", "is", "was", "are", "were", "be", "been", "at", "reach", "reaches", "reached",
    "achieve", "achieves", "achieved", "attain", "attains", "attained", "score", "scores",
    "scored", "about", "around", "approximately", "roughly", "nearly", "almost",
    "为", "是", "达", "到", "约", "了", "有",
})  # fmt: skip
"""Words between a metric and its value ("accuracy of 85%", "准确率达到85%")."""
_STOP = STOP_WORDS_EN | STOP_WORDS_ZH


def metric_noun(text: str, q: Quantity) -> str:
    """What a number measures: the count's noun, a unit's family ("time" for 18 hours), else the
    noun right after it ("95% accuracy", "63% of the time", "85%的准确率") or the one it is
    linked to before it ("an accuracy of 85%", "准确率为85%"); "" when it has none (a margin:
    "improves accuracy by 3%")."""
    if q.family == "count":
        return q.noun
    if q.family and q.family != "percent" and not q.family.startswith("currency"):
        return q.family  # a unit names what it measures: 18 hours, 40 GB
    after = _CLAUSE_END.split(text[q.start + len(q.text) :], maxsplit=1)[0]
    toks = tokens(after)
    if toks[:1] in (["of"], ["的"]):
        toks = toks[1:]
        while toks[:1] in (["the"], ["a"], ["an"]):  # "63% of the time"
            toks = toks[1:]
    phrase: list[str] = []
    for t in toks:
        if t in _STOP or t in _LINKS:
            break
        phrase.append(t)
    if phrase and not any(CJK_RE.match(t) for t in phrase):
        heads = [t for t in phrase if not t.replace(".", "").isdigit()]
        if heads:
            return heads[-1]
    if phrase:
        return "".join(phrase[:4])
    before = tokens(re.split(_CLAUSE_END, text[: q.start])[-1])
    while before and before[-1] in _LINKS:
        before.pop()
    phrase = []
    while before and before[-1] not in _STOP and not before[-1].replace(".", "").isdigit():
        phrase.insert(0, before.pop())
        if not CJK_RE.match(phrase[0]) or len(phrase) == 4:
            break
    return "".join(phrase)


def _same_noun(a: str, b: str) -> bool:
    """Whether two metric nouns name the same thing ("accuracy"/"accuracies"; "准确率" and
    "测试准确率" share their head)."""
    if not a or not b:
        return False
    if CJK_RE.match(a) or CJK_RE.match(b):
        short, long = sorted((a, b), key=len)
        return len(short) >= 2 and long.endswith(short)
    return stem(a) == stem(b)
