"""A brief of the length asked: chapters grow with the evidence and the budget (no fixed
sentence cap), are written in bounded calls a small model can take, stay short when the
evidence is short (and say so), and the page count is measured."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest

from footnote.config import ResearchSettings
from footnote.eval.research_metrics import score_brief, summarise
from footnote.models.base import Capabilities, Message
from footnote.models.budget import Budget
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.research.checks import check_section
from footnote.pipelines.research.investigate import wanted
from footnote.pipelines.research.length import (
    CJK_PER_PAGE,
    SENTENCES_PER_PAGE,
    WORDS_PER_PAGE,
    cards_wanted,
    chapter_sentences,
    estimate_pages,
)
from footnote.pipelines.research.markdown import brief_markdown
from footnote.pipelines.research.models import ResearchModels
from footnote.pipelines.research.outline import plan, propose_outline
from footnote.pipelines.research.synthesise import GROUP_CARDS, write_with_model
from footnote.serialize import brief_to_dict
from footnote.types import Brief, BriefSection, ChecklistItem, Claim, EvidenceCard
from footnote.verify import Thresholds

_CARD = re.compile(r"^\[(C\d+)\] \((.*?), ([\d-]+|undated)\) (.*)$", re.M)
OUTLINE = propose_outline("How large is Veldmark's battery recycling market?", "market_size")
ITEM = OUTLINE.items[0]
PLANTS = ["Port Sarrow", "Kell Bay", "Aldmoor", "Drennick", "Halvik", "Ostry", "Brael", "Cairn",
          "Dunmore", "Elsby", "Farrow", "Gilden", "Harrow", "Iverly", "Jessop", "Kinloch",
          "Larkin", "Morrow", "Nessby", "Orrin", "Pellam", "Quarry", "Rusk", "Selby", "Tarn",
          "Ulver", "Vane", "Wexley", "Yarrow", "Zenby"]  # fmt: skip


def _cards(n: int) -> list[EvidenceCard]:
    out = []
    for i in range(n):
        text = (f"The {PLANTS[i]} plant recycled {1000 + 37 * i} tonnes of lithium-ion batteries "
                f"in Veldmark in 2024.")  # fmt: skip
        out.append(EvidenceCard(f"card_{i:02d}", text, text, f"p. {i + 1}", span=(0, len(text)),
                                source_id=f"src{i % 7}", source_title=f"Report {i % 7}"))  # fmt: skip
    return out


class Writer:
    """The fake `compose` model: restates every card it is shown, and `pad` claims more."""

    def __init__(self, pad: int = 0) -> None:
        self.calls: list[tuple[int, int]] = []  # (cards shown, maxItems asked)
        self.pad = pad

    def __call__(self, messages: Sequence[Message]) -> str:
        shown = [(m[1], m[4]) for m in _CARD.finditer(messages[-1].content)]
        most = int(re.search(r"Write \d+ to (\d+) short", messages[-1].content).group(1))  # type: ignore[union-attr]
        self.calls.append((len(shown), most))
        claims = [{"text": snippet, "cards": [label]} for label, snippet in shown]
        claims += [{"text": f"Padding sentence number {k} about recycling.", "cards": ["C1"]}
                   for k in range(self.pad)]  # fmt: skip
        return json.dumps({"claims": claims})


def _write_fn(script: Writer, budget: Budget):  # type: ignore[no-untyped-def]
    fake = FakeChatModel(script, name="fake:compose", caps=Capabilities(json_schema=True))
    models = ResearchModels(writer=RoleModel("compose", fake, ledger=Ledger(), external=False))
    return models.write_fn(budget)


def _default_child() -> Budget:
    """A sub-question's budget as the default run plans it (six chapters)."""
    s = ResearchSettings()
    run = Budget(s.budget_tokens, s.budget_calls, s.budget_minutes * 60,
                 max_searches=s.budget_searches, max_fetches=s.budget_fetches)  # fmt: skip
    sq = plan(OUTLINE, run.limits(), reserve=s.reserve_fraction, parallel=1)[0]
    return run.child(int(sq.budget["tokens"]), int(sq.budget["calls"]), sq.budget["seconds"],
                     max_searches=int(sq.budget["searches"]), max_fetches=int(sq.budget["fetches"]))  # fmt: skip


