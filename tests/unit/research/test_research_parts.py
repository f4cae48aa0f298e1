"""The research job's parts without a network or a model: templates and outline edits, budget
carving, cards cut at exact spans, merge decisions, conflicts vs apparent conflicts, coverage
rules, the review sample, the brief's JSON round trip and its Markdown."""

from __future__ import annotations

import random

import pytest

from footnote.errors import BudgetExceeded, UsageError
from footnote.models.budget import Budget
from footnote.pipelines.research.cards import candidates, card_id, make_card, sentence_spans
from footnote.pipelines.research.checks import coverage, flag_for_review, has_key_number
from footnote.pipelines.research.conflicts import find_conflicts, measures
from footnote.pipelines.research.markdown import brief_markdown
from footnote.pipelines.research.merge import (
    MergeResult,
    apply_merge,
    canonical_url,
    independent_origins,
    merge_sources,
)
from footnote.pipelines.research.outline import (
    TEMPLATE_KINDS,
    choose_template,
    edit_outline,
    load_template,
    plan,
    propose_outline,
)
from footnote.pipelines.research.sources import Passage
from footnote.serialize import brief_from_dict, brief_to_dict, to_plain
from footnote.types import (
    Brief,
    BriefSection,
    ChecklistItem,
    Claim,
    EvidenceCard,
    EvidenceStandard,
    OutlineItem,
    Snapshot,
)


@pytest.mark.parametrize("kind", TEMPLATE_KINDS)
def test_every_template_is_a_six_item_outline(kind: str) -> None:
    data = load_template(kind)
    assert data["kind"] == kind and len(data["items"]) == 6
    outline = propose_outline("What is going on?", kind)
    assert len({i.id for i in outline.items}) == 6 and not outline.confirmed


@pytest.mark.parametrize(
    "question, kind",
    [
        ("Who are the main battery recycling companies in Veldmark?", "players"),
        ("How large is Veldmark's battery recycling market?", "market_size"),
        ("What does the notice require of producers?", "regulation"),
        ("How is recycling capacity changing between 2021 and 2026?", "trends"),
        ("How is bias in word embeddings measured?", "literature_review"),
        ("维尔德马克热泵市场有哪些主要企业？", "players"),
        # seen in the first multi-document run (md-02): a question about papers that asks
        # "how large" was planned as a market-size report ("Market size", "Volumes", "Growth")
        (
            "这几篇论文中的推特（Twitter）数据集各有多大？它们是如何收集和标注的？",
            "literature_review",
        ),
        ("How large are the Twitter datasets in these papers?", "literature_review"),
        ("Which companies do these studies name, and how many?", "literature_review"),
        ("How large is the market for papers and boards in Veldmark?", "market_size"),
        # seen in bench/research_evidence.py (rq-qasper-03, md-05): "这些论文" is "these
        # papers", and "哪些" is only "which" — both were planned as a players report
        ("低资源语言面临哪些困难？这些论文采用了什么方法，效果如何？", "literature_review"),
        ("机器生成的文本能被自动分类器识别到什么程度？哪些防御方法有效？", "literature_review"),
    ],
)
def test_template_chosen_from_the_question(question: str, kind: str) -> None:
    assert choose_template(question) == kind


def test_outline_edits_are_validated() -> None:
    outline = propose_outline("How large is the market?", "market_size")
    one = to_plain(outline.items[0])
    edited = edit_outline(outline, {"items": [one, {**one, "id": "extra", "depends_on": ["size"]}]})
    assert [i.id for i in edited.items] == ["size", "extra"] and edited.question == outline.question
    for bad, why in [({"items": []}, "at least one"), ({"items": [one, one]}, "unique"),
                     ({"items": [{**one, "depends_on": ["nope"]}]}, "unknown items"),
                     ({"items": [{"id": "x"}]}, "invalid outline")]:  # fmt: skip
        with pytest.raises(UsageError, match=why):
            edit_outline(outline, bad)
    assert all(not i.standard.web for i in propose_outline("q?", "players", web=False).items)


