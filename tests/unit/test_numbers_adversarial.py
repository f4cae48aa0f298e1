"""Issue 30, finding 8: an adversarial set of (claim, evidence, should-accept) pairs in English
and Chinese (`tests/data/number_pairs.jsonl`, written before the fix) run through the number
check every citation goes through (`verify.checks.unmatched_numbers`). Before the fix it accepted
46 of the 67 wrong pairs and rejected 22 of the 72 right ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footnote.textnorm import has_cjk
from footnote.verify.checks import unmatched_numbers

PAIRS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "number_pairs.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]


def test_the_set_covers_every_class_both_ways() -> None:
    assert len(PAIRS) >= 100
    classes = {p["class"] for p in PAIRS}
    assert {"e-notation", "scale", "unit-noun", "percent", "minus", "year-range"} <= classes
    assert "zh-numerals" in classes
    assert 20 <= sum(has_cjk(p["claim"] + p["evidence"]) for p in PAIRS) < len(PAIRS) - 50
    for c in classes - {"notation"}:
        assert {p["accept"] for p in PAIRS if p["class"] == c} == {True, False}, c


IDS = [f"{i}-{p['class']}-{'ok' if p['accept'] else 'wrong'}" for i, p in enumerate(PAIRS)]


@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_the_number_check_decides_each_pair(pair: dict[str, object]) -> None:
    missing = unmatched_numbers(str(pair["claim"]), str(pair["evidence"]))
    assert (missing == []) is pair["accept"], missing
