"""Budgets: tokens, model calls, searches, fetches and wall clock, enforced (not advised).

A run's budget hands out child budgets to its sub-tasks (`child`); a child charges its parent
too, so a sub-task can never overspend the run, and a spent parent stops every child.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from footnote.errors import BudgetExceeded

RESOURCES = ("tokens", "calls", "searches", "fetches", "seconds")
"""The resources a budget limits, in the order `BudgetExceeded` reports them."""


@dataclass(frozen=True)
class Remaining:
    """What is left of a budget (None: unlimited)."""

    tokens: int | None
    calls: int | None
    seconds: float | None
    searches: int | None = None
    fetches: int | None = None


class Budget:
    """Limits on tokens, calls, searches, fetches and seconds since creation; thread-safe.

    `charge` records use and never raises (the work already happened); `check` raises
    `BudgetExceeded` once any limit is reached, here or in a parent; `check_search` /
    `check_fetch` also refuse the one search or fetch that would go over its limit.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        max_calls: int | None = None,
        max_seconds: float | None = None,
        *,
        max_searches: int | None = None,
        max_fetches: int | None = None,
        parent: Budget | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.max_tokens = max_tokens
        self.max_calls = max_calls
        self.max_seconds = max_seconds
        self.max_searches = max_searches
        self.max_fetches = max_fetches
        self.parent = parent
        self._clock: Callable[[], float] = time.monotonic if clock is None else clock
        self._start: float = self._now()
        self._used = dict.fromkeys(("tokens", "calls", "searches", "fetches"), 0)
        self._lock = threading.Lock()

    def _now(self) -> float:
        return float(self._clock())

    @property
    def tokens_used(self) -> int:
        """Tokens charged so far (this budget and its children)."""
        with self._lock:
            return self._used["tokens"]

    @property
    def calls_used(self) -> int:
        """Calls charged so far (this budget and its children)."""
        with self._lock:
            return self._used["calls"]

    @property
    def searches_used(self) -> int:
        """Searches charged so far (this budget and its children)."""
        with self._lock:
            return self._used["searches"]

    @property
    def fetches_used(self) -> int:
        """Fetches charged so far (this budget and its children)."""
        with self._lock:
            return self._used["fetches"]

    @property
    def seconds_used(self) -> float:
        """Wall-clock seconds since this budget was created."""
        return self._now() - self._start

    def charge(
        self, tokens: int = 0, calls: int = 0, *, searches: int = 0, fetches: int = 0
    ) -> None:
        """Record use here and in every ancestor."""
        with self._lock:
            self._used["tokens"] += max(0, int(tokens))
            self._used["calls"] += max(0, int(calls))
            self._used["searches"] += max(0, int(searches))
            self._used["fetches"] += max(0, int(fetches))
        if self.parent is not None:
            self.parent.charge(tokens, calls, searches=searches, fetches=fetches)

    def _limits(self) -> dict[str, float | None]:
        return {
            "tokens": self.max_tokens,
            "calls": self.max_calls,
            "searches": self.max_searches,
            "fetches": self.max_fetches,
            "seconds": self.max_seconds,
        }

    def used(self) -> dict[str, float]:
        """Use per resource (seconds included), of this budget."""
        with self._lock:
            out: dict[str, float] = dict(self._used)
        out["seconds"] = round(self.seconds_used, 3)
        return out

    def limits(self) -> dict[str, float | None]:
        """Limit per resource of this budget (None: unlimited here)."""
        return self._limits()

    def _exceeded(self, extra: str | None = None) -> tuple[str, float, float] | None:
        used = self.used()
        for resource, limit in self._limits().items():
            if limit is None:
                continue
            have = used[resource] + (1 if resource == extra else 0)
            over = have > limit if resource == extra else have >= limit
            if over:
                return (resource, used[resource], limit)
        return None

    def check(self) -> None:
        """Raise BudgetExceeded(resource, used, limit) if this budget or an ancestor is spent."""
        self._check(None)

    def check_search(self) -> None:
        """Raise BudgetExceeded unless one more search fits (and nothing else is spent)."""
        self._check("searches")

    def check_fetch(self) -> None:
        """Raise BudgetExceeded unless one more fetch fits (and nothing else is spent)."""
        self._check("fetches")

    def _check(self, extra: str | None) -> None:
        hit = self._exceeded(extra)
        if hit is not None:
            raise BudgetExceeded(*hit)
        if self.parent is not None:
            self.parent._check(extra)

    def exceeded(self) -> bool:
        """True when `check` would raise."""
        try:
            self.check()
        except BudgetExceeded:
            return True
        return False

    def remaining(self) -> Remaining:
        """What is left, the tighter of this budget and its ancestors."""
        used = self.used()
        left = {
            r: None if limit is None else max(0.0, limit - used[r])
            for r, limit in self._limits().items()
        }
        mine = Remaining(
            None if left["tokens"] is None else int(left["tokens"]),
            None if left["calls"] is None else int(left["calls"]),
            left["seconds"],
            None if left["searches"] is None else int(left["searches"]),
            None if left["fetches"] is None else int(left["fetches"]),
        )
        if self.parent is None:
            return mine
        up = self.parent.remaining()
        return Remaining(
            _min(mine.tokens, up.tokens),
            _min(mine.calls, up.calls),
            _min(mine.seconds, up.seconds),
            _min(mine.searches, up.searches),
            _min(mine.fetches, up.fetches),
        )

    def fraction_used(self) -> tuple[str, float]:
        """The most-used resource here or above and its used share of the limit (0 if none)."""
        used = self.used()
        best = ("", 0.0)
        for resource, limit in self._limits().items():
            if limit:
                share = used[resource] / limit
                if share > best[1]:
                    best = (resource, share)
        if self.parent is not None:
            up = self.parent.fraction_used()
            if up[1] > best[1]:
                best = up
        return best

    def near_limit(self, fraction: float = 0.9) -> bool:
        """True when any limit here or above is at least `fraction` used: time to wrap up."""
        return self.fraction_used()[1] >= fraction

    def child(
        self,
        max_tokens: int | None = None,
        max_calls: int | None = None,
        max_seconds: float | None = None,
        *,
        max_searches: int | None = None,
        max_fetches: int | None = None,
    ) -> Budget:
        """A sub-task budget whose use is also charged here."""
        return Budget(
            max_tokens,
            max_calls,
            max_seconds,
            max_searches=max_searches,
            max_fetches=max_fetches,
            parent=self,
            clock=self._clock,
        )

    def __repr__(self) -> str:
        return (
            f"Budget(tokens={self.tokens_used}/{self.max_tokens}, "
            f"calls={self.calls_used}/{self.max_calls}, "
            f"searches={self.searches_used}/{self.max_searches}, "
            f"fetches={self.fetches_used}/{self.max_fetches}, "
            f"seconds={self.seconds_used:.1f}/{self.max_seconds})"
        )


_N = TypeVar("_N", int, float)


def _min(a: _N | None, b: _N | None) -> _N | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
