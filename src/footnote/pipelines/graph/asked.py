"""Whether result rows can answer what a graph question asks for, by the kind of thing asked.

"Which supplier supplies Konbu?" asks for a supplier; rows that hold only numbers (its id,
`6`) answer another question, though every value is in the graph. `entity_asked` reads the
thing asked for ("supplier", "person") from a who/which question, unless that thing is a
quantity, a time or a numeric property of the schema; `numbers_for_entity` says why rows of
bare numbers do not answer it (the ladder tries the next rung with that reason).
"""

from __future__ import annotations

import re
from typing import Any

from footnote.pipelines.graph.understand import LIMIT_PHRASES, SUPERLATIVE_EN, SUPERLATIVE_ZH
from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.textnorm import jieba_segmenter
from footnote.verify.cypher.guard import write_in_value
from footnote.verify.graph_answer import value_text

_LEAD = r"^\s*(?:(?:and|but|so|then|also)\s+)?"
_WHO_EN = re.compile(_LEAD + r"(?:who|whom|whose)\b", re.I)
_WHICH_EN = re.compile(_LEAD + r"(?:which|what)\s+(?P<noun>[a-z][a-z-]*)", re.I)
_WHO_ZH = re.compile(r"谁|哪位|哪个人|哪些人")
_WHICH_ZH = re.compile(r"哪(?:一|些)?(?:个|部|家|位|种|本|条|名)?(?P<noun>[\u4e00-\u9fff]{1,3})")
_QUANTITY_TEXT = """year years date dates day days month months decade time times age ages number
numbers count amount total sum average percentage percent share rate rank price prices cost value
size length height weight score rating ratings is are was were do does did has have had can could
kind sort type"""
_QUANTITY_EN = frozenset(_QUANTITY_TEXT.split())
"""Words after which/what that ask for a value or open a property question, not a thing."""
_QUANTITY_ZH = ("年", "一年", "天", "月", "时候", "时间", "日期")
_NUMERIC = re.compile(r"^[+-]?\d+(?:[.,]\d+)*%?$")
_NUMERIC_TYPES = ("INT", "DOUBLE", "FLOAT", "DECIMAL", "SERIAL", "DATE", "TIMESTAMP", "UINT")


def _numeric_words(spec: GraphSpec) -> set[str]:
    """The words of the schema's numeric properties (`unitPrice` → unit, price)."""
    out: set[str] = set()
    for node in spec.nodes.values():
        for name, kind in node.properties.items():
            if kind.upper().startswith(_NUMERIC_TYPES):
                out |= {w.lower() for w in re.findall(r"[A-Z]?[a-z]+", name)}
    return out


def _named_by_number(noun: str, spec: GraphSpec) -> bool:
    """Whether `noun` is a label whose entities may be named by a number: one with no name
    property (an order is its id) or a numeric one."""
    for label, node in spec.nodes.items():
        if label.lower() in (noun, noun.rstrip("s"), noun.removesuffix("es")):
            return not node.name or node.properties.get(node.name, "").upper().startswith(
                _NUMERIC_TYPES
            )
    return False


def entity_asked(question: str, spec: GraphSpec) -> str:
    """The thing a who/which question asks for ("person" for who), or "" when the question
    asks for a value (what year, how many, which price) or its form cannot tell."""
    if _WHO_EN.search(question) or _WHO_ZH.search(question):
        return "person"
    if m := _WHICH_EN.search(question):
        noun = m["noun"].lower()
        if noun in _QUANTITY_EN or noun.rstrip("s") in _numeric_words(spec):
            return ""
        return "" if _named_by_number(noun, spec) else noun
    if m := _WHICH_ZH.search(question):
        if m["noun"].startswith(_QUANTITY_ZH):
            return ""
        first = next(iter(jieba_segmenter().cut(question[m.start("noun") :])), "")
        return first if first and m["noun"].startswith(first) else m["noun"]  # a word
    return ""


_PICKS_ONE = re.compile(r"\bORDER\s+BY\b[\s\S]*\bLIMIT\b|\b(?:min|max)\s*\(", re.I)