def test_thirty_cards_at_the_default_budget_make_a_long_chapter_in_bounded_calls() -> None:
    child = _default_child()
    assert wanted(ResearchSettings(), child) >= 30  # the sub-question gathers that many
    cards = _cards(30)
    script = Writer()
    draft = write_with_model(OUTLINE, ITEM, cards, _write_fn(script, Budget(300_000)))
    assert len(script.calls) == 5 and all(shown <= GROUP_CARDS for shown, _ in script.calls)
    assert len(draft.sentences) == 30 > 6
    assert {c for s in draft.sentences for c in s.cites} == {c.id for c in cards}
    checked = check_section(ITEM, draft, ["claim"] * len(draft.sentences), cards, judge=None,
                            thresholds=Thresholds())  # fmt: skip
    assert len(checked.claims) == 30 and not checked.fabricated
    assert all(set(c.card_ids) <= {x.id for x in cards} for c in checked.claims)


def test_three_cards_stay_three_sentences_at_most_and_the_chapter_says_what_it_lacks() -> None:
    cards = _cards(3)
    script = Writer(pad=5)  # the model tries to pad the chapter
    draft = write_with_model(OUTLINE, ITEM, cards, _write_fn(script, Budget(300_000)))
    assert script.calls == [(3, 3)] and len(draft.sentences) == 3
    assert not any("Padding" in s.text for s in draft.sentences)
    section = BriefSection(ITEM.id, ITEM.title, tuple(Claim(f"c{i}", s.text, tuple(s.cites),
                           verdict="supported") for i, s in enumerate(draft.sentences)),
                           bound_cards=tuple(c.id for c in cards), coverage="uncovered")  # fmt: skip
    reason = "1 independent source(s); the standard asks for 2"
    brief = Brief("r", OUTLINE.question, OUTLINE, (section,), tuple(cards),
                  checklist=(ChecklistItem(ITEM.id, ITEM.title, "uncovered", reasons=(reason,)),))  # fmt: skip
    md = brief_markdown(brief)
    assert "written from 3 evidence cards" in md and f"Not covered: {reason}" in md


def test_a_refused_later_call_leaves_its_group_to_the_cards_own_sentences() -> None:
    cards = _cards(12)
    script = Writer()
    write = _write_fn(script, Budget(300_000))
    n = 0

    def once(messages: list[Message], schema: dict[str, object], labels: tuple[str, ...]) -> str:
        nonlocal n
        n += 1
        if n == 2:
            raise ValueError("invalid reply")
        return write(messages, schema, labels)  # type: ignore[misc]

    notes: list[str] = []
    draft = write_with_model(OUTLINE, ITEM, cards, once, notes=notes)
    assert len(draft.sentences) == 12 and notes and "cards 7–12" in notes[0]
    assert [s.quote for s in draft.sentences[6:]] == [c.snippet for c in cards[6:]]


def test_a_smaller_budget_or_target_gathers_fewer_cards() -> None:
    s = ResearchSettings()
    default = wanted(s, _default_child())
    run = Budget(60_000)
    small = run.child(int(60_000 * 0.7 / 6))
    assert wanted(s, small) < default / 3  # the synthesis reserve pays for fewer sentences
    assert wanted(ResearchSettings(target_pages=2), _default_child()) < default / 3
    assert wanted(ResearchSettings(cards_per_question=4), _default_child()) == 4
    assert cards_wanted(s, {"tokens": None}) >= 30  # unlimited: the page target alone


