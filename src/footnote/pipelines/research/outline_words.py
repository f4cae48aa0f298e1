"""Outline edits in plain words, read by code rules (no model): "drop 3", "rename 2 to Market
size in Europe", "add a section: who regulates recycling?", "move 4 before 2", "ask 2: …", and
the Chinese forms "删除第3节", "增加一节：…", "把第2节改名为…", "把第4节移到第2节前".

A section is named by its number as the outline was shown (1 = first), or by its id. Several
edits are separated by new lines or semicolons; numbers in all of them refer to the outline as
shown before the edit. `edit_outline_in_words` is the one entry point (CLI and server)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from footnote.errors import UsageError
from footnote.pipelines.research.outline import edit_outline
from footnote.serialize import to_plain
from footnote.types import EvidenceStandard, Outline, OutlineItem

ChangeKind = Literal["drop", "rename", "ask", "add", "move"]
Where = Literal["", "before", "after", "start", "end"]

FORMS = (
    '"drop 3" (or "drop 3 and 5")',
    '"rename 2 to NEW TITLE"',
    '"ask 2: NEW QUESTION"',
    '"add a section: QUESTION" (or "add a section after 2: QUESTION")',
    '"move 4 before 2" / "move 4 after 2" / "move 4 to the end"',
    '"删除第3节"',
    '"把第2节改名为…"',
    '"增加一节：…"',
    '"把第4节移到第2节前"',
)
"""The forms understood, as the error for anything else lists them."""


@dataclass(frozen=True)
class OutlineChange:
    """One edit read from the analyst's words: what it does to which item (by id)."""

    kind: ChangeKind
    said: str
    """The edit as it reads back to the analyst ("drop 3 (Growth)")."""
    targets: tuple[str, ...] = ()
    """Item ids dropped, renamed, re-asked or moved."""
    text: str = ""
    """The new title (rename), question (ask, add)."""
    where: Where = ""
    """For move and add: before/after `anchor`, or at the start/end."""
    anchor: str = ""


@dataclass(frozen=True)
class WordsEdit:
    """The outline after the analyst's words, and each change as it reads back."""

    outline: Outline
    changes: tuple[str, ...]


_ZH_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_REF = r"(?:section|item|chapter|part)?\s*#?\s*(?P<ref>[\w-]+)"
_ZH_REF = r"第?\s*(?P<ref>[0-9一二两三四五六七八九十]+)\s*(?:节|项|条|部分|章|个)?"
_SEP = re.compile(r"[\n;；]+")
_EN_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("drop", re.compile(r"(?:drop|remove|delete|cut)\s+(?P<refs>.+)", re.I)),
    ("rename", re.compile(rf"rename\s+{_REF}\s*(?:to|as|:)\s*(?P<text>.+)", re.I)),
    ("ask", re.compile(rf"(?:ask|let)\s+{_REF}\s*(?:ask)?\s*[:：]\s*(?P<text>.+)", re.I)),
    (
        "add",
        re.compile(
            r"add(?:\s+(?:a|an|one))?(?:\s+(?:section|item|chapter|part|question))?"
            rf"(?:\s+(?P<where>before|after)\s+{_REF})?\s*[:：]\s*(?P<text>.+)",
            re.I,
        ),
    ),
    (
        "move",
        re.compile(
            rf"move\s+{_REF}\s+(?P<where>before|after|to)\s+(?:the\s+)?(?P<to>[\w#-]+)", re.I
        ),
    ),
)
_ZH_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("drop", re.compile(r"(?:删除|删掉|删去|去掉|去除|不要|删)\s*(?P<refs>.+)")),
    (
        "rename",
        re.compile(
            rf"(?:把|将)?\s*{_ZH_REF}\s*(?:重命名|改名|更名|改标题)\s*(?:为|成|作)?\s*"
            r"[:：]?\s*(?P<text>.+)"
        ),
    ),
    ("rename", re.compile(rf"(?:重命名|改名)\s*{_ZH_REF}\s*(?:为|成)\s*[:：]?\s*(?P<text>.+)")),
    (
        "ask",
        re.compile(
            rf"(?:把|将)?\s*{_ZH_REF}\s*(?:改问|的问题改为|问题改为)\s*[:：]?\s*(?P<text>.+)"
        ),
    ),
    (
        "add",
        re.compile(
            rf"(?:在\s*{_ZH_REF}\s*(?P<where>前面|之前|前|后面|之后|后)\s*)?"
            r"(?:增加|添加|新增|加上|加)\s*(?:一|1)?\s*(?:节|项|部分|章|个问题)?\s*"
            r"[:：]\s*(?P<text>.+)"
        ),
    ),
    (
        "move",
        re.compile(
            rf"(?:把|将)?\s*(?:移动)?\s*{_ZH_REF}\s*(?:移到|移至|放到|挪到)\s*"
            r"(?P<to>第?\s*[0-9一二两三四五六七八九十]+\s*(?:节|项|条|部分|章|个)?|最前面?|开头|最后面?|末尾)"
            r"\s*(?P<where>前面|之前|前|后面|之后|后)?"
        ),
    ),
)