def superlative_unpicked(question: str, cypher: str, rows: GraphRows) -> str:
    """Why `rows` cannot answer `question`: it asks for the earliest/most/… one, and the query
    neither orders and limits its rows nor takes a min or max, so several rows came back and
    none of them is said to be the one ("" when it can). `cypher` as written: the server's
    row cap is no pick."""
    asked = LIMIT_PHRASES.sub(
        " ", question
    )  # "at most 100", "最多100个": a limit, not a superlative
    m = re.search(SUPERLATIVE_EN, asked, re.I) or re.search(SUPERLATIVE_ZH, asked)
    if m is None or len(rows.rows) < 2:
        return ""
    if _PICKS_ONE.search(cypher):
        return ""
    return (
        f"the question asks for the {m.group(0)} one, but the query returned {len(rows.rows)} "
        "rows without picking one: order by the asked value and LIMIT 1 (or use min/max)"
    )


def misfit(question: str, cypher: str, rows: GraphRows, spec: GraphSpec) -> str:
    """Why rows that ran cannot answer the question (`numbers_for_entity`,
    `superlative_unpicked`), or ""."""
    return numbers_for_entity(question, rows, spec) or superlative_unpicked(question, cypher, rows)


def _numeric(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int | float) or bool(_NUMERIC.match(value_text(v).strip()))


def numbers_for_entity(question: str, rows: GraphRows, spec: GraphSpec) -> str:
    """Why `rows` cannot answer `question`: it asks which thing or who, and every value the
    rows hold is a number ("" when they can, or hold nothing)."""
    if not rows.rows:
        return ""
    asked = entity_asked(question, spec)
    if not asked or not all(_numeric(v) for r in rows.rows for v in r):
        return ""
    return (
        f"the query returned only numbers ({', '.join(rows.columns)}) but the question asks "
        f"for a {asked}: return its name, not an id, a count or a year"
    )


_CYPHER_WRITE = re.compile(
    r"\b(?:MATCH|CREATE|MERGE|OPTIONAL\s+MATCH)\s*\([\s\S]*\b(?:DELETE|SET|CREATE|MERGE|REMOVE|"
    r"DROP)\b"
)
_WRITE_EN = re.compile(
    r"(?:^|[.;!?]\s*|\b(?:and|then|please)\s+)(?:"
    r"(?:delete|remove|drop|erase|wipe|clear)\s+(?:all|every|each|the|that|this|these|those|it|"
    r"them|any)\b"
    r"|(?:set|change|update|rename|modify|make)\s+[^.;!?]{0,60}?(?:'s|\bof)\b[^.;!?]{0,40}?\bto\b"
    r"|(?:add|create|insert|merge)\s+(?:a|an|new|another)\b)"
    r"|\bignore\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+instructions\b",
    re.I,
)
"""A request in words to change the graph: a verb of writing with its object (so titles such
as "Drop Dead Gorgeous" or "Set It Off" stay names), or to ignore the instructions."""
_WRITE_ZH = re.compile(
    r"删掉|删除|删去|清空|改成|改为|修改为|更新为|更新成|插入|忽略(?:之前|以上|前面)"
)


def write_request(question: str) -> str:
    """Why `question` is refused before any query is made: it carries a write statement (in
    a quoted value, or as Cypher), or asks in words to change the graph or to ignore the
    instructions — the graph is read-only here and such text is an attempt, not a question
    to answer around ("" for a question)."""
    if attempt := write_in_value(question):
        return (
            f"the question carries a write statement inside a value ({attempt[:60]!r}): "
            "an injection attempt, refused before any query was made"
        )
    if m := _CYPHER_WRITE.search(question) or _WRITE_EN.search(question):
        said = m.group(0).strip(" .;!?")
    elif m := _WRITE_ZH.search(question):
        said = m.group(0)
    else:
        return ""
    return (
        f"the question asks to change the graph or its instructions ({said[:60]!r}): this graph "
        "is read-only and answers questions only; refused before any query was made"
    )
