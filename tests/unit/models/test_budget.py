import threading

import pytest

from footnote.errors import BudgetExceeded
from footnote.models.budget import Budget


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_tokens_and_calls_limits() -> None:
    b = Budget(max_tokens=100, max_calls=3)
    b.charge(60, 1)
    b.check()
    assert b.remaining().tokens == 40 and b.remaining().calls == 2
    b.charge(50, 1)
    with pytest.raises(BudgetExceeded) as e:
        b.check()
    assert e.value.resource == "tokens" and e.value.used == 110 and e.value.limit == 100
    assert b.remaining().tokens == 0


def test_seconds_limit_and_near_limit() -> None:
    clock = Clock()
    b = Budget(max_seconds=10, clock=clock)
    assert not b.near_limit()
    clock.t += 9.5
    assert b.near_limit(0.9) and not b.exceeded()
    clock.t += 1
    with pytest.raises(BudgetExceeded) as e:
        b.check()
    assert e.value.resource == "seconds"


def test_child_charges_parent_and_parent_limits_child() -> None:
    parent = Budget(max_tokens=100)
    child = parent.child(max_tokens=80, max_calls=5)
    child.charge(70, 1)
    assert parent.tokens_used == 70 and parent.calls_used == 1
    assert child.remaining().tokens == 10
    parent.charge(25, 0)
    assert child.remaining().tokens == 5  # tighter of the two
    parent.charge(10, 0)
    with pytest.raises(BudgetExceeded):
        child.check()  # the parent is spent
    assert child.near_limit()


def test_unlimited() -> None:
    b = Budget()
    b.charge(10**9, 10**6)
    b.check()
    r = b.remaining()
    assert r.tokens is None and r.calls is None and r.seconds is None
    assert not b.near_limit()


def test_thread_safe_charging() -> None:
    b = Budget(max_tokens=10**9)
    child = b.child()

    def work() -> None:
        for _ in range(1000):
            child.charge(1, 1)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert b.tokens_used == 8000 and b.calls_used == 8000
