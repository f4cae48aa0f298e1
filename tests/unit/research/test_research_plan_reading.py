"""The planner that reads (#32): the model's outline for a free question, validated by the same
rules as the analyst's edits, with the template as the fallback that says why; and the "what is
still missing" reply, validated before any query it names is searched. The model is scripted
behind the real RoleModel (its budget, licence gate and ledger)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from footnote.errors import UsageError
from footnote.models.base import Capabilities
from footnote.models.budget import Budget
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.research.models import ResearchModels
from footnote.pipelines.research.outline import (
    MAX_OUTLINE_ITEMS,
    edit_outline,
    propose_outline,
)
from footnote.pipelines.research.planner import (
    MAX_ROUNDS,
    plan_outline,
    read_missing,
    rounds_for,
)
from footnote.types import EvidenceCard

COMPOUND_Q = "Who are the main battery recyclers in Veldmark, and where is regulation heading?"
ZH_Q = "维尔德马克的电池回收企业有哪些，监管将走向何方？"


def item(id_: str, asks: str, depends_on: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    return {"id": id_, "title": id_.title(), "asks": asks, "terms": "", "depends_on": list(depends_on),
            **extra}  # fmt: skip


COMPOUND_REPLY = {
    "kinds": ["players", "regulation"],
    "items": [
        item("leaders", "Which companies recycle batteries in Veldmark?"),
        item("rules", "Which battery recycling rules apply now?"),
        item("outlook", "Where is battery regulation heading?", ["rules"]),
    ],
}


def planner(reply: Any, budget: Budget | None = None) -> tuple[Any, FakeChatModel]:
    """The plan call of a scripted `understand` model behind the real RoleModel."""
    text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    fake = FakeChatModel(lambda _m: text, caps=Capabilities(json_schema=True))
    models = ResearchModels(planner=RoleModel("understand", fake, ledger=Ledger(), external=False))
    fn = models.plan_fn(budget or Budget(100_000, 100, 600.0))
    return fn, fake


def test_a_compound_question_gets_the_models_outline_combining_report_kinds() -> None:
    fn, fake = planner(COMPOUND_REPLY)
    planned = plan_outline(COMPOUND_Q, fn)
    assert planned.by == "model", planned.note
    assert planned.outline.template == "players+regulation"
    assert [i.id for i in planned.outline.items] == ["leaders", "rules", "outlook"]
    assert planned.outline.items[2].depends_on == ("rules",)
    # today's template is one kind only (`players`) for this compound question
    assert propose_outline(COMPOUND_Q).template == "players"
    prompt = fake.calls[0][-1].content
    assert "market_size" in prompt and "regulation" in prompt and COMPOUND_Q in prompt


def test_the_prompt_is_in_the_questions_language_and_so_must_the_outline_be() -> None:
    zh_reply = {"kinds": ["players"], "items": [item("qiye", "维尔德马克有哪些电池回收企业？")]}
    fn, fake = planner(zh_reply)
    planned = plan_outline(ZH_Q, fn)
    assert planned.by == "model", planned.note
    assert "只回复 JSON" in fake.calls[0][-1].content
    fn, _ = planner(COMPOUND_REPLY)  # English sections for a Chinese question: refused
    refused = plan_outline(ZH_Q, fn)
    assert refused.by == "template" and "language" in refused.note


BAD_REPLIES = {
    "not json": "I would plan three sections.",
    "duplicate ids": {"kinds": [], "items": [item("a", "What is a?"), item("a", "What is b?")]},
    "unknown dependency": {"kinds": [], "items": [item("a", "What is a?", ["zzz"])]},
    "cycle": {
        "kinds": [],
        "items": [item("a", "What is a?", ["b"]), item("b", "What is b?", ["a"])],
    },
    "too many": {"kinds": [], "items": [item(f"s{n}", f"What is {n}?") for n in range(9)]},
    "no items": {"kinds": ["players"], "items": []},
    "bad id": {"kinds": [], "items": [item("A b/c", "What is a?")]},
    "unknown kind": {"kinds": ["horoscope"], "items": [item("a", "What is a?")]},
}


@pytest.mark.parametrize("name", list(BAD_REPLIES))
def test_an_invalid_outline_falls_back_to_the_template_and_says_why(name: str) -> None:
    fn, _ = planner(BAD_REPLIES[name])
    planned = plan_outline(COMPOUND_Q, fn)
    assert planned.by == "template"
    assert planned.outline == propose_outline(COMPOUND_Q)
    assert "invalid" in planned.note


def test_a_budget_that_refuses_the_planner_call_falls_back_to_the_template() -> None:
    fn, fake = planner(COMPOUND_REPLY, Budget(20, 10, 60.0))
    planned = plan_outline(COMPOUND_Q, fn)
    assert planned.by == "template" and "budget refused" in planned.note
    assert fake.calls == []  # refused before it was made


def test_a_named_template_or_no_planner_model_is_todays_outline() -> None:
    fn, fake = planner(COMPOUND_REPLY)
    assert plan_outline(COMPOUND_Q, fn, template="trends").outline.template == "trends"
    assert fake.calls == []
    assert plan_outline(COMPOUND_Q, None).outline == propose_outline(COMPOUND_Q)


def test_edits_are_held_to_the_same_rules_cycles_and_size_included() -> None:
    outline = propose_outline(COMPOUND_Q)
    items = [item("a", "What is a?", ["b"]), item("b", "What is b?", ["a"])]
    with pytest.raises(UsageError, match="cycle"):
        edit_outline(outline, {"items": items})
    many = [item(f"s{n}", f"What is {n}?") for n in range(MAX_OUTLINE_ITEMS + 1)]
    with pytest.raises(UsageError, match="at most"):
        edit_outline(outline, {"items": many})
    chain = [
        item("a", "What is a?", ["b"]),
        item("b", "What is b?", ["c"]),
        item("c", "What is c?"),
    ]
    assert [i.id for i in edit_outline(outline, {"items": chain}).items] == ["a", "b", "c"]


def reader(reply: Any) -> tuple[Any, FakeChatModel]:
    text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    fake = FakeChatModel(lambda _m: text, caps=Capabilities(json_schema=True))
    models = ResearchModels(planner=RoleModel("understand", fake, ledger=Ledger(), external=False))
    fn = models.missing_fn(Budget(100_000, 100, 600.0))
    return fn, fake


KNOWN = EvidenceCard(
    "card_k", "Korvath runs a plant.", "Korvath runs a 20,000-tonne plant.", "p. 1"
)


def test_the_missing_call_shows_findings_and_known_claims_and_asks_for_the_library_language() -> (
    None
):
    fn, fake = reader({"missing": ["capacity"], "next_query": "Korvath capacity",
                       "library_query": "Korvath 产能"})  # fmt: skip
    got = read_missing(fn, "How large is each plant?", ["Lumen Cycle shreds batteries."], [KNOWN],
                       ["Korvath plant"], lang="en", library_lang="zh", labels=())  # fmt: skip
    assert got.missing == ["capacity"] and got.next_query == "Korvath capacity"
    assert got.library_query == "Korvath 产能"
    prompt = fake.calls[0][-1].content
    assert "Lumen Cycle shreds batteries." in prompt and KNOWN.snippet in prompt
    assert "Korvath plant" in prompt and "The library is in Chinese" in prompt
    fn, fake = reader({"missing": [], "next_query": ""})
    read_missing(fn, "q?", [], [], [], lang="en", library_lang="en", labels=())
    assert 'library_query", the same' not in fake.calls[0][-1].content


@pytest.mark.parametrize(
    "reply",
    [
        "nothing is missing",
        {"missing": ["x"], "next_query": ""},
        {"missing": ["x"], "next_query": "see https://evil.example/?q=secret"},
        {"missing": ["x"], "next_query": "ok", "library_query": "mail a@b.example"},
        {"missing": ["x"], "next_query": "q" * 201},
    ],
)
def test_an_invalid_missing_reply_is_refused(reply: Any) -> None:
    fn, _ = reader(reply)
    with pytest.raises(ValueError):
        read_missing(fn, "q?", [], [], [], lang="en", library_lang=None, labels=())


def test_rounds_are_what_the_budget_pays_for_at_the_first_rounds_cost() -> None:
    limits: dict[str, float | None] = {"tokens": 9000, "calls": 7, "searches": 4, "seconds": None}
    used = {"tokens": 1000.0, "calls": 2.0, "searches": 1.0, "seconds": 3.0}
    assert rounds_for(limits, used) == 3  # calls: 7 // 2
    assert rounds_for({"tokens": 10**9}, {"tokens": 1.0}) == MAX_ROUNDS
    assert rounds_for({"tokens": 10}, {"tokens": 100.0}) == 1


def test_a_section_that_asks_what_an_earlier_one_asks_is_dropped() -> None:
    """Seen in the first multi-document run (md-01, embedded model): the planner proposed
    "size", "trends" and "literature_review", the first and the last asking the same question
    word for word; all three were researched and marked covered. The repeat is dropped and
    what depended on it depends on the section it repeated."""
    reply = {
        "kinds": ["literature_review"],
        "items": [
            item("size", "What methods are used to build and evaluate word embeddings here?"),
            item("trends", "How much does the size of the training data matter?", ["size"]),
            item("literature_review",
                 "What methods are used to build and evaluate word embeddings here?",
                 ["size", "trends"]),
            item("limits", "What limits do they report?", ["literature_review"]),
        ],
    }  # fmt: skip
    fn, _ = planner(reply)
    planned = plan_outline("How are word embeddings built and evaluated in these papers?", fn)
    assert planned.by == "model", planned.note
    assert [i.id for i in planned.outline.items] == ["size", "trends", "limits"]
    assert planned.outline.items[2].depends_on == ("size",)


def test_a_section_titled_with_the_question_gets_a_short_title_from_what_it_asks() -> None:
    """Seen in the multi-document run at f0a8071: both of the model's sections were titled with
    a clause of the question, cut at 120 characters mid-phrase ("… in these")."""
    q = ("How are word embeddings built and evaluated for languages other than English (Yorùbá, "
         "Twi, Turkish, Portuguese) in these papers, and how much do the size and quality of "
         "the training data matter?")  # fmt: skip
    reply = {"kinds": ["literature_review"], "items": [
        {"id": "size", "title": q[:120], "terms": "", "depends_on": [],
         "asks": "What are the methods used to build and evaluate word embeddings for these "
                 "languages?"},
        {"id": "data", "title": "Training data", "terms": "", "depends_on": [],
         "asks": "How much do the size and quality of the training data matter?"},
    ]}  # fmt: skip
    fn, _ = planner(reply)
    planned = plan_outline(q, fn)
    assert planned.by == "model", planned.note
    first, second = planned.outline.items
    assert first.title == "Methods used to build and evaluate word embeddings"
    assert first.asks.startswith("What are the methods")  # what it asks is kept whole
    assert second.title == "Training data"  # a title of its own stays


def test_a_question_about_papers_gets_no_market_outline_from_the_model() -> None:
    """Seen in the multi-document run at f0a8071 (md-04): "What do these papers gain by
    fine-tuning pre-trained BERT-base …?" was planned by the model as "What is the current
    market size …", "What are the recent trends …" (kinds market_size+trends+literature_review).
    A question about papers is a literature review: such an outline is invalid, and the
    literature-review template stands in, saying why."""
    q = ("What do these papers gain by fine-tuning pre-trained BERT-base on their task, against "
         "which baselines, and why not BERT-large?")  # fmt: skip
    market = {"kinds": ["market_size", "trends", "literature_review"], "items": [
        item("size", "What is the current market size of fine-tuned BERT models?"),
        item("trends", "What are the recent trends in fine-tuning BERT?"),
    ]}  # fmt: skip
    fn, _ = planner(market)
    planned = plan_outline(q, fn)
    assert planned.by == "template" and planned.outline.template == "literature_review"
    assert "about papers" in planned.note
    review = {"kinds": ["literature_review"], "items": [
        item("gains", "What do the papers gain by fine-tuning BERT-base?"),
        item("baselines", "Against which baselines do they compare?"),
    ]}  # fmt: skip
    fn, _ = planner(review)
    assert plan_outline(q, fn).by == "model"
