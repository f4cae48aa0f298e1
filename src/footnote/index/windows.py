"""Sentence windows inside blocks, scored against a question by IDF-weighted term coverage.

A paragraph that answers a question usually does so in one or two of its sentences; a block
ranked by its whole text loses to a long block that mentions every query word once. The scorer
reads the best window of each block: the share of the question's (IDF-weighted, crudely
stemmed) terms that one window of up to `width` consecutive sentences covers. Chinese text is
scored on character bigrams, so 准确率 matches 准确率 and not every 率.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from footnote.textnorm import CJK_RUN_RE, STOP_WORDS_EN, normalise, split_sentences, tokens

_CJK_RUN = CJK_RUN_RE
_SUFFIXES = (
    "ations", "ators", "ation", "ator", "ated", "ates", "ings", "ate", "ing", "ies", "ers", "ors",
    "ed", "es", "er", "or", "s",
)  # fmt: skip


def stem(token: str) -> str:
    """A crude English stem (annotators/annotated → annot); CJK and numbers are kept."""
    if not token.isascii() or not token.isalpha() or len(token) <= 4:
        return token
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return token


def terms(text: str) -> set[str]:
    """Matching terms of a text: stemmed content words plus CJK character bigrams."""
    out = {
        stem(t)
        for t in tokens(text)
        if t not in STOP_WORDS_EN and not _CJK_RUN.fullmatch(t) and (len(t) > 1 or t.isdigit())
    }
    for run in _CJK_RUN.findall(normalise(text)):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            out.add(run)
    return out


def windows(text: str, width: int = 2) -> list[str]:
    """Runs of up to `width` consecutive sentences (the whole text when it has one)."""
    sentences = split_sentences(text) or [text]
    if len(sentences) <= width:
        return [" ".join(sentences)]
    return [" ".join(sentences[i : i + width]) for i in range(len(sentences) - width + 1)]


@dataclass
class WindowScorer:
    """IDF statistics over a set of texts (a paper's blocks) and window scoring against them."""

    df: Counter[str]
    n: int

    @classmethod
    def over(cls, texts: Iterable[str]) -> WindowScorer:
        """Document frequencies of terms across `texts`."""
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            df.update(terms(text))
            n += 1
        return cls(df, n)

    def idf(self, term: str) -> float:
        """Smoothed inverse document frequency (an unseen term weighs most)."""
        return math.log(1 + (self.n + 1) / (self.df.get(term, 0) + 0.5))

    def coverage(self, question_terms: set[str], text: str) -> float:
        """IDF-weighted share of the question's terms present in `text`."""
        total = sum(self.idf(t) for t in question_terms)
        if not total:
            return 0.0
        have = terms(text)
        return sum(self.idf(t) for t in question_terms if t in have) / total

    def best_window(self, question: str, text: str, width: int = 2) -> tuple[float, str]:
        """The best-covering window of `text` and its coverage."""
        q = terms(question)
        scored = [(self.coverage(q, w), w) for w in windows(text, width)]
        return max(scored, key=lambda s: s[0]) if scored else (0.0, "")


class PaperWindows:
    """Every block of a paper as sentence windows, scanned whole for a question (the blocks the
    fused search pool missed can still be found by the one sentence that answers)."""

    def __init__(self, items: Sequence[tuple[str, str]], width: int = 2) -> None:
        """`items`: (key, text) pairs, e.g. block ids and texts."""
        self.keys = [k for k, _ in items]
        self.scorer = WindowScorer.over(t for _, t in items)
        self.windows = [[terms(w) for w in windows(t, width)] for _, t in items]

    def rank(self, question: str, n: int) -> list[tuple[str, float]]:
        """The `n` best keys by best-window coverage (score > 0 only)."""
        q = terms(question)
        weights = {t: self.scorer.idf(t) for t in q}
        total = sum(weights.values())
        if not total:
            return []
        scored = []
        for key, wins in zip(self.keys, self.windows, strict=True):
            best = max((sum(weights[t] for t in q if t in w) for w in wins), default=0.0)
            if best > 0:
                scored.append((key, best / total))
        scored.sort(key=lambda x: -x[1])
        return scored[:n]


def excerpt(question: str, text: str, scorer: WindowScorer, limit: int) -> str:
    """The part of `text` around its best window, at most about `limit` characters (whole
    sentences: the best window, then its neighbours while they fit)."""
    if len(text) <= limit:
        return text
    sentences = split_sentences(text) or [text]
    q = terms(question)
    scored = [
        (scorer.coverage(q, " ".join(sentences[i : i + 2])), i) for i in range(len(sentences))
    ]
    best = max(scored, key=lambda s: (s[0], -s[1]))[1]
    lo, hi = best, min(len(sentences), best + 2)
    size = sum(len(x) + 1 for x in sentences[lo:hi])
    grew = True
    while grew:
        grew = False
        if lo > 0 and size + len(sentences[lo - 1]) + 1 <= limit:
            lo, size, grew = lo - 1, size + len(sentences[lo - 1]) + 1, True
        if hi < len(sentences) and size + len(sentences[hi]) + 1 <= limit:
            hi, size, grew = hi + 1, size + len(sentences[hi]) + 1, True
    return " ".join(sentences[lo:hi])


def garbled(text: str) -> bool:
    """Text that is mostly symbols, digits or one-letter fragments (formula or figure debris)."""
    chars = [c for c in text if not c.isspace()]
    if len(chars) < 12:
        return False
    letters = sum(1 for c in chars if c.isalpha())
    if letters / len(chars) < 0.55:
        return True
    words = text.split()
    short = sum(1 for w in words if len(w) <= 2)
    return len(words) >= 8 and short / len(words) > 0.5 and not _CJK_RUN.search(text)


def rank_by_windows(
    question: str, texts: Sequence[str], scorer: WindowScorer, width: int = 2
) -> list[float]:
    """Best-window coverage of each text (same order)."""
    return [scorer.best_window(question, t, width)[0] for t in texts]
