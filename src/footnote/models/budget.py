"""Budgets: tokens, model calls and wall clock, enforced (not advised), with child budgets."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from footnote.errors import BudgetExceeded


@dataclass(frozen=True)
class Remaining:
    """What is left of a budget (None: unlimited)."""

    tokens: int | None
    calls: int | None
    seconds: float | None


class Budget:
    """Limits on tokens, calls and seconds since creation; thread-safe.

    `charge` records use and never raises (the work already happened); `check` raises
    `BudgetExceeded` once any limit is reached, here or in a parent. A child budget
    (`budget.child(...)`) charges its parent too, so a sub-task can never overspend the run.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        max_calls: int | None = None,
        max_seconds: float | None = None,
        *,
        parent: Budget | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.max_tokens = max_tokens
        self.max_calls = max_calls
        self.max_seconds = max_seconds
        self.parent = parent
        self._clock: Callable[[], float] = time.monotonic if clock is None else clock
        self._start: float = self._now()
        self._tokens = 0
        self._calls = 0
        self._lock = threading.Lock()

    def _now(self) -> float:
        return float(self._clock())

    @property
    def tokens_used(self) -> int:
        """Tokens charged so far (this budget and its children)."""
        with self._lock:
            return self._tokens

    @property
    def calls_used(self) -> int:
        """Calls charged so far (this budget and its children)."""
        with self._lock:
            return self._calls

    @property
    def seconds_used(self) -> float:
        """Wall-clock seconds since this budget was created."""
        return self._now() - self._start

    def charge(self, tokens: int = 0, calls: int = 0) -> None:
        """Record use here and in every ancestor."""
        with self._lock:
            self._tokens += max(0, int(tokens))
            self._calls += max(0, int(calls))
        if self.parent is not None:
            self.parent.charge(tokens, calls)

    def _exceeded(self) -> tuple[str, float, float] | None:
        with self._lock:
            tokens, calls = self._tokens, self._calls
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return ("tokens", tokens, self.max_tokens)
        if self.max_calls is not None and calls >= self.max_calls:
            return ("calls", calls, self.max_calls)
        if self.max_seconds is not None:
            secs = self.seconds_used
            if secs >= self.max_seconds:
                return ("seconds", secs, self.max_seconds)
        return None

    def check(self) -> None:
        """Raise BudgetExceeded(resource, used, limit) if this budget or an ancestor is spent."""
        hit = self._exceeded()
        if hit is not None:
            raise BudgetExceeded(*hit)
        if self.parent is not None:
            self.parent.check()

    def exceeded(self) -> bool:
        """True when `check` would raise."""
        try:
            self.check()
        except BudgetExceeded:
            return True
        return False

    def remaining(self) -> Remaining:
        """What is left, the tighter of this budget and its ancestors."""
        with self._lock:
            tokens, calls = self._tokens, self._calls
        mine = Remaining(
            None if self.max_tokens is None else max(0, self.max_tokens - tokens),
            None if self.max_calls is None else max(0, self.max_calls - calls),
            None if self.max_seconds is None else max(0.0, self.max_seconds - self.seconds_used),
        )
        if self.parent is None:
            return mine
        up = self.parent.remaining()
        return Remaining(
            _min(mine.tokens, up.tokens), _min(mine.calls, up.calls), _min(mine.seconds, up.seconds)
        )

    def near_limit(self, fraction: float = 0.9) -> bool:
        """True when any limit here or above is at least `fraction` used: time to wrap up."""
        with self._lock:
            tokens, calls = self._tokens, self._calls
        checks = (
            (tokens, self.max_tokens),
            (calls, self.max_calls),
            (self.seconds_used, self.max_seconds),
        )
        if any(limit is not None and used >= fraction * limit for used, limit in checks):
            return True
        return self.parent.near_limit(fraction) if self.parent is not None else False

    def child(
        self,
        max_tokens: int | None = None,
        max_calls: int | None = None,
        max_seconds: float | None = None,
    ) -> Budget:
        """A sub-task budget whose use is also charged here."""
        return Budget(max_tokens, max_calls, max_seconds, parent=self, clock=self._clock)

    def __repr__(self) -> str:
        return (
            f"Budget(tokens={self.tokens_used}/{self.max_tokens}, "
            f"calls={self.calls_used}/{self.max_calls}, "
            f"seconds={self.seconds_used:.1f}/{self.max_seconds})"
        )


_N = TypeVar("_N", int, float)


def _min(a: _N | None, b: _N | None) -> _N | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
