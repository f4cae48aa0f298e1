"""Deterministic citation checks, support scoring and refusal policy."""

from footnote.verify.checks import (
    CitationCheck,
    Judge,
    Thresholds,
    check_citation,
    content_tokens,
    is_factual,
    overlap,
)
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.scoring import relevance, support_score, term_coverage

__all__ = [
    "CitationCheck",
    "Evidence",
    "EvidenceSet",
    "Judge",
    "Thresholds",
    "check_citation",
    "content_tokens",
    "is_factual",
    "overlap",
    "relevance",
    "support_score",
    "term_coverage",
]
