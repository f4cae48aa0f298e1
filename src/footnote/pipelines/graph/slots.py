"""Typed non-entity template slots, read from the question by code.

A slot (`ValueSlot` of an intent's `values`) is a number (INT64, DOUBLE), a year, a date, a
boolean or one of an enumerated set. It is found next to one of its cues ("after 1990",
"1990年以后"; without cues: the first value of its type anywhere), parsed and validated, and
bound as a query parameter (`$year` = 1990, an int): the Cypher never holds the user's text.
A cue followed by something that is not a value of the slot's type ("after the war") is an
error the pipeline refuses with; a slot with no value found is `missing` (the template does
not capture the question, as with an entity slot left empty).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from footnote.store.graph.base import ValueSlot

AllowedFn = Callable[[ValueSlot], Sequence[str]]
"""The stored values of an ENUM slot's `property` (read by code from the graph)."""

_WIDE = str.maketrans("０１２３４５６７８９．，－／", "0123456789.,-/")
_KIND = {
    "INT64": "a whole number",
    "DOUBLE": "a number",
    "YEAR": "a year",
    "DATE": "a date",
    "BOOL": "yes or no",
    "ENUM": "one of the listed values",
}
_MONTH_NAMES = (
    "jan january|feb february|mar march|apr april|may|jun june|jul july|aug august|"
    "sep sept september|oct october|nov november|dec december"
)
_MONTHS = {m: i + 1 for i, names in enumerate(_MONTH_NAMES.split("|")) for m in names.split()}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = (
    (re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]"), "ymd"),
    (re.compile(rf"({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})(?!\d)", re.I), "mdy"),
    (re.compile(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})(?!\d)", re.I), "dmy"),
)
_NUMBER = re.compile(r"[-+]?\d(?:[\d,]*\d)?(?:\.\d+)?")
_TOKEN_AFTER = re.compile(r"\s*([^\s,;:?!。？！，；：]+(?:\s+[^\s,;:?!。？！，；：]+){0,1})")
_TOKEN_BEFORE = re.compile(r"([0-9.,年月日号/-]+)\s*$")


@dataclass
class SlotReading:
    """What the question holds for an intent's typed slots."""

    values: dict[str, Any] = field(default_factory=dict)
    spans: list[tuple[int, int]] = field(default_factory=list)
    """The parts of the question the slots consumed (cue and value)."""
    missing: list[str] = field(default_factory=list)
    error: str = ""
    """A cue followed by a value of the wrong type: what to tell the user."""


def _latin(text: str) -> bool:
    return bool(re.search(r"[A-Za-z0-9]", text))


def _find(question: str, cue: str) -> list[tuple[int, int]]:
    """Where `cue` occurs (whole words for Latin cues), case-insensitively."""
    pat = rf"(?<![\w]){re.escape(cue)}(?![\w])" if _latin(cue) else re.escape(cue)
    return [(m.start(), m.end()) for m in re.finditer(pat, question, re.I)]


def _number(raw: str, integer: bool) -> tuple[float | int | None, int]:
    m = _NUMBER.match(raw)
    if m is None or (m.end() < len(raw) and raw[m.end()].isalnum() and raw[m.end()] != "年"):
        return None, 0
    text = m.group(0).replace(",", "")
    if integer:
        return (int(text), m.end()) if "." not in text else (None, 0)
    return float(text), m.end()


def _date(raw: str) -> tuple[str | None, int]:
    for pat, order in _DATES:
        m = pat.match(raw)
        if m is None:
            continue
        a, b, c = m.groups()
        if order == "ymd":
            y, mo, d = int(a), int(b), int(c)
        elif order == "mdy":
            y, mo, d = int(c), _MONTHS[a.lower().rstrip(".")], int(b)
        else:
            y, mo, d = int(c), _MONTHS[b.lower().rstrip(".")], int(a)
        try:
            return dt.date(y, mo, d).isoformat(), m.end()
        except ValueError:
            return None, 0
    return None, 0


