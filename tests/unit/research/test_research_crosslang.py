"""A research question in another language than its library (#32: "in the question's language
and, where the library is in another language, in that one too"): the question as one query in
the library's language, checked by code, and the papers' figures judged against the question
in both languages. The model is scripted behind the real RoleModel."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from footnote.models.base import Capabilities
from footnote.models.budget import Budget
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.research.closeness import relevant_to
from footnote.pipelines.research.crosslang import in_language, read_library_query, with_query
from footnote.pipelines.research.models import ResearchModels
from footnote.types import EvidenceCard, SubQuestion

QUESTION = "这几篇论文中的推特数据集各有多大？标注一致性如何？"


def writer(reply: Any) -> tuple[Any, FakeChatModel]:
    """The library-query call of a scripted `understand` model (bound for card selection)."""
    text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    fake = FakeChatModel(lambda _m: text, caps=Capabilities(json_schema=True))
    models = ResearchModels(select=RoleModel("understand", fake, ledger=Ledger(), external=False))
    fn = models.library_query_fn(Budget(100_000, 100, 600.0))
    return fn, fake


def test_the_question_becomes_one_query_in_the_librarys_language() -> None:
    fn, fake = writer({"query": "size of the Twitter datasets and  inter-annotator agreement"})
    assert read_library_query(fn, QUESTION, "en") == (
        "size of the Twitter datasets and inter-annotator agreement"
    )
    prompt = fake.calls[0][-1].content
    assert "in English" in prompt and QUESTION in prompt and "<<<QUESTION" in prompt


@pytest.mark.parametrize(
    "reply",
    [
        "the Twitter datasets",  # not JSON
        {"query": "推特数据集的规模"},  # not in the library's language
        {"query": "Twitter datasets\nignore the above"},  # more than one line
        {"query": "Twitter datasets site:https://evil.example/?q=secret"},  # a link
        {"query": "x" * 201},
    ],
)
def test_a_reply_that_is_not_one_query_in_the_librarys_language_is_refused(reply: Any) -> None:
    fn, _ = writer(reply)
    with pytest.raises(ValueError):
        read_library_query(fn, QUESTION, "en")


def test_language_by_script() -> None:
    assert in_language("Twitter dataset size", "en") and not in_language("Twitter 数据集", "en")
    assert in_language("fake reviews, adversarial misspellings（typos）", "en")
    assert in_language("推特数据集的规模", "zh") and not in_language("Twitter datasets", "zh")


def test_the_query_is_added_once_to_every_sub_question() -> None:
    plan = [SubQuestion("sq-a", "a", "A?", ("数据集", "q")), SubQuestion("sq-b", "b", "B?", ("q",))]
    got = with_query(plan, "Twitter datasets")
    assert [sq.queries for sq in got] == [
        ("数据集", "q", "Twitter datasets"),
        ("q", "Twitter datasets"),
    ]
    assert with_query(got, "Twitter datasets") == got and with_query(plan, "") == plan


def card(snippet: str) -> EvidenceCard:
    return EvidenceCard(f"card_{abs(hash(snippet))}", snippet, snippet, "p. 1")


def test_a_figure_is_relevant_when_near_the_question_in_either_language() -> None:
    """An English sentence sits lower against the Chinese question than against its English
    rendering: the nearer of the two decides."""
    scores = {QUESTION: {"kappa is .83": 0.78, "Paris is big": 0.70},
              "Twitter dataset agreement": {"kappa is .83": 0.81, "Paris is big": 0.72}}  # fmt: skip

    def closeness(question: str, sentences: Sequence[str], labels: tuple[str, ...]) -> list[float]:
        return [scores[question][s] for s in sentences]

    cards = [card("kappa is .83"), card("Paris is big")]
    notes: list[str] = []
    assert relevant_to((QUESTION,), closeness, 0.79, notes)(cards) == [False, False]
    both = relevant_to((QUESTION, "Twitter dataset agreement"), closeness, 0.79, notes)
    assert both(cards) == [True, False]
    assert relevant_to((QUESTION, ""), closeness, 0.79, notes)(cards) == [False, False]
