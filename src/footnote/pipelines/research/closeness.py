"""How close in meaning a sentence is to a sub-question: the `embed` role's cosine, for
ranking the sentences of what a search returned (`cards.candidates`). A sentence rarely
repeats the question's words ("In total, there are 1,716 tweets." for "how large is each
Twitter dataset?"; an English paper for a Chinese question), so counting shared words alone
left most answers in a retrieved passage uncarded (`bench/research_evidence.py`). The same
closeness to the research question decides which papers' figures a brief sets side by side
(`relevant_to`)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from footnote.errors import LicenceRefused, ModelError
from footnote.models.roles import RoleEmbedder
from footnote.pipelines.research.figures import Relevance
from footnote.pipelines.research.sources import SentenceCloseness
from footnote.types import EvidenceCard

MAX_CACHED = 20_000
"""Sentence vectors one run keeps (a passage returned by several queries is embedded once)."""


def embedder_closeness(embedder: RoleEmbedder) -> SentenceCloseness:
    """`closeness(question, sentences, labels)` by `embedder` (its licence gate sees the
    labels), with the sentences' vectors cached for the run."""
    cache: dict[str, np.ndarray] = {}
    lock = threading.Lock()

    def closeness(question: str, sentences: Sequence[str], labels: tuple[str, ...]) -> list[float]:
        q = np.asarray(embedder.embed_query(question, labels=labels), dtype=np.float32)
        with lock:
            known = {s: cache[s] for s in dict.fromkeys(sentences) if s in cache}
        todo = [s for s in dict.fromkeys(sentences) if s not in known]
        if todo:
            vectors = np.asarray(embedder.embed_passages(todo, labels=labels), dtype=np.float32)
            fresh = dict(zip(todo, vectors, strict=True))
            known.update(fresh)
            with lock:
                if len(cache) + len(fresh) > MAX_CACHED:
                    cache.clear()
                cache.update(fresh)
        return [float(np.dot(q, known[s])) for s in sentences]

    return closeness


def relevant_to(
    questions: Sequence[str], closeness: SentenceCloseness, floor: float, notes: list[str]
) -> Relevance:
    """Which cards' sentences are about the question, written in one or more languages
    (`questions`; empty ones ignored): closeness to the nearest at least `floor`. A refused
    or failed embedder keeps every card and says so in `notes`."""
    asked = [q for q in dict.fromkeys(questions) if q.strip()]

    def relevant(cards: Sequence[EvidenceCard]) -> list[bool]:
        if not cards:
            return []
        labels = tuple(sorted({label for c in cards for label in c.labels}))
        snippets = [c.snippet for c in cards]
        try:
            scores = [
                max(s) for s in zip(*(closeness(q, snippets, labels) for q in asked), strict=True)
            ]
        except (LicenceRefused, ModelError, ValueError) as e:
            notes.append(f"papers' figures not checked against the question ({e}): all kept")
            return [True] * len(cards)
        return [s >= floor for s in scores]

    return relevant
