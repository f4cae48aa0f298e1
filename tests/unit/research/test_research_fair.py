"""The rounds that share the evidence between chapters (`fair`)."""

from __future__ import annotations

from footnote.models.budget import Budget
from footnote.pipelines.research.fair import (
    ROUNDS,
    child_budget,
    grown,
    grows,
    later,
    remaining,
    round_note,
    target,
)


def test_each_round_has_its_share_and_the_last_one_all_a_chapter_wants() -> None:
    assert [target(36, r) for r in range(ROUNDS)] == [3, 6, 36]
    assert [target(2, r) for r in range(ROUNDS)] == [2, 2, 2]
    assert [target(5, r) for r in range(ROUNDS)] == [3, 5, 5]


def test_only_a_chapter_that_found_its_whole_share_and_wants_more_grows() -> None:
    assert grows(3, 36, 0, "done") and grows(6, 36, 1, "done")
    assert not grows(2, 36, 0, "done")  # the library had no more for it
    assert not grows(3, 36, 0, "budget_searches")  # its budget stopped it
    assert not grows(2, 2, 0, "done") and not grows(36, 36, 2, "done")  # it has all it wants
    assert later({"grow": True, "round": 0}, 1) and not later({"grow": True, "round": 1}, 1)
    assert not later({"round": 0}, 1)
    assert round_note(1, ["sq-a"]).startswith("turn 2 of 3: sq-a")


def test_a_later_round_spends_what_is_left_of_the_budget() -> None:
    left = remaining({"tokens": 1000, "searches": 7, "seconds": 60.0},
                     {"tokens": 400, "searches": 9, "seconds": 12.5, "calls": 3})  # fmt: skip
    assert left == {"tokens": 600.0, "searches": 0.0, "seconds": 47.5}
    run = Budget(10_000, max_searches=50)
    child = child_budget(run, left)
    assert child.limits()["searches"] == 0 and child.exceeded()
    assert child.limits()["calls"] is None and child.parent is run


def test_a_grown_record_adds_up_both_rounds() -> None:
    first = {"stop_reason": "done", "card_ids": ["a", "b"], "used": {"searches": 1, "seconds": 2.0},
             "notes": ["n1"], "searches": 1, "fetches": 0, "refused": [], "failed": ["f"],
             "queries": ["q"], "paywalled": [{"url": "u", "status": "402"}], "want": 9,
             "grow": True, "round": 0}  # fmt: skip
    more = {"stop_reason": "budget_searches", "card_ids": ["c"], "used": {"searches": 2},
            "notes": ["n2"], "searches": 2, "fetches": 1, "refused": ["r"], "failed": ["f"],
            "queries": ["q", "q2"], "paywalled": [{"url": "u", "status": "402"}]}  # fmt: skip
    out = grown(first, more)
    assert out["card_ids"] == ["a", "b", "c"] and out["used"] == {"searches": 3, "seconds": 2.0}
    assert out["searches"] == 3 and out["fetches"] == 1 and out["notes"] == ["n1", "n2"]
    assert out["refused"] == ["r"] and out["failed"] == ["f"] and out["queries"] == ["q", "q2"]
    assert out["paywalled"] == [{"url": "u", "status": "402"}]
    assert out["stop_reason"] == "budget_searches" and "grow" not in out and out["want"] == 9