def test_plan_carves_the_budget_and_keeps_the_reserve() -> None:
    outline = propose_outline("How large is the market?", "market_size")
    limits = {"tokens": 300_000, "calls": 600, "searches": 60, "fetches": 80, "seconds": 2700.0}
    sqs = plan(outline, limits, reserve=0.3, parallel=2)
    assert len(sqs) == 6 and all(outline.question in sq.queries for sq in sqs)
    b = sqs[0].budget
    assert b["tokens"] == 35_000 and b["searches"] == 7 and b["fetches"] == 9
    assert b["seconds"] == pytest.approx(2700 * 0.7 / 3)  # three waves of two workers
    assert sum(sq.budget["tokens"] for sq in sqs) <= 0.7 * 300_000


def test_budget_refuses_the_search_over_the_limit_and_reports_its_use() -> None:
    run = Budget(1000, 10, 60.0, max_searches=3, max_fetches=2)
    child = run.child(500, max_searches=2)
    for _ in range(2):
        child.check_search()
        child.charge(searches=1)
    with pytest.raises(BudgetExceeded) as e:
        child.check_search()
    assert e.value.resource == "searches"
    run.check_search()  # the run has one left
    run.charge(fetches=2)
    with pytest.raises(BudgetExceeded, match="fetches"):
        run.check_fetch()
    with pytest.raises(BudgetExceeded, match="fetches"):
        run.check()  # a spent resource stops everything
    assert run.used()["searches"] == 2 and run.fraction_used() == ("fetches", 1.0)
    assert child.remaining().fetches == 0  # the parent's limit binds the child


def test_cards_are_cut_at_exact_spans() -> None:
    text = "Title line\n\nThe market was worth USD 1.2 billion in 2023. It grew fast.\n\nSecond para ends here."
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans][1:] == [
        "The market was worth USD 1.2 billion in 2023.",
        "It grew fast.",
        "Second para ends here.",
    ]
    snap = Snapshot("s1", "http://a.example/x", "http://a.example/x", "2025-01-01", "ab", text)
    p = Passage(text, "s1", "A", snap.final_url, snapshot=snap, published_at="2024-01-01")
    (best, *_rest) = candidates("How large is the market?", "market size worth", [p], 3)
    card = make_card(best, "sq-size")
    assert card.snippet == text[card.span[0] : card.span[1]] == best.text  # type: ignore[index]
    assert card.locator == f"http://a.example/x#char={card.span[0]},{card.span[1]}"  # type: ignore[index]
    assert card.id == card_id(p, *card.span)  # type: ignore[misc]
    assert "Title line" not in [c.text for c in candidates("title", "", [p], 5)]  # a heading


def _snap(sid: str, url: str, text: str, date: str | None = None, links: tuple[str, ...] = (),
          canonical: str = "", doc: str | None = None) -> Snapshot:  # fmt: skip
    return Snapshot(sid, url, url, "2025-01-01T00:00:00Z", sid, text, published_at=date,
                    links=links, canonical_url=canonical, doc_number=doc)  # fmt: skip


STORY = ("Korvath Recycling opened its Port Sarrow plant on Tuesday, adding 12,000 tonnes of annual "
         "lithium-ion capacity and making it the largest battery recycler in the country. The plant "
         "employs 140 people and recovers cobalt, nickel and lithium from shredded cells. ") * 3  # fmt: skip


def test_merge_groups_copies_and_finds_the_credited_origin() -> None:
    orig = _snap("a", "http://ledger.example/story.html", STORY, "2024-05-14")
    copy = _snap(
        "b", "http://wire.example/s.html", STORY.replace("Tuesday", "Monday"), "2024-05-14"
    )
    credited = _snap("c", "http://daily.example/k.html", STORY + " A local note.", "2024-05-15",
                     links=("http://ledger.example/story.html",))  # fmt: skip
    other = _snap(
        "d", "http://other.example/x.html", "A completely different text about heat pumps " * 20
    )
    spoof = _snap("e", "http://spoof.example/x.html", "Different words entirely here " * 20,
                  canonical="http://ledger.example/story.html")  # fmt: skip
    r = merge_sources(
        [orig, copy, credited, other, spoof], ["lib1"], threshold=0.5, min_confidence=0.8
    )
    (d,) = r.decisions
    assert set(d.members) == {"a", "b", "c"} and d.origin == "a" and d.decided_by == "code"
    assert r.independence == {"a": "independent", "b": "same_origin", "c": "same_origin",
                              "d": "independent", "e": "independent", "lib1": "independent"}  # fmt: skip
    assert (
        r.source_type["b"] == "reprint" and "e" not in r.same_document
    )  # canonical on another host ignored
    cards = [EvidenceCard(f"k{s}", "x", "x", "l", source_id=s) for s in ("a", "b", "c", "d")]
    merged = apply_merge(cards, r)
    assert independent_origins(merged, r) == 2  # the story once, the heat-pump page once


