"""A run's trace: spans for every model call, retrieval, check and verdict, sent to a sink."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from footnote.store.records import Span

SpanSink = Callable[[Span], None]


def new_run_id() -> str:
    """A fresh, unguessable run id."""
    return "run_" + uuid.uuid4().hex[:20]


class Trace:
    """Collects spans of one run (and forwards each to the sink, e.g. the run store)."""

    def __init__(self, run_id: str | None = None, sink: SpanSink | None = None) -> None:
        self.run_id = run_id or new_run_id()
        self.sink = sink
        self.spans: list[Span] = []

    def add(
        self, kind: str, name: str, data: dict[str, Any], started: float, duration: float
    ) -> None:
        """Record a finished span."""
        span = Span(self.run_id, len(self.spans), kind, name, data, started, duration)
        self.spans.append(span)
        if self.sink is not None:
            self.sink(span)

    @contextmanager
    def span(self, kind: str, name: str, **data: Any) -> Iterator[dict[str, Any]]:
        """Time a block; the yielded dict can be filled with results before it closes."""
        started = time.time()
        t0 = time.perf_counter()
        try:
            yield data
        except BaseException as exc:
            data["error"] = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.add(kind, name, data, started, time.perf_counter() - t0)
