"""Evidence cards: candidate sentences cut from passages with their exact character spans, the
choice of which become cards (by the `understand` model, or by code), and the cards themselves.

A card's snippet is always an exact substring of its snapshot text (or block text) at its span:
code cuts it, so no model can alter a quote."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from footnote.models.base import Message
from footnote.models.jsontext import find_json_object
from footnote.pipelines.research.sources import Passage
from footnote.prompts import data_section, render
from footnote.textnorm import looks_like_year, quantities, split_sentences, stem, tokens
from footnote.types import EvidenceCard, sha256_hex
from footnote.verify import content_tokens

MIN_CHARS, MAX_CHARS = 25, 600
MIN_MATCHED = 2
"""Words of the sub-question a sentence must share to be a candidate at all."""
_ENDS = re.compile(r"[.!?。！？;；:：)）\"”]\s*$")
_NOISE = re.compile(r"fictional test page|all rights reserved|subscribe|cookie", re.I)


@dataclass(frozen=True)
class Candidate:
    """A sentence of a passage that may become a card."""

    passage: Passage
    start: int
    end: int
    score: float

    @property
    def text(self) -> str:
        """The exact sentence."""
        return self.passage.text[self.start : self.end]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text` (each an exact substring)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for paragraph in re.split(r"\n\s*\n|\n(?=\s*[-*•]\s)", text):  # paragraphs and list items
        p_start = text.find(paragraph, pos)
        if p_start < 0:
            continue
        pos = p_start + len(paragraph)
        cursor = p_start
        for sentence in split_sentences(paragraph):
            at = text.find(sentence, cursor, pos)
            if at < 0:
                continue
            spans.append((at, at + len(sentence)))
            cursor = at + len(sentence)
    return spans


Closeness = Callable[[Sequence[str]], Sequence[float]]
"""`closeness(sentences) -> a score per sentence`: how close each is in meaning to the
sub-question (the `embed` role's cosine, `research.rank_sentences`); only their order counts."""
CLOSE_ENOUGH = 0.6
"""Where the closest and the farthest sentence of one search are 1 and 0: a sentence at least
this close is a candidate even when it shares fewer than `MIN_MATCHED` of the sub-question's
words ("In total, there are 1,716 tweets." for "how large is each Twitter dataset?"; any
sentence of an English paper for a Chinese question)."""


def candidates(
    question: str, focus: str, passages: Sequence[Passage], limit: int, *, per_passage: int = 2,
    skip: Callable[[Passage, int, int], bool] | None = None,
    closeness: Closeness | None = None,
) -> list[Candidate]:  # fmt: skip
    """The best sentences for a sub-question: the passage's search rank (the retriever already
    judged it relevant), how many of the question's and the item's words the sentence has, its
    `closeness` in meaning to the question where given (relative to the other sentences of the
    search), a bonus for figures; at most `per_passage` sentences of one passage, so the cards
    spread over sources. A sentence `skip(passage, start, end)` names is never a candidate (an
    injection attempt; one an earlier search already offered, so a passage found again offers
    its next sentences)."""
    wanted = {stem(t) for t in (*content_tokens(question), *content_tokens(focus))}
    seen_at: list[tuple[Passage, int, int, int]] = []
    for passage in passages:
        for start, end in sentence_spans(passage.text):
            sentence = passage.text[start:end]
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or _NOISE.search(sentence):
                continue
            if not _ENDS.search(sentence) and len(sentence) < 80:
                continue  # a heading or a label, not a statement
            if skip is not None and skip(passage, start, end):
                continue
            matched = len(wanted & {stem(t) for t in tokens(sentence)})
            if matched >= MIN_MATCHED or closeness is not None:
                seen_at.append((passage, start, end, matched))
    close = _relative(closeness, [p.text[a:b] for p, a, b, _ in seen_at])
    found: dict[tuple[str, int], Candidate] = {}
    for (passage, start, end, matched), near in zip(seen_at, close, strict=True):
        if matched < MIN_MATCHED and (near is None or near < CLOSE_ENOUGH):
            continue
        prior = 1.0 / (1.0 + 0.25 * passage.rank)
        figures = (
            0.1 if any(not looks_like_year(q) for q in quantities(passage.text[start:end])) else 0.0
        )
        words = min(1.0, matched / 5)
        score = (0.45 * prior + 0.45 * words if near is None
                 else 0.3 * prior + 0.4 * near + 0.2 * words) + figures  # fmt: skip
        key = (passage.block.id if passage.block is not None else passage.source_id, start)
        if key not in found or found[key].score < score:
            found[key] = Candidate(passage, start, end, round(score, 4))
    ranked = sorted(found.values(), key=lambda c: (-c.score, c.passage.source_id, c.start))
    seen: set[str] = set()
    per: dict[str, int] = {}
    out = []
    for c in ranked:
        norm = " ".join(c.text.lower().split())
        where = c.passage.block.id if c.passage.block is not None else c.passage.source_id
        if norm in seen or per.get(where, 0) >= per_passage:
            continue
        seen.add(norm)
        per[where] = per.get(where, 0) + 1
        out.append(c)
        if len(out) >= limit:
            break
    return out


def _relative(closeness: Closeness | None, sentences: Sequence[str]) -> list[float | None]:
    """Each sentence's closeness scaled so the closest is 1 and the farthest 0 (None each
    without `closeness`, or with fewer than two sentences to compare)."""
    if closeness is None or len(sentences) < 2:
        return [None] * len(sentences)
    raw = [float(x) for x in closeness(sentences)]
    if len(raw) != len(sentences):
        raise ValueError(f"closeness gave {len(raw)} scores for {len(sentences)} sentences")
    lo, hi = min(raw), max(raw)
    return [(x - lo) / (hi - lo) if hi > lo else 0.0 for x in raw]


class Selection(BaseModel):
    """The `understand` model's choice of candidates."""

    relevant: list[str]


SelectFn = Callable[[list[Message], dict[str, object], tuple[str, ...]], str]
"""`select(messages, json_schema, labels) -> reply text` (a budgeted model call)."""


def select_with_model(
    question: str, found: Sequence[Candidate], complete: SelectFn
) -> list[Candidate]:
    """The candidates the model names, in its order (labels outside the list are ignored)."""
    aliases = {f"C{i + 1}": c for i, c in enumerate(found)}
    listing = "\n\n".join(
        f"[{a}] ({c.passage.title[:80]}, {c.passage.published_at or 'undated'}) {c.text}"
        for a, c in aliases.items()
    )
    messages = [
        Message("system", "You select evidence. You output JSON only."),
        Message("user", render("research_select", question=question,
                               passages=data_section(listing, "PASSAGES"))),
    ]  # fmt: skip
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "relevant": {
                "type": "array",
                "items": {"type": "string", "enum": list(aliases)},
                "maxItems": len(aliases),
            }
        },
        "required": ["relevant"],
    }
    labels = tuple(dict.fromkeys(lab for c in found for lab in c.passage.labels))
    reply = complete(messages, schema, labels)
    picked = Selection.model_validate(find_json_object(reply)).relevant
    return [aliases[a] for a in dict.fromkeys(picked) if a in aliases]


