"""Issue #32 items 2 and 3: origins named in the text, attribution by shared origin, and
conflicts across wording, language, scale words and currencies (a fixture set of cards)."""

from __future__ import annotations

from footnote.pipelines.research.conflicts import find_conflicts, measures, metric_concepts
from footnote.pipelines.research.merge import (
    MergeResult,
    apply_merge,
    independent_origins,
    merge_sources,
    origin_key,
)
from footnote.pipelines.research.origins import origin_mentions, same_origin
from footnote.types import EvidenceCard


def _card(cid: str, text: str, title: str = "") -> EvidenceCard:
    return EvidenceCard(cid, text, text, "l", source_id=cid, source_title=title or "A web page",
                        block_id="b-" + cid)  # fmt: skip


FIXTURE = [
    # one paid report, paraphrased by two outlets and restated by an aggregator
    _card("halden", "We estimate the Veldmark battery recycling market at USD 1.2 billion in 2023.",
          "Halden Research | Battery Outlook 2024"),
    _card("para1", "According to Halden Research, the Veldmark battery recycling market was worth USD 1.2 billion in 2023."),
    _card("para2", "Halden Research estimates that recycling batteries in Veldmark brought in revenues of USD 1.2bn in 2023."),
    _card("aggr", "据Halden Research报告，2023年Veldmark电池回收市场规模为12亿美元。"),
    # a second, independent estimate, paraphrased, and one in another currency with its scope
    _card("orrin", "Revenues from recycling batteries in Veldmark reached USD 0.95bn in 2023, according to Orrin Analytics."),
    _card("zh", "2023年Veldmark动力电池回收市场规模达68亿元，不包括梯次利用。", "中汽研"),
    # tonnage in Chinese (万吨) and English, one with its scope in brackets
    _card("zh2", "据维尔德马克电池回收协会统计，2023年维尔德马克回收处理废旧电池3.85万吨。"),
    _card("zh3", "2023年维尔德马克废旧电池回收量为4.12万吨（含铅酸电池）。"),
    _card("en3", "Veldmark's recyclers processed 38,500 tonnes of waste batteries in 2022."),
    # two sources quoting one figure without saying where it comes from
    _card("blog1", "Veldmark had 212,000 heat pumps in operation in 2023."),
    _card("blog2", "There were 212,000 heat pumps in operation in Veldmark in 2023, a record."),
]  # fmt: skip


def _conflicts(cards: list[EvidenceCard], merge: MergeResult) -> list:  # type: ignore[type-arg]
    return find_conflicts(cards, lambda c: origin_key(c, merge),
                          lambda _c: "", lambda c: [f"item-{c.id}"])  # fmt: skip


def test_chinese_figures_and_metric_words_are_read() -> None:
    (m,) = measures(FIXTURE[5])
    assert (m.value, m.unit, m.year) == (6.8e9, "CNY", 2023)
    assert {"battery", "recycling", "market", "size"} <= metric_concepts(FIXTURE[5].snippet)
    assert (
        metric_concepts("Revenues from recycling batteries")
        == metric_concepts("电池回收收入")
        == {"revenue", "recycling", "battery"}
    )
    fy = _card("fy", "Orrin's battery recycling revenue in Veldmark was EUR 900 million in FY2023.")
    assert [(x.unit, x.year) for x in measures(fy)] == [("EUR", 2023)]


def test_conflict_across_wording_language_and_currency_one_value_per_origin() -> None:
    merge = MergeResult()
    cards = apply_merge(FIXTURE, merge)
    (conflict,) = [c for c in _conflicts(cards, merge) if "market" in c.metric]
    by_card = {v.card_id: v for v in conflict.values}
    # Halden once (its paraphrases and the aggregator are not further values), Orrin, the zh source
    assert len(by_card) == 3 and {"orrin", "zh"} <= set(by_card)
    assert by_card["zh"].unit == "CNY" and by_card["zh"].text == "68亿元"
    assert "不包括梯次利用" in by_card["zh"].scope
    assert "unconverted" in conflict.note and "restatement" in conflict.note
    # attached to every chapter any of its cards serves
    assert {"item-para1", "item-aggr", "item-orrin", "item-zh"} <= set(conflict.item_ids)


