"""Rank fusion (weighted RRF or min-max linear) and maximal-marginal-relevance selection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from footnote.index.base import Matrix


@dataclass
class Fused:
    """One candidate after fusion: its key, fused score and per-method scores and ranks."""

    key: int
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)


Ranking = Sequence[tuple[int, float]]


def _collect(rankings: Mapping[str, Ranking]) -> dict[int, Fused]:
    out: dict[int, Fused] = {}
    for method, ranking in rankings.items():
        for rank, (key, score) in enumerate(ranking, start=1):
            f = out.setdefault(key, Fused(key, 0.0))
            f.scores[method] = score
            f.ranks[method] = rank
    return out


def rrf(rankings: Mapping[str, Ranking], weights: Mapping[str, float], k: int = 60) -> list[Fused]:
    """Weighted reciprocal-rank fusion: Σ w_m / (k + rank_m), best first."""
    out = _collect(rankings)
    for f in out.values():
        f.score = sum(weights.get(m, 1.0) / (k + r) for m, r in f.ranks.items())
    return _finish(out)


def linear(rankings: Mapping[str, Ranking], weights: Mapping[str, float]) -> list[Fused]:
    """Weighted sum of per-method min-max-normalised scores (absent = 0), best first."""
    out = _collect(rankings)
    for method, ranking in rankings.items():
        if not ranking:
            continue
        vals = [s for _, s in ranking]
        lo, hi = min(vals), max(vals)
        span = hi - lo or 1.0
        w = weights.get(method, 1.0)
        for key, s in ranking:
            out[key].score += w * (s - lo) / span
    return _finish(out)


def _finish(out: dict[int, Fused]) -> list[Fused]:
    fused = sorted(out.values(), key=lambda f: (-f.score, f.key))
    for f in fused:
        f.scores["fused"] = f.score
    return fused


def mmr(
    fused: Sequence[Fused],
    vectors: Mapping[int, Matrix],
    k: int,
    lam: float = 0.8,
    duplicate_cosine: float = 0.97,
) -> list[Fused]:
    """Pick k items maximising λ·relevance − (1−λ)·max cosine to those already picked.

    Relevance is the fused score scaled to [0, 1]. An item at least `duplicate_cosine`
    similar to a picked one is dropped outright (e5 squeezes cosines, so the soft penalty
    alone does not remove near-duplicates). Items without a vector are never penalised.
    """
    if not fused or k <= 0:
        return []
    n = len(fused)
    top = fused[0].score or 1.0
    rel = np.array([f.score / top for f in fused], np.float64)
    dim = next((len(v) for v in vectors.values()), 0)
    has = np.array([f.key in vectors for f in fused])
    mat = np.zeros((n, dim), np.float32)
    for i, f in enumerate(fused):
        if has[i]:
            mat[i] = vectors[f.key]
    max_sim = np.zeros(n)
    alive = np.ones(n, bool)
    picked: list[int] = []
    while len(picked) < k and alive.any():
        val = np.where(alive, lam * rel - (1 - lam) * max_sim, -np.inf)
        best = int(np.argmax(val))
        picked.append(best)
        alive[best] = False
        if has[best]:
            sims = np.where(has, mat @ mat[best], 0.0)
            max_sim = np.maximum(max_sim, sims)
            alive &= sims < duplicate_cosine
    return [fused[i] for i in picked]
