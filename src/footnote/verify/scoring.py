"""Relevance of evidence to a question, and the answer's support score.

Relevance is a number in [0, 1] that thresholds can be fitted on: the mean of
(a) the share of the question's content words that occur in the block and
(b) the vector cosine rescaled from the embedder's typical [floor, ceiling] band
(multilingual e5 squeezes cosines into roughly 0.7–0.95, so raw cosines are not comparable
across embedders). With no vector score, (a) alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from footnote.textnorm import tokens
from footnote.types import Sentence
from footnote.verify.checks import content_tokens


def term_coverage(question: str, passage: str) -> float:
    """Share of the question's distinct content tokens found in the passage."""
    q = set(content_tokens(question))
    if not q:
        return 0.0
    have = set(tokens(passage))
    return len(q & have) / len(q)


def relevance(
    question: str,
    passage: str,
    cosine: float | None,
    *,
    floor: float = 0.75,
    ceiling: float = 0.92,
) -> float:
    """Question–passage relevance in [0, 1]."""
    cov = term_coverage(question, passage)
    if cosine is None:
        return cov
    scaled = min(1.0, max(0.0, (cosine - floor) / max(1e-6, ceiling - floor)))
    return 0.5 * cov + 0.5 * scaled


def support_score(sentences: Sequence[Sentence]) -> float:
    """(factual sentences with a supported citation ÷ factual sentences) × min cited relevance."""
    factual = [s for s in sentences if s.factual]
    if not factual:
        return 0.0
    supported = sum(1 for s in factual if any(c.verdict == "supported" for c in s.citations))
    relevances = [c.relevance for s in factual for c in s.citations]
    return round(supported / len(factual) * (min(relevances) if relevances else 0.0), 4)