def test_chinese_tonnage_conflict_with_scope_and_the_other_year_left_out() -> None:
    merge = MergeResult()
    cards = apply_merge(FIXTURE, merge)
    (conflict,) = [c for c in _conflicts(cards, merge) if "tonne" in c.metric]
    by_card = {v.card_id: v for v in conflict.values}
    assert set(by_card) == {"zh2", "zh3"}  # the English figure is for 2022: another metric
    assert (by_card["zh2"].value, by_card["zh3"].value) == (38500.0, 41200.0)
    assert "含铅酸电池" in by_card["zh3"].scope
    en = _card("en4", "Veldmark's recyclers processed 38,500 tonnes of waste batteries in 2023.")
    (across,) = find_conflicts([en, FIXTURE[7]], lambda c: c.id, lambda _c: "", lambda _c: [])
    assert {v.card_id for v in across.values} == {"en4", "zh3"}  # matched across languages


def test_origin_candidates_come_from_the_text() -> None:
    names = [m.name for m in origin_mentions(
        "中国汽车技术研究中心发布的《动力电池回收白皮书》显示，市场规模为150亿元。")]  # fmt: skip
    assert names == ["中国汽车技术研究中心", "动力电池回收白皮书"]
    assert [m.name for m in origin_mentions("A 2024 report by Orrin Analytics puts it at 3%.")] == [
        "Orrin Analytics"
    ]
    assert [m.kind for m in origin_mentions("Notice VEPD/EPR/2024-017 sets 45% by 2026.")] == [
        "document"
    ]
    assert [
        m.kind for m in origin_mentions("Smith et al. (2019) count 1.2 million sentences.")
    ] == ["citation"]
    assert not origin_mentions("The market grew 12% in 2023, analysts said.")
    agency = origin_mentions("Veldmark Energy Agency reports 41,200 tonnes in 2023.")
    office = origin_mentions("In 2023 Veldmark Statistics Office counted 38,500 tonnes.")
    assert [m.name for m in office] == ["Veldmark Statistics Office"]
    assert not same_origin(agency[0], office[0])  # a shared place name is not one origin
    # seen on the fixture web: dates, sentence openers and document numbers are no named origin
    for text in (
        "He meant notice VEPD/EPR/2024-017, published in March, which sets 45%.",
        "Growth forecasts to 2030 range from 14% to 21% a year.",
        "The official size is USD 4.8 billion according to Notice VEPD/EPR/2024-017.",
    ):
        assert "named" not in [m.kind for m in origin_mentions(text)], text
    assert same_origin(*origin_mentions("According to Orrin, it was 3%."), *origin_mentions(
        "A report by Orrin Analytics puts it at 3%."))  # fmt: skip


def test_paraphrases_and_aggregators_of_one_report_are_one_origin() -> None:
    merge = merge_sources([], [c.source_id for c in FIXTURE], threshold=0.5, min_confidence=0.8)
    cards = {c.id: c for c in apply_merge(FIXTURE, merge)}
    halden = ["halden", "para1", "para2", "aggr"]
    assert all(cards[i].independence == "same_origin" for i in halden[1:])
    assert (
        cards["halden"].independence == "independent" and cards["halden"].source_type == "primary"
    )
    assert all("Halden Research" in cards[i].origin_candidates[0] for i in halden[1:])
    assert all(cards[i].attribution_confidence >= 0.9 for i in halden)  # they quote one figure
    assert "same figure" in cards["para2"].attribution_basis
    assert independent_origins([cards[i] for i in halden], merge) == 1  # never corroboration
    assert independent_origins([cards[i] for i in (*halden, "orrin", "zh")], merge) == 3
    # one figure quoted by two sources that name no origin: undecided, listed, counted once
    assert cards["blog1"].independence == cards["blog2"].independence == "unconfirmed"
    assert [d.members for d in merge.undecided] == [("blog1", "blog2")]
    assert independent_origins([cards["blog1"], cards["blog2"]], merge) == 1
    # a source's own statement says why it counts as independent
    assert cards["zh"].independence == "independent" and cards["zh"].attribution_basis
