"""The premise check: does the question assume a figure the evidence contradicts?

A number of the question that has a kind (a unit, a percent, a currency, a count with its noun)
and occurs in no shown evidence is compared with the numbers of the cited evidence. A
correction is made only from a number of the *same kind* (same unit family; for counts the same
noun) whose surrounding words share a referent with the question's ("95% accuracy on SciQ" vs
"an accuracy of 85% on the SciQ test set"); it quotes the sentence it rests on, and that
sentence goes through the same citation checks as any other. When no such number exists, or two
fit equally well, the note says the evidence does not state the figure instead of guessing.
Bare numbers (no unit, no noun: "Table 2", "BERT 12") are never treated as premises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.textnorm import Quantity, quantities, same_quantity, split_sentences, tokens
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
        referent = _near(question, asked) | ({asked.noun} if asked.noun else set())
        scored: list[tuple[int, Evidence, str, Quantity]] = []
        said = _as_written(question, asked)
        for ev in cited:
            for sentence in split_sentences(ev.text) or [ev.text]:
                for found in quantities(sentence):
                    if not _same_kind(asked, found):
                        continue
                    words = _near(sentence, found) | set(tokens(found.noun))
                    shared = len(referent & words)
                    if shared:
                        scored.append((shared, ev, sentence, found))
        scored.sort(key=lambda s: -s[0])
        if scored and (len(scored) == 1 or scored[0][0] > scored[1][0]):
            _, ev, sentence, found = scored[0]
            reported = _as_written(sentence, found)
            text = (
                f'The question assumes {said}, but the source reports {reported}: "{sentence}"'
                if lang != "zh"
                else f"问题中的 {said} 与原文不符，原文为 {reported}：“{sentence}”"
            )
            return PremiseNote(text, said, ev.id, sentence)
        text = (
            f"The question assumes {said}; the evidence shown does not state this figure, "
            "and no figure of the same kind in it could be matched to it."
            if lang != "zh"
            else f"问题中的 {said} 在所示证据中没有出现，也找不到可对应的同类数字。"
        )
        return PremiseNote(text, said)
    return None
