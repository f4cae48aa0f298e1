"""The settings scorer follows the gold README's matching rules."""

from __future__ import annotations

import pytest

from footnote.eval.settings_eval import (
    load_crosschecks,
    load_gold,
    match_crosschecks,
    value_matches,
)


@pytest.mark.parametrize(
    "pred,gold,same",
    [
        ("2e-5", "0.00002", True),
        ("5\\times 10^{-5}", "5e-5", True),
        ("887K tokens", "887,000 tokens", True),
        ("10,000 frames", "10,000 tokens", False),
        ("72 minutes", "1.2 hours", True),
        ("Adam", "Adam optimizer", True),
        ("BERT-base", "BERT base", True),
        ("8:1:1", "80%", False),
        ("three", "3", True),
        ("32", "64", False),
        ("准确率", "准确率（Accuracy）", True),
    ],
)
def test_value_matches(pred: str, gold: str, same: bool) -> None:
    assert value_matches(pred, gold) is same


def test_gold_loads_and_crosscheck_matching_counts_mismatches() -> None:
    gold = load_gold()
    assert len(gold) == 15 and sum(g.lang == "zh" for g in gold) == 2
    cc = load_crosschecks()
    zh = [c for c in cc if c["paper"].endswith("zh-medical-intent.md")]
    found = {zh[0]["paper"]: [{"where": "表 1 (BiLSTM-Attention row, 平均 column)",
                               "stated": {"value": 78.1}, "recomputed": 77.275, "adds_up": False}]}  # fmt: skip
    out = match_crosschecks(found, zh)
    assert out["mismatches_confirmed"] == 1 and out["mismatch_precision"] == 1.0
    assert out["mismatch_recall"] == 1.0 and out["matched_checks"] == 1
