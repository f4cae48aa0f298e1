"""An honest checklist and honest checks (#32 items 1 and 6, #30 finding 3): Chinese questions
are segmented into words; key figures are quantities, not figure or equation references; the
review sample is random per brief and stratified by chapter; "not searched (budget)" is not
"searched, nothing found"; without a judge a model-written claim is at most weak and one that
flips a negation is dropped, and every rendering of the brief says the judge was not used."""

from __future__ import annotations

import random

import pytest

from footnote.pipelines.research.checks import (
    JUDGE_NOT_USED,
    check_section,
    coverage,
    flag_for_review,
    has_key_number,
)
from footnote.pipelines.research.markdown import brief_markdown
from footnote.pipelines.research.outline import plan, propose_outline
from footnote.types import Brief, BriefSection, Claim, EvidenceCard, OutlineItem
from footnote.verify import Thresholds
from footnote.verify.draft import Draft, DraftSentence


def test_a_chinese_subject_is_words_not_characters() -> None:
    outline = propose_outline("东南亚动力电池回收市场有哪些主要企业？", "players")
    sub_questions = plan(outline, {"tokens": 6000}, reserve=0.3, parallel=1)
    first = sub_questions[0].queries[0]
    assert first.startswith("东南亚 动力电池 回收 市场")
    assert "东 南" not in first and "哪些" not in first


@pytest.mark.parametrize(
    "text, key",
    [
        ("The scheme is described in detail (see Fig. 1).", False),
        ("The loss is defined in (Equation 1).", False),
        ("Three research directions stand out.", False),
        ("As Table 2 shows, the corpus is balanced.", False),
        ("Section 3.2 describes the cleaning step.", False),
        ("详见第3章和图1。", False),
        ("In 2023 the market grew.", False),
        ("It grew 12% in 2023.", True),
        ("The corpus has 1.2 million documents.", True),
        ("Three million units were sold.", True),
        ("市场规模为12亿元。", True),
        ("The model uses 3 layers.", True),
    ],
)
def test_key_figures_are_quantities_not_references(text: str, key: bool) -> None:
    assert has_key_number(text) is key


def _chapter(item: str, n: int) -> list[Claim]:
    return [
        Claim(f"{item}-c{i}", f"The market in region {item} grew steadily.", ()) for i in range(n)
    ]


def test_the_review_sample_is_random_per_brief_and_stratified_by_chapter() -> None:
    chapters = {"a": 20, "b": 10, "c": 4, "d": 2}

    def sample(seed: int) -> dict[str, set[str]]:
        return {item: {c.id for c in flag_for_review(_chapter(item, n), 0.25,
                                                     random.Random(f"{seed}:{item}")) if c.sampled}
                for item, n in chapters.items()}  # fmt: skip

    assert sample(7) == sample(7)  # a logged seed reproduces the sample
    draws = [sample(seed) for seed in range(200)]
    assert len({frozenset(d["a"]) for d in draws}) > 50  # a different sample per brief
    for item, n in chapters.items():
        counts = [len(d[item]) for d in draws]
        assert all(
            int(0.25 * n) <= k <= int(0.25 * n) + 1 for k in counts
        )  # each chapter its share
        assert abs(sum(counts) / len(counts) - 0.25 * n) < 0.15 * n + 0.1
    # every position of a chapter is drawn sometime (the id no longer decides)
    assert set().union(*(d["b"] for d in draws)) == {f"b-c{i}" for i in range(10)}
    # key figures are flagged, never part of the sample
    claims = [Claim("k", "It was 12% in 2023.", ()), *_chapter("e", 3)]
    mixed = flag_for_review(claims, 1.0, random.Random(1))
    assert mixed[0].key_number and not mixed[0].sampled and all(c.sampled for c in mixed[1:])


def test_not_searched_is_not_searched_nothing_found() -> None:
    item = OutlineItem("growth", "Growth", "How fast?")
    skipped = coverage(item, [], {}, [], lambda _cs: 0, ["budget_tokens"], 0, searched=False)
    empty = coverage(item, [], {}, [], lambda _cs: 0, ["done"], 0,
                     queries=("veldmark recycling growth", "How fast?"))  # fmt: skip
    assert "not searched (budget)" in skipped.reasons
    assert not any("nothing found" in r for r in skipped.reasons)
    (found,) = [r for r in empty.reasons if r.startswith("searched, nothing found")]
    assert "veldmark recycling growth" in found and "How fast?" in found


CARD = EvidenceCard(
    "card_a", "c", "The market is expected to reach $23 billion by 2030.", "p. 1",
    source_id="s1", source_title="Report",
)  # fmt: skip
ITEM = OutlineItem("size", "Market size", "How large?")


def _check(text: str, judge: object = None) -> tuple[list[Claim], list[dict[str, object]]]:
    draft = Draft([DraftSentence(text, ["card_a"])])
    out = check_section(ITEM, draft, ["claim"], [CARD], judge=judge, thresholds=Thresholds())  # type: ignore[arg-type]
    return out.claims, out.dropped


def test_without_a_judge_a_model_written_claim_is_at_most_weak_and_a_flipped_negation_dropped() -> (
    None
):
    kept, _ = _check("The market is expected to reach $23 billion by 2030.")
    assert kept[0].verdict == "supported"  # the card's own words
    kept, _ = _check("By 2030 the market is expected to reach $23 billion.")
    assert kept[0].verdict == "weak"
    kept, dropped = _check("The market is not expected to reach $23 billion by 2030.")
    assert not kept and any("polarity" in k for k in dropped[0]["reasons"])  # type: ignore[attr-defined]
    kept, _ = _check("市场预计到2030年不会达到$23 billion。")
    assert not kept
    # with a judge, the judge decides
    kept, _ = _check("By 2030 the market is expected to reach $23 billion.", lambda _c, _p: 0.97)
    assert kept[0].verdict == "supported"


def test_markdown_says_where_the_judge_was_not_used() -> None:
    outline = propose_outline("How large is the market?", "market_size")
    claim = Claim("size-c1", "The market is expected to reach $23 billion by 2030.", ("card_a",),
                  verdict="supported")  # fmt: skip
    sections = (
        BriefSection("size", "Market size", (claim,), coverage="covered",
                     notes=(f"{JUDGE_NOT_USED}: budget exceeded: tokens used 10 of 5",)),
        BriefSection("growth", "Growth", (), coverage="uncovered", notes=("card x left out",)),
    )  # fmt: skip
    md = brief_markdown(Brief("run_1", outline.question, outline, sections, (CARD,)))
    assert "**Judge not used** for: Market size." in md
    size = md[md.index("## Market size") : md.index("## Growth")]
    growth = md[md.index("## Growth") : md.index("## Checklist")]
    assert JUDGE_NOT_USED in size and JUDGE_NOT_USED not in growth
