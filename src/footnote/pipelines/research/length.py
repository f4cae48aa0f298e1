"""How long a brief is, and how long it should be.

**Pages** (`estimate_pages`): 500 words of Latin-script text, or 1,000 CJK characters, make a
page (a single-spaced A4 page of English holds about 500 words; 500 English words translate to
roughly 800–1,000 Chinese characters, so one brief measures about the same in either language).
Mixed text adds the two shares. CJK characters are `textnorm.count_cjk`'s (full-width
punctuation included); Markdown syntax, footnote marks, URLs and table rules are not words.

**Size** (`chapter_sentences`, `cards_wanted`): a chapter aims at its share of
`research.target_pages` (20 sentences a page) but no more than its share of the synthesis
reserve pays for (`TOKENS_PER_SENTENCE`: one sentence written in a group call and judged); a
sub-question gathers `CARDS_PER_SENTENCE` cards per sentence aimed at (at least `MIN_CARDS`).
The evidence then decides: a chapter is written from the cards found, one sentence per card at
most, never padded."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from footnote.config import ResearchSettings
from footnote.textnorm import count_cjk, is_cjk

WORDS_PER_PAGE = 500
CJK_PER_PAGE = 1000
SENTENCES_PER_PAGE = 20
"""About 25 words a sentence."""
TOKENS_PER_SENTENCE = 500
"""What one checked sentence costs: its share of a group writing call (the group's cards and
the instructions in, the claims out) and its judge call."""
CARDS_PER_SENTENCE = 1.2
"""Cards gathered per sentence aimed at: some cards go to conflicts, some fail the checks."""
MIN_CARDS = 6
"""Cards a sub-question looks for however small its share: what one round of selection keeps
(its own budget still stops it sooner)."""
TEMPLATE_CHAPTERS = 6
"""The chapters of a template outline: a chapter's share when the run's share is not known."""

_FOOTNOTE = re.compile(r"\[\^\d+\](?::)?")
_RULE = re.compile(r"^\s*\|?\s*:?-{3,}.*$", re.M)
_URL = re.compile(r"<?https?://\S+>?")
_WORD = re.compile(r"[^\W_]+(?:['’.,-][^\W_]+)*")


def page_counts(text: str) -> tuple[int, int]:
    """(Latin-script words, CJK characters) of a Markdown text, its syntax left out."""
    text = _RULE.sub(" ", _URL.sub(" ", _FOOTNOTE.sub(" ", text)))
    cjk = count_cjk(text)
    latin = "".join(" " if is_cjk(ch) else ch for ch in text)
    return len(_WORD.findall(latin)), cjk


def estimate_pages(text: str) -> float:
    """Pages of a Markdown text: words / 500 + CJK characters / 1,000, to two decimals."""
    words, cjk = page_counts(text)
    return round(words / WORDS_PER_PAGE + cjk / CJK_PER_PAGE, 2)


def chapter_sentences(pages: float, synthesis_tokens: float | None) -> int:
    """Sentences a chapter aims at: its `pages` at `SENTENCES_PER_PAGE`, no more than its
    `synthesis_tokens` pay for (None: unlimited); at least 1."""
    want = pages * SENTENCES_PER_PAGE
    if synthesis_tokens is not None:
        want = min(want, synthesis_tokens / TOKENS_PER_SENTENCE)
    return max(1, math.floor(want + 1e-9))


def cards_wanted(
    settings: ResearchSettings,
    limits: Mapping[str, float | None],
    run_limits: Mapping[str, float | None] | None = None,
) -> int:
    """Cards a sub-question gathers: `research.cards_per_question` when set, else what its
    chapter aims at (`chapter_sentences` × `CARDS_PER_SENTENCE`). The chapter's share of the
    brief is the sub-question's token budget over the run's investigation share (`plan` gives
    each item an equal share); its synthesis tokens are that share of the reserve."""
    if settings.cards_per_question:
        return settings.cards_per_question
    keep = 1.0 - settings.reserve_fraction
    tokens = limits.get("tokens")
    run_tokens = (run_limits or {}).get("tokens") or settings.budget_tokens
    if tokens is None:
        share, synthesis = 1.0 / TEMPLATE_CHAPTERS, None
    else:
        share = min(1.0, tokens / (keep * run_tokens))
        synthesis = (
            tokens * settings.reserve_fraction / keep if settings.reserve_fraction else tokens
        )
    sentences = chapter_sentences(settings.target_pages * share, synthesis)
    return max(MIN_CARDS, math.ceil(sentences * CARDS_PER_SENTENCE))