def test_the_default_budget_aims_at_eight_to_fifteen_pages() -> None:
    s = ResearchSettings()
    tokens = _default_child().limits()["tokens"]
    assert tokens is not None
    synthesis = tokens * s.reserve_fraction / (1 - s.reserve_fraction)
    per_chapter = chapter_sentences(s.target_pages / 6, synthesis)
    assert 8 <= per_chapter * 6 / SENTENCES_PER_PAGE <= 15
    assert cards_wanted(s, {"tokens": tokens}) >= per_chapter  # the cards to write them from


EN = ("The plant recycled twelve thousand tonnes of batteries last year, " * 50).strip()


def test_page_estimate_en_zh_and_markdown() -> None:
    assert len(EN.split()) == 500 and estimate_pages(EN) == 1.0 == 500 / WORDS_PER_PAGE
    zh = "该工厂去年回收了一万二千吨电池。" * 125  # 15 CJK characters and a full stop, ×125
    assert len(zh) == 2000 and estimate_pages(zh) == round(2000 / CJK_PER_PAGE, 2) == 2.0
    assert estimate_pages(EN + "\n\n" + zh) == 3.0  # mixed text adds the two shares
    md = ("## Chapter\n\n| a | b |\n|---|---|\n"
          "It grew[^1][^2].\n\n[^1]: <https://a.example/x/y>\n")  # fmt: skip
    assert estimate_pages(md) == round(6 / WORDS_PER_PAGE, 2)  # Chapter a b It grew [^1]: nothing


def test_the_eval_reports_pages() -> None:
    cards = _cards(10)
    claims = tuple(Claim(f"c{i}", EN, (c.id,), verdict="supported") for i, c in enumerate(cards))
    brief = Brief("r", OUTLINE.question, OUTLINE,
                  (BriefSection(ITEM.id, ITEM.title, claims, bound_cards=tuple(c.id for c in cards)),),
                  tuple(cards))  # fmt: skip
    scores = score_brief({"key_points": []}, brief_to_dict(brief), lambda _c: None, None)
    assert scores["claim_pages"] == 10.0 and scores["pages"] > 10.0
    summary = summarise([{"mode": "brief", "scores": scores}], "brief")
    assert summary["pages"] == scores["pages"] and summary["claim_pages"] == 10.0


@pytest.mark.parametrize("pages", [0, -1, 101])
def test_target_pages_is_validated(pages: float) -> None:
    with pytest.raises(ValueError):
        ResearchSettings(target_pages=pages)


class TerseWriter(Writer):
    """A writer that states only the first two cards it is shown (as the embedded 1.5B model
    did: 31 sentences from md-02's 58 cards, the evidence of a key point among those left out)."""

    def __call__(self, messages: Sequence[Message]) -> str:
        claims = json.loads(super().__call__(messages))["claims"][:2]
        return json.dumps({"claims": claims})


def test_a_card_the_writer_leaves_out_is_stated_in_its_own_words_and_said_so() -> None:
    cards = _cards(12)
    notes: list[str] = []
    draft = write_with_model(OUTLINE, ITEM, cards, _write_fn(TerseWriter(), Budget(300_000)),
                             notes=notes)  # fmt: skip
    assert {c for s in draft.sentences for c in s.cites} == {c.id for c in cards}
    assert len(draft.sentences) == 12
    own = [s for s in draft.sentences if s.quote]  # the cards' own sentences carry their quote
    assert [s.cites[0] for s in own] == [c.id for c in cards[2:6] + cards[8:12]]
    assert notes == [
        "cards 3–6 written as their own sentences: the writer left them out",
        "cards 9–12 written as their own sentences: the writer left them out",
    ]


def test_one_card_left_out_is_named_as_one() -> None:
    notes: list[str] = []
    write_with_model(OUTLINE, ITEM, _cards(3), _write_fn(TerseWriter(), Budget(300_000)),
                     notes=notes)  # fmt: skip
    assert notes == ["card 3 written as its own sentence: the writer left it out"]
