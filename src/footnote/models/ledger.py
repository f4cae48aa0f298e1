"""The usage ledger: one record per model call, in memory, with an optional persistence sink."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from footnote.types import Usage


@dataclass(frozen=True)
class UsageRecord:
    """One model call: who made it, to which model, what it cost and how it ended."""

    run_id: str | None
    role: str
    model: str
    tokens_in: int
    tokens_out: int
    latency_s: float
    cache_hit: bool
    ok: bool
    error: str | None = None
    note: str = ""
    """Free-form remark, e.g. a licence reroute or a judge that had no logprobs."""
    at: float = field(default_factory=time.time)


Sink = Callable[[UsageRecord], None]


class Ledger:
    """Thread-safe list of UsageRecords; `sink` (e.g. the store) sees each record as it is added."""

    def __init__(self, sink: Sink | None = None) -> None:
        self._records: list[UsageRecord] = []
        self._lock = threading.Lock()
        self.sink = sink

    def record(self, rec: UsageRecord) -> None:
        """Add a record and hand it to the sink (a failing sink does not lose the record)."""
        with self._lock:
            self._records.append(rec)
        if self.sink is not None:
            self.sink(rec)

    def records(self, run_id: str | None = None, role: str | None = None) -> list[UsageRecord]:
        """A copy of the records, optionally only one run's and/or one role's."""
        with self._lock:
            recs = list(self._records)
        return [
            r
            for r in recs
            if (run_id is None or r.run_id == run_id) and (role is None or r.role == role)
        ]

    def totals(self, run_id: str | None = None) -> Usage:
        """Summed usage (cache hits count as calls but cost no tokens)."""
        recs = self.records(run_id)
        return Usage(
            tokens_in=sum(r.tokens_in for r in recs if not r.cache_hit),
            tokens_out=sum(r.tokens_out for r in recs if not r.cache_hit),
            model_calls=sum(1 for r in recs if not r.cache_hit),
            seconds=sum(r.latency_s for r in recs),
        )

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)