def _zh_number(text: str) -> int | None:
    """3, 三, 十二 → the number (None when it is not one)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not text or any(ch not in _ZH_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return _ZH_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)


def _item_id(outline: Outline, ref: str) -> str:
    """The id of the item a reference names: its number as shown (1-based) or its id."""
    ref = ref.strip().strip("#.。").strip()
    number = _zh_number(ref)
    if number is not None:
        if not 1 <= number <= len(outline.items):
            raise UsageError(f"there is no section {number}: the outline has {len(outline.items)}")
        return outline.items[number - 1].id
    for item in outline.items:
        if item.id.lower() == ref.lower():
            return item.id
    raise UsageError(f"no section {ref!r}: name one by its number (1–{len(outline.items)}) or id")


def _refs(outline: Outline, text: str) -> tuple[str, ...]:
    """Several references: "3", "3 and 5", "3, 5", "第3、5节", "sections 2 and 4"."""
    text = re.sub(
        r"^(?:the\s+)?(?:sections?|items?|chapters?|parts?)\s+", "", text.strip(), flags=re.I
    )
    parts = [p for p in re.split(r"\s*(?:,|，|、|\band\b|和|与|及)\s*", text) if p.strip()]
    refs = [re.sub(r"^第|(?:节|项|条|部分|章|个)$", "", p.strip()) for p in parts]
    return tuple(dict.fromkeys(_item_id(outline, r) for r in refs))


def _number_of(outline: Outline, item_id: str) -> str:
    n = next(i for i, item in enumerate(outline.items, 1) if item.id == item_id)
    return f"{n} ({outline.items[n - 1].title})"


def _parse_one(outline: Outline, line: str) -> OutlineChange:
    line = line.strip().rstrip(".。").strip()
    for kind, pattern in (*_EN_RULES, *_ZH_RULES):
        m = pattern.fullmatch(line)
        if m is None:
            continue
        groups = m.groupdict()
        if kind == "drop":
            targets = _refs(outline, groups["refs"])
            said = "drop " + ", ".join(_number_of(outline, t) for t in targets)
            return OutlineChange("drop", said, targets)
        ref = groups.get("ref") or ""
        if kind in ("rename", "ask"):
            target = _item_id(outline, ref)
            text = groups["text"].strip().strip("\"'“”「」")
            if not text:
                break
            verb = "rename" if kind == "rename" else "ask in"
            said = f"{verb} {_number_of(outline, target)}: {text}"
            return OutlineChange(kind, said, (target,), text=text)  # type: ignore[arg-type]
        if kind == "add":
            text = groups["text"].strip().strip("\"'“”「」")
            where_word = groups.get("where") or ""
            where: Where = "end"
            anchor = ""
            if where_word:
                anchor = _item_id(outline, ref)
                where = "before" if where_word in ("before", "前面", "之前", "前") else "after"
            place = f" {where} {_number_of(outline, anchor)}" if anchor else ""
            return OutlineChange("add", f"add a section{place}: {text}", (), text=text,
                                 where=where, anchor=anchor)  # fmt: skip
        if kind == "move":
            target = _item_id(outline, ref)
            to = re.sub(r"\s+", "", groups["to"]).lower()
            word = (groups.get("where") or "").lower()
            if to in ("top", "start", "beginning", "front", "最前", "最前面", "开头"):
                where, anchor = "start", ""
            elif to in ("end", "bottom", "last", "最后", "最后面", "末尾"):
                where, anchor = "end", ""
            else:
                anchor = _item_id(outline, re.sub(r"^第|(?:节|项|条|部分|章|个)$", "", to))
                where = "after" if word in ("after", "后面", "之后", "后") else "before"
            place = f"{where} {_number_of(outline, anchor)}" if anchor else f"to the {where}"
            return OutlineChange("move", f"move {_number_of(outline, target)} {place}",
                                 (target,), where=where, anchor=anchor)  # fmt: skip
    raise UsageError(f"cannot read the outline edit {line!r}; write one of: " + "; ".join(FORMS))


def parse_outline_words(outline: Outline, text: str) -> list[OutlineChange]:
    """The edits a line of plain words asks for (UsageError naming the forms understood
    when a part of it is none of them). Numbers refer to `outline` as shown."""
    lines = [p for p in _SEP.split(text) if p.strip()]
    if not lines:
        raise UsageError("no outline edit given; write one of: " + "; ".join(FORMS))
    return [_parse_one(outline, line) for line in lines]


def _new_id(text: str, taken: set[str]) -> str:
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)]
    words = [w for w in words if w not in ("a", "an", "the", "of", "and", "or", "is", "are")]
    base = "_".join(words[:4]) or "added"
    new, n = base, 2
    while new in taken:
        new, n = f"{base}_{n}", n + 1
    return new


def _title_of(text: str) -> str:
    title = text.strip().rstrip("?？.。").strip()
    return title[:1].upper() + title[1:]


def _as_question(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:]


def apply_outline_changes(outline: Outline, changes: list[OutlineChange]) -> Outline:
    """The outline with the changes made in order, validated as any edit is
    (`outline.edit_outline`). Items depending on a dropped one lose that dependency."""
    items = list(outline.items)
    web = any(i.standard.web for i in outline.items) if outline.items else True
    for change in changes:
        ids = [i.id for i in items]
        for target in (*change.targets, change.anchor):
            if target and target not in ids:
                raise UsageError(f"section {target!r} was dropped by an earlier edit")
        if change.kind == "drop":
            gone = set(change.targets)
            items = [replace(i, depends_on=tuple(d for d in i.depends_on if d not in gone))
                     for i in items if i.id not in gone]  # fmt: skip
        elif change.kind == "rename":
            # the search focus follows the new title (the template's terms belonged to the old)
            items = [replace(i, title=change.text, terms="") if i.id == change.targets[0] else i
                     for i in items]  # fmt: skip
        elif change.kind == "ask":
            items = [replace(i, asks=_as_question(change.text), terms="")
                     if i.id == change.targets[0] else i for i in items]  # fmt: skip
        else:
            if change.kind == "add":
                moved = OutlineItem(_new_id(change.text, set(ids)), _title_of(change.text),
                                    _as_question(change.text),
                                    standard=EvidenceStandard(web=web))  # fmt: skip
            else:
                moved = next(i for i in items if i.id == change.targets[0])
                items = [i for i in items if i.id != moved.id]
            if change.where == "start":
                at = 0
            elif change.where in ("before", "after"):
                at = [i.id for i in items].index(change.anchor) + (change.where == "after")
            else:
                at = len(items)
            items.insert(at, moved)
    return edit_outline(outline, {"items": to_plain(tuple(items))})


def edit_outline_in_words(outline: Outline, text: str) -> WordsEdit:
    """The analyst's plain-words edit of a proposed outline ("drop 3; add a section: who
    regulates recycling?", "删除第3节"): the edited outline, not yet confirmed, and each change
    as it reads back, to show before confirming. Read by code rules only; UsageError (listing
    the forms understood) for words it cannot read or a section that does not exist. The
    caller confirms with `workspace.research.confirm_outline(ws, run_id, to_plain(result.outline))`."""
    changes = parse_outline_words(outline, text)
    edited = apply_outline_changes(outline, changes)
    return WordsEdit(edited, tuple(c.said for c in changes))