def test_undecided_copies_are_unconfirmed_and_count_once() -> None:
    a = _snap("a", "http://one.example/s", STORY, "2024-05-14")
    b = _snap("b", "http://two.example/s", STORY.replace("Tuesday", "Monday"), "2024-05-15")
    r = merge_sources([a, b], [], threshold=0.5, min_confidence=0.8)  # no judge: nobody decides
    assert r.decisions[0].decided_by == "analyst" and set(r.independence.values()) == {
        "unconfirmed"
    }
    low = merge_sources(
        [a, b], [], threshold=0.5, min_confidence=0.8, same_story=lambda _x, _y: 0.55
    )
    assert set(low.independence.values()) == {"unconfirmed"} and low.decisions[0].confidence == 0.55
    high = merge_sources(
        [a, b], [], threshold=0.5, min_confidence=0.8, same_story=lambda _x, _y: 0.93
    )
    assert (
        high.independence == {"a": "independent", "b": "same_origin"}
        and high.decisions[0].decided_by == "model"
    )
    cards = apply_merge([EvidenceCard("x", "c", "c", "l", source_id="a"),
                         EvidenceCard("y", "c", "c", "l", source_id="b")], r)  # fmt: skip
    assert independent_origins(cards, r) == 1
    assert (
        canonical_url("HTTP://www.Ledger.example:80/a/index.html?utm_source=x#top")
        == "https://ledger.example/a"
    )


def _card(cid: str, text: str, source: str | None = None) -> EvidenceCard:
    return EvidenceCard(cid, text, text, "l", source_id=source or cid, source_title=cid)


def test_conflicts_after_normalising_and_the_apparent_ones_left_alone() -> None:
    cards = [
        _card("halden", "We estimate the Veldmark battery recycling market at USD 1.2 billion in 2023."),
        _card("orrin", "The lithium-ion battery recycling market in Veldmark was worth VMC 7.6 billion in 2023, about USD 950 million at the 2023 average exchange rate of VMC 8.0 per US dollar."),
        _card("vbra", "Veldmark's recyclers processed 38.5 thousand tonnes of batteries in 2022."),
        _card("vepd", "Veldmark's recyclers processed 38,500 t of batteries in 2022."),
        _card("ledger", "Veldmark's recyclers processed 41,200 tonnes of batteries in 2023."),
        _card("stock", "The installed base of heat pumps in Veldmark reached 212,000 in 2023."),
        _card("flow", "A total of 48,100 heat pumps were installed in Veldmark in 2023."),
        _card("same", "In all, 48.1 thousand heat pumps were installed in Veldmark in 2023."),
    ]  # fmt: skip
    assert [m.unit for m in measures(cards[1])] == [
        "VMC",
        "USD",
    ]  # the rate "VMC 8.0 per US dollar" is no measure
    found = find_conflicts(
        cards, lambda c: c.source_id, lambda c: f"scope of {c.id}", lambda c: ["i1"]
    )
    (conflict,) = found
    assert {v.card_id for v in conflict.values} == {"halden", "orrin"}
    assert {v.text for v in conflict.values} == {"USD 1.2 billion", "USD 950 million"}
    assert all(
        v.scope == f"scope of {v.card_id}" for v in conflict.values
    ) and conflict.item_ids == ("i1",)
    # the same origin never conflicts with itself
    assert not find_conflicts(cards[:2], lambda _c: "one", lambda _c: "", lambda _c: [])