def parse_value(raw: str, slot: ValueSlot, allowed: Sequence[str]) -> tuple[Any, int]:
    """The typed value at the start of `raw` and how many characters it took; (None, 0)
    when `raw` does not start with a valid value of the slot's type."""
    raw = raw.translate(_WIDE)
    value: Any
    if slot.type == "DATE":
        return _date(raw)
    if slot.type == "ENUM":
        for v in sorted(allowed, key=len, reverse=True):
            if raw.lower().startswith(v.lower()) and not raw[len(v) : len(v) + 1].isalnum():
                return v, len(v)
        return None, 0
    value, used = _number(raw, integer=slot.type != "DOUBLE")
    if value is None:
        return None, 0
    if slot.type == "YEAR":
        digits = re.match(r"\d+", raw)
        if not digits or len(digits.group(0)) != 4 or "." in raw[:used]:
            return None, 0
        used += 1 if raw[used : used + 1] == "年" else 0
    low = slot.min if slot.min is not None else (1000 if slot.type == "YEAR" else None)
    high = slot.max if slot.max is not None else (2999 if slot.type == "YEAR" else None)
    if (low is not None and value < low) or (high is not None and value > high):
        return None, 0
    return value, used


def _shown(raw: str) -> str:
    return raw.strip().rstrip("?？!！.。,，")


def _read_one(
    question: str, slot: ValueSlot, allowed: Sequence[str], taken: list[tuple[int, int]]
) -> tuple[Any, tuple[int, int] | None, str]:
    """(value, span, wrong) for one slot: `wrong` is the text after a cue that is no value."""

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    if slot.type == "BOOL":
        found = [(c, False) for c in slot.false_cues] + [(c, True) for c in slot.cues]
        for cue, meaning in sorted(found, key=lambda f: len(f[0]), reverse=True):
            for a, b in _find(question, cue):
                if free(a, b):
                    return meaning, (a, b), ""
        return None, None, ""
    wrong = ""
    for cue in sorted(slot.cues, key=len, reverse=True):
        for a, b in _find(question, cue):
            if not free(a, b):
                continue
            after = question[b:]
            gap = len(after) - len(after.lstrip())
            value, used = parse_value(after[gap:], slot, allowed)
            if value is not None and free(b, b + gap + used):
                return value, (a, b + gap + used), ""
            before = _TOKEN_BEFORE.search(question[:a])
            if before is not None:
                value, used = parse_value(before.group(1), slot, allowed)
                if value is not None and used == len(before.group(1)):
                    return value, (before.start(1), b), ""
            token = _TOKEN_AFTER.match(after)
            shown = _shown(token.group(1)) if token and _latin(cue) else ""
            shown = shown or (before.group(1) if before is not None else "")
            wrong = wrong or shown
    if wrong:
        return None, None, wrong
    if not slot.cues:  # the first value of the type anywhere
        for i in range(len(question)):
            if (i == 0 or not question[i - 1].isalnum()) and free(i, i + 1):
                value, used = parse_value(question[i:], slot, allowed)
                if value is not None:
                    return value, (i, i + used), ""
    return None, None, ""


def read_slots(
    question: str, slots: Mapping[str, ValueSlot], allowed: AllowedFn, intent: str = ""
) -> SlotReading:
    """Each slot's typed value from `question`, in declaration order (a span once taken is
    not read again); `allowed(slot)` gives an ENUM slot's stored values when it names a
    `property` instead of listing `values`."""
    out = SlotReading()
    for name, slot in slots.items():
        choices: Sequence[str] = slot.values or (allowed(slot) if slot.type == "ENUM" else ())
        value, span, wrong = _read_one(question, slot, choices, out.spans)
        if wrong:
            kind = _KIND[slot.type]
            if slot.type == "ENUM":
                kind = "one of " + ", ".join(list(choices)[:10])
            out.values, out.spans = {}, []
            out.error = (
                f"the question asks {intent or 'a template'} for {kind} in the slot {name!r}, "
                f"and {wrong!r} is not {kind if slot.type != 'ENUM' else 'among them'}: "
                "please give it as one"
            )
            return out
        if span is None:
            out.missing.append(name)
            continue
        out.values[name] = value
        out.spans.append(span)
    return out


def without_spans(question: str, spans: Sequence[tuple[int, int]]) -> str:
    """The question with the slots' spans blanked out (for the template's misfit check)."""
    chars = list(question)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)
