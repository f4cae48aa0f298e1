"""Drafts: composed sentences with the evidence ids they cite, before any check has run, and
the two ways free text becomes one (its own `[block-id]` markers, or citations attached by code)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from footnote.textnorm import split_sentences
from footnote.types import EVIDENCE_ID_PATTERN
from footnote.verify.checks import is_yes_no, overlap, yes_no_claim
from footnote.verify.evidence import EvidenceSet

REFUSAL_RE = re.compile(
    r"\bunanswerable\b|\bnot (?:stated|mentioned|found|given)\b|无法回答|未提及", re.I
)
"""Words with which a model says the evidence does not answer the question."""
_CITE = re.compile(rf"\[({EVIDENCE_ID_PATTERN}(?:\s*[,;]\s*[^\]]+)*)\]")


@dataclass
class DraftSentence:
    """A composed sentence, its cited evidence ids and the quote offered for each."""

    text: str
    cites: list[str]
    quote: str = ""
    by_code: bool = False
    """Written by code from the cited item's own labels and value (a table cell's answer):
    entailed by construction, so checked without the judge and held to no verbatim rule."""


@dataclass
class Draft:
    """What a composer produced."""

    sentences: list[DraftSentence] = field(default_factory=list)
    refused: bool = False
    raw: str = ""


def attach_citations(
    text: str, evidence: EvidenceSet, *, max_cites: int = 3, question: str = ""
) -> Draft:
    """Split free text into sentences and cite, for each, the evidence it overlaps most (a
    yes/no sentence by its question's words)."""
    if REFUSAL_RE.search(text) and len(text) < 80:
        return Draft(refused=True, raw=text)
    draft = Draft(raw=text)
    for sentence in split_sentences(text):
        claim = yes_no_claim(question, sentence) if question and is_yes_no(sentence) else sentence
        scored = sorted(((overlap(claim, ev.text), ev.id) for ev in evidence), reverse=True)
        best = scored[0][0] if scored else 0.0
        cites = [eid for score, eid in scored[:max_cites] if score >= 0.3 and score >= 0.8 * best]
        draft.sentences.append(DraftSentence(sentence, cites))
    return draft


def draft_from_cited_text(
    text: str, evidence: EvidenceSet, *, question: str = "", cite: re.Pattern[str] = _CITE
) -> Draft:
    """Sentences with the `[block-id]` citations they carry (`cite`: the marker pattern, group 1
    the ids); uncited text gets attached ones."""
    if not cite.search(text):
        return attach_citations(text, evidence, question=question)
    draft = Draft(raw=text)
    for sentence in split_sentences(text):
        ids = [i.strip() for m in cite.finditer(sentence) for i in re.split(r"[,;]", m.group(1))]
        clean = " ".join(cite.sub("", sentence).split()).replace(" .", ".")
        if clean:
            draft.sentences.append(DraftSentence(clean, list(dict.fromkeys(ids))))
    return draft