def test_coverage_rules_and_the_review_sample() -> None:
    item = OutlineItem(
        "rules",
        "Rules",
        "asks",
        standard=EvidenceStandard(primary_required=True, min_independent=2),
    )
    cards = {"a": EvidenceCard("a", "x", "x", "l", source_id="s1", source_type="primary", independence="independent"),
             "b": EvidenceCard("b", "x", "x", "l", source_id="s2", source_type="unknown", independence="independent")}  # fmt: skip
    claim = Claim("rules-c1", "The cap is VMC 5,000.", ("a",), verdict="supported")
    merge = MergeResult()
    one = coverage(item, [claim], cards, [], lambda cs: independent_origins(cs, merge), ["done"], 2)
    assert one.state == "uncovered" and "asks for 2" in " ".join(one.reasons)
    both = coverage(item, [claim, Claim("rules-c2", "y", ("b",), verdict="supported")], cards, [],
                    lambda cs: independent_origins(cs, merge), ["budget_tokens"], 2)  # fmt: skip
    assert both.state == "covered" and "budget_tokens" in " ".join(both.reasons)
    no_primary = coverage(item, [Claim("c", "y", ("b",), verdict="supported")], cards, [],
                          lambda cs: 2, ["done"], 2)  # fmt: skip
    assert no_primary.state == "uncovered" and "primary source" in " ".join(no_primary.reasons)
    claims = [
        Claim(f"x-c{i}", "The market grew." if i % 2 else "It was 12% in 2023.", ())
        for i in range(400)
    ]
    flagged = flag_for_review(claims, 0.25, random.Random(3))
    assert all(c.key_number for c in flagged if "12%" in c.text) and not has_key_number(
        "In 2023 it grew."
    )
    rest = [c for c in flagged if not c.key_number]
    assert 0.18 < sum(c.sampled for c in rest) / len(rest) < 0.32
    assert flag_for_review(claims, 0.25, random.Random(3)) == flagged  # reproduced by its seed


def test_brief_json_round_trip_and_markdown_says_what_is_missing() -> None:
    outline = propose_outline("How large is the market?", "market_size")
    card = EvidenceCard("card_1", "c", "It was USD 1.2 billion.", "http://a.example/x#char=0,23",
                        span=(0, 23), source_title="A | Site", independence="unconfirmed")  # fmt: skip
    section = BriefSection("size", "Market size", (Claim("size-c1", "It was USD 1.2 billion.", ("card_1",),
                           verdict="supported", key_number=True),), coverage="covered")  # fmt: skip
    brief = Brief("run_1", outline.question, outline, (section,), (card,), wrapped_up=True,
                  not_covered=("Growth: investigation stopped early: budget_tokens",),
                  checklist=(ChecklistItem("size", "Market size", "covered"),))  # fmt: skip
    data = brief_to_dict(brief)
    assert brief_from_dict(data) == brief
    assert data["sections"][0]["citations"][0] == {
        "id": "card_1", "snippets": ["It was USD 1.2 billion."], "title": "A | Site",
        "metadata": {"url": "", "locator": "http://a.example/x#char=0,23", "published_at": None,
                     "source_type": "unknown", "independence": "unconfirmed", "labels": []},
    }  # fmt: skip
    md = brief_markdown(brief)
    assert md.index("does not cover") < md.index("## Market size")
    assert (
        "budget_tokens" in md and "(check this figure)" in md and "independence unconfirmed" in md
    )


def test_identifiers_and_dates_are_not_figures() -> None:
    notice = _card(
        "n", "Notice VEPD/EPR/2024-017 of 12 March 2024 sets at least 45% by 31 December 2026."
    )
    assert [(m.text, m.year) for m in measures(notice)] == [("45%", 2026)]
    order = _card("o", "Order MO-2023/44 caps the grant at VMC 4,000.")
    assert [(m.text, m.year) for m in measures(order)] == [
        ("VMC 4,000", None)
    ]  # 2023 is the order's number
    undated = [_card("a", "Brannock sells heat pumps through 320 dealers in Veldmark."),
               _card("b", "Aldercrest sells heat pumps through 140 dealers in Veldmark.")]  # fmt: skip
    assert not find_conflicts(
        undated, lambda c: c.id, lambda _c: "", lambda _c: []
    )  # no year, no metric


def test_first_sentences_of_two_blocks_of_one_source_are_both_candidates() -> None:
    """Candidates were keyed by (source, offset): every block's first sentence starts at 0, so
    a library source gave one candidate per offset across all its blocks."""
    from footnote.pipelines.research.cards import candidates
    from footnote.pipelines.research.sources import Passage
    from footnote.types import Block

    texts = [
        "The recycling market grew by 13% in 2023.",
        "The recycling market grew by 11% in 2022.",
    ]
    passages = [
        Passage(
            t,
            "src1",
            "Note",
            "",
            block=Block(f"src1-p1-00000{n}", "src1", "paragraph", t, 1),
            rank=n,
        )
        for n, t in enumerate(texts)
    ]
    found = candidates("How fast did the recycling market grow?", "", passages, 5)
    assert sorted(c.text for c in found) == sorted(texts)