def card_id(passage: Passage, start: int, end: int) -> str:
    """A stable card id from where its snippet is."""
    where = passage.block.id if passage.block is not None else passage.source_id
    return "card_" + sha256_hex(f"{where}\x1f{start}\x1f{end}".encode())[:12]


def make_card(c: Candidate, sub_question: str) -> EvidenceCard:
    """The card of a candidate: snippet = the exact span; locator = page or URL#char=a,b. Its
    claim is the snippet until the model writes one that the gate passes (`claims.py`)."""
    p = c.passage
    if p.block is not None:
        section = " › ".join(p.block.section_path[-2:])
        locator = f"p. {p.block.page}" + (f", {section}" if section else "")
        return EvidenceCard(
            card_id(p, c.start, c.end), c.text, c.text, locator,
            sub_question=sub_question, block_id=p.block.id, span=(c.start, c.end),
            source_id=p.source_id, source_title=p.title, url=p.url, page=p.block.page,
            published_at=p.published_at, source_type="unknown", labels=p.labels,
        )  # fmt: skip
    assert p.snapshot is not None
    return EvidenceCard(
        card_id(p, c.start, c.end), c.text, c.text, f"{p.url}#char={c.start},{c.end}",
        sub_question=sub_question, snapshot_id=p.snapshot.id, span=(c.start, c.end),
        source_id=p.source_id, source_title=p.title, url=p.url, published_at=p.published_at,
        labels=p.labels,
    )  # fmt: skip
