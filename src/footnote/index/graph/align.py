"""Entity alignment: a question's mention → graph node keys, exact first, vectors last.

1. exact: a dict over normalised (NFKC, case, width) names and aliases;
2. keyword: every token of the mention occurs in the name ("Hanks" → Tom Hanks);
3. vector: only when both fail, cosine over name embeddings (multilingual e5, so
   "基努·里维斯" can still reach "Keanu Reeves").
Two candidates with close scores make the alignment ambiguous: the pipeline asks back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from footnote.config import GraphSettings
from footnote.config.graph import alignment_thresholds
from footnote.models.base import Embedder, Vectors
from footnote.store.graph.base import GraphStore
from footnote.textnorm import normalise, tokens


@dataclass(frozen=True)
class Entity:
    """A named node."""

    label: str
    key: str
    name: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """An entity proposed for a mention, with the method that found it."""

    entity: Entity
    score: float
    method: str


@dataclass(frozen=True)
class Alignment:
    """The outcome for one mention: ranked candidates, and whether to ask back."""

    mention: str
    candidates: tuple[Candidate, ...]
    ambiguous: bool = False

    @property
    def best(self) -> Candidate | None:
        """The top candidate, or None."""
        return self.candidates[0] if self.candidates else None


class EntityIndex:
    """Exact, keyword and (lazy) vector lookup over a graph's named nodes."""

    def __init__(
        self,
        entities: Sequence[Entity],
        embedder: Embedder | None = None,
        *,
        cache_dir: Path | None = None,
        min_cosine: float = 0.8,
        margin: float = 0.015,
    ) -> None:
        self.entities = list(entities)
        self.embedder = embedder
        self.cache_dir = cache_dir
        self.min_cosine = min_cosine
        self.margin = margin
        self._exact: dict[str, list[int]] = {}
        self._tokens: dict[str, set[int]] = {}
        for i, e in enumerate(self.entities):
            for text in (e.name, *e.aliases):
                key = normalise(text)
                if key:
                    self._exact.setdefault(key, []).append(i)
                for tok in tokens(text):
                    self._tokens.setdefault(tok, set()).add(i)
        self._vectors: Vectors | None = None

    def _filter(self, ids: Sequence[int], labels: Sequence[str] | None) -> list[int]:
        seen = dict.fromkeys(i for i in ids if not labels or self.entities[i].label in labels)
        return list(seen)

    def align(self, mention: str, labels: Sequence[str] | None = None) -> Alignment:
        """Candidates for `mention`, optionally only of these labels."""
        exact = self._filter(self._exact.get(normalise(mention), []), labels)
        if exact:
            cands = tuple(Candidate(self.entities[i], 1.0, "exact") for i in exact)
            return Alignment(mention, cands, ambiguous=len(_distinct(cands)) > 1)
        toks = tokens(mention)
        if toks:
            hits = set.intersection(*(self._tokens.get(t, set()) for t in toks))
            found = self._filter(sorted(hits), labels)
            if found:
                scored = sorted(
                    (
                        Candidate(
                            self.entities[i],
                            len(toks) / max(1, len(tokens(self.entities[i].name))),
                            "keyword",
                        )
                        for i in found
                    ),
                    key=lambda c: -c.score,
                )
                top = scored[0].score
                close = [c for c in scored if c.score >= top - 1e-9]
                return Alignment(mention, tuple(scored[:5]), ambiguous=len(_distinct(close)) > 1)
        return self._vector(mention, labels)

    def _vector(self, mention: str, labels: Sequence[str] | None) -> Alignment:
        if self.embedder is None or not self.entities:
            return Alignment(mention, ())
        mat = self.vectors()
        q = self.embedder.embed_query(mention)
        scores = mat @ q
        order = [int(i) for i in np.argsort(-scores)]
        order = [i for i in order if not labels or self.entities[i].label in labels][:5]
        cands = tuple(
            Candidate(self.entities[i], float(scores[i]), "vector")
            for i in order
            if scores[i] >= self.min_cosine
        )
        ambiguous = len(cands) > 1 and cands[1].score >= cands[0].score - self.margin
        return Alignment(mention, cands, ambiguous=ambiguous and len(_distinct(cands[:2])) > 1)

    def vectors(self) -> Vectors:
        """Name embeddings (computed once; cached on disk beside the graph when possible)."""
        if self._vectors is not None:
            return self._vectors
        assert self.embedder is not None
        texts = [e.name for e in self.entities]
        digest = hashlib.sha256("\x1f".join([self.embedder.name, *texts]).encode()).hexdigest()[:16]
        path = self.cache_dir / f"names-{digest}.npy" if self.cache_dir else None
        if path is not None and path.exists():
            self._vectors = np.load(path).astype(np.float32)
        else:
            self._vectors = self.embedder.embed_passages(texts)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, self._vectors)
        return self._vectors

    def mentions(self, question: str, max_mentions: int = 4) -> list[str]:
        """Names and aliases that occur verbatim (normalised) in `question`, longest first."""
        q = normalise(question)
        found: list[str] = []
        for key in sorted(self._exact, key=len, reverse=True):
            if len(key) < 3 or key not in q:
                continue
            if any(key in f for f in found):
                continue
            if key.isascii() and not _word_bounded(q, key):
                continue
            found.append(key)
            if len(found) >= max_mentions:
                break
        return found


def _word_bounded(text: str, key: str) -> bool:
    start = text.find(key)
    while start >= 0:
        end = start + len(key)
        left = start == 0 or not text[start - 1].isalnum()
        right = end == len(text) or not text[end].isalnum()
        if left and right:
            return True
        start = text.find(key, start + 1)
    return False


def _distinct(cands: Sequence[Candidate]) -> set[tuple[str, str]]:
    return {(c.entity.label, c.entity.key) for c in cands}


def entity_index(
    store: GraphStore, embedder: Any, settings: GraphSettings, cache_dir: Path | None
) -> EntityIndex:
    """The alignment index of a graph: its named nodes plus the spec's extra aliases."""
    extra = store.spec.aliases
    ents = [
        Entity(label, key, name, tuple(aliases + extra.get(f"{label}:{key}", [])))
        for label, key, name, aliases in store.entities()
    ]
    min_cosine, margin = alignment_thresholds(settings)
    return EntityIndex(ents, embedder, cache_dir=cache_dir, min_cosine=min_cosine, margin=margin)
