"""Outline edits in plain words (English and Chinese), read by code rules: each form does what
it says to the items, numbers refer to the outline as shown, and anything else is an error that
lists the forms understood (never a guess)."""

from __future__ import annotations

import pytest

from footnote.errors import UsageError
from footnote.pipelines.research.outline import plan, propose_outline
from footnote.pipelines.research.outline_words import edit_outline_in_words, parse_outline_words
from footnote.types import Outline

Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"


@pytest.fixture()
def outline() -> Outline:
    return propose_outline(Q, "market_size")


def ids(o: Outline) -> list[str]:
    return [i.id for i in o.items]


def test_drop_by_number_and_by_id(outline: Outline) -> None:
    before = ids(outline)
    edit = edit_outline_in_words(outline, "drop 3")
    assert ids(edit.outline) == before[:2] + before[3:]
    assert edit.changes == (f"drop 3 ({outline.items[2].title})",)
    assert ids(edit_outline_in_words(outline, f"remove {before[0]}").outline) == before[1:]
    assert ids(edit_outline_in_words(outline, "delete sections 2 and 4").outline) == [
        before[0], before[2], *before[4:]
    ]  # fmt: skip
    assert not edit.outline.confirmed


def test_rename_changes_the_title_and_the_search_focus(outline: Outline) -> None:
    edit = edit_outline_in_words(outline, "rename 2 to Market size in Europe")
    item = edit.outline.items[1]
    assert item.id == outline.items[1].id and item.title == "Market size in Europe"
    assert item.asks == outline.items[1].asks
    (sq,) = [s for s in plan(edit.outline, {}, reserve=0.3, parallel=1) if s.item_id == item.id]
    assert "europe" in sq.queries[0].lower()  # the template's terms no longer hide the new title


def test_add_a_section_and_ask(outline: Outline) -> None:
    edit = edit_outline_in_words(outline, "add a section: who regulates recycling?")
    added = edit.outline.items[-1]
    assert len(edit.outline.items) == len(outline.items) + 1
    assert added.asks == "Who regulates recycling?" and added.title == "Who regulates recycling"
    assert added.id == "who_regulates_recycling" and added.standard.web
    assert edit.changes == ("add a section: who regulates recycling?",)
    after = edit_outline_in_words(outline, "add a section after 1: what do recyclers earn?")
    assert after.outline.items[1].asks == "What do recyclers earn?"
    asked = edit_outline_in_words(outline, "ask 2: How large is the market in Europe?")
    assert asked.outline.items[1].asks == "How large is the market in Europe?"


def test_an_added_section_searches_the_library_only_when_the_run_does(outline: Outline) -> None:
    offline = propose_outline(Q, "market_size", web=False)
    added = edit_outline_in_words(offline, "add a section: who regulates recycling?")
    assert not added.outline.items[-1].standard.web


def test_move(outline: Outline) -> None:
    before = ids(outline)
    assert ids(edit_outline_in_words(outline, "move 4 before 2").outline) == [
        before[0], before[3], before[1], before[2], *before[4:]
    ]  # fmt: skip
    assert ids(edit_outline_in_words(outline, "move 1 after 3").outline) == [
        before[1], before[2], before[0], *before[3:]
    ]  # fmt: skip
    assert ids(edit_outline_in_words(outline, "move 2 to the end").outline) == [
        before[0], *before[2:], before[1]
    ]  # fmt: skip


def test_several_edits_number_the_outline_as_shown(outline: Outline) -> None:
    before = ids(outline)
    edit = edit_outline_in_words(outline, "drop 1; move 4 before 2\nrename 3 to Drivers")
    assert ids(edit.outline) == [before[3], before[1], before[2], *before[4:]]
    assert edit.outline.items[2].title == "Drivers" and len(edit.changes) == 3


def test_chinese_forms(outline: Outline) -> None:
    before = ids(outline)
    assert ids(edit_outline_in_words(outline, "删除第3节").outline) == before[:2] + before[3:]
    assert ids(edit_outline_in_words(outline, "删除第三节").outline) == before[:2] + before[3:]
    assert ids(edit_outline_in_words(outline, "删掉第2、4节").outline) == [
        before[0], before[2], *before[4:]
    ]  # fmt: skip
    added = edit_outline_in_words(outline, "增加一节：谁负责监管电池回收？").outline
    assert (
        added.items[-1].asks == "谁负责监管电池回收？"
        and added.items[-1].title == "谁负责监管电池回收"
    )
    renamed = edit_outline_in_words(outline, "把第2节改名为欧洲市场规模").outline
    assert renamed.items[1].title == "欧洲市场规模"
    moved = edit_outline_in_words(outline, "把第4节移到第2节前").outline
    assert ids(moved) == [before[0], before[3], before[1], before[2], *before[4:]]
    last = edit_outline_in_words(outline, "将第1节移到最后").outline
    assert ids(last) == [*before[1:], before[0]]


@pytest.mark.parametrize(
    "words, message",
    [
        ("make it better", "cannot read the outline edit"),
        ("drop 9", "there is no section 9"),
        ("rename nothing to X", "no section 'nothing'"),
        ("", "no outline edit given"),
        ("drop 1; rename 1 to X", "dropped by an earlier edit"),
    ],
)
def test_what_cannot_be_read_is_an_error_not_a_guess(
    outline: Outline, words: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message) as info:
        edit_outline_in_words(outline, words)
    if "cannot read" in message:
        assert '"drop 3"' in str(info.value) and "删除第3节" in str(info.value)


def test_dropping_every_section_is_refused(outline: Outline) -> None:
    with pytest.raises(UsageError, match="at least one item"):
        edit_outline_in_words(outline, "drop " + ", ".join(str(n) for n in range(1, 7)))


def test_a_dropped_dependency_is_released(outline: Outline) -> None:
    from dataclasses import replace

    items = list(outline.items)
    items[1] = replace(items[1], depends_on=(items[0].id,))
    dependent = replace(outline, items=tuple(items))
    edited = edit_outline_in_words(dependent, "drop 1").outline
    assert edited.items[0].depends_on == ()


def test_the_parse_is_per_line(outline: Outline) -> None:
    changes = parse_outline_words(outline, "drop 2\n\nadd a section: x?")
    assert [c.kind for c in changes] == ["drop", "add"]
