"""Footnote markers in a page's text layer. A marker is a superscript number set against the
word before it, so the text layer glues the two: "SCIENCEPARSE v3.0.0⁹" reads "v3.0.09",
"GB/T 7714-2015¹" reads "7714-20151". A marker is told by its glyph, never by its digits: the
glyph sits clearly above the line's baseline and is small (`RISE`, `HEIGHT`, in ems of the
line's font size), or it is a digit-only fragment set smaller and higher than the text beside
it. A raised number is removed only where the page holds a note with that number (a note line
starts with it, set smaller than the body text); an exponent or a citation number with no such
note keeps its digits. A note's own leading number is set apart from its text ("¹¹Our" → "11 Our").
"""

from __future__ import annotations

import bisect
import ctypes
import itertools
import re
from collections import Counter
from dataclasses import dataclass

import pypdfium2.raw as pdfium_c

from footnote.ingest.cleanup import clean_text
from footnote.ingest.raw import Line

RISE = 0.2
"""A superscript glyph's bottom sits at least this many ems above the line's baseline."""
HEIGHT = 0.6
"""... and the glyph is at most this many ems tall (a normal digit is about 0.7)."""
_SMALLER = 0.8
"""A digit-only fragment is a marker when set at most this share of its neighbour's size."""
_JOINERS = frozenset(",–-")
_NOTE_START = re.compile(r"^(\d{1,3})(?:\s|[^\d\s.,:;)\]%])")


@dataclass
class Marked:
    """A fragment holding raised digit runs: its raw characters and the runs' [start, end)."""

    line: Line
    chars: list[str]
    runs: list[tuple[int, int]]


def raised_runs(
    raw: object, chars: list[str], index: list[int], size: float
) -> list[tuple[int, int]]:
    """The runs of raised, small digits in a fragment's characters (`index`: each character's
    index in the text page, -1 for an inserted space), measured against the baseline of the
    nearest character that is not a digit."""
    runs: list[tuple[int, int]] = []
    start = -1
    box = [ctypes.c_double() for _ in range(4)]
    ox, oy = ctypes.c_double(), ctypes.c_double()
    for p, ch in enumerate(chars):
        up = False
        if "0" <= ch <= "9" and index[p] >= 0:
            ref = _reference(chars, index, p)
            if ref >= 0:
                pdfium_c.FPDFText_GetCharBox(raw, index[p], *box)
                pdfium_c.FPDFText_GetCharOrigin(raw, index[ref], ox, oy)
                bottom, top = box[2].value, box[3].value
                up = bottom - oy.value >= RISE * size and 0 < top - bottom <= HEIGHT * size
        if up and start < 0:
            start = p
        elif not up and start >= 0:
            runs.append((start, p))
            start = -1
    if start >= 0:
        runs.append((start, len(chars)))
    return runs


def _reference(chars: list[str], index: list[int], p: int) -> int:
    """The nearest character (before, else after, within 8) that gives the baseline."""
    for q in itertools.chain(
        range(p - 1, max(p - 9, -1), -1), range(p + 1, min(p + 9, len(chars)))
    ):
        if index[q] >= 0 and not chars[q].isdigit() and not chars[q].isspace():
            return q
    return -1


def resolve(frags: list[Line], marked: list[Marked], page_height: float) -> list[Line]:
    """The page's fragments with note markers removed and notes' numbers set apart."""
    if not frags:
        return frags
    sizes: Counter[float] = Counter()
    for f in frags:
        sizes[f.size] += len(f.text)
    body = sizes.most_common(1)[0][0]
    notes: set[int] = set()
    lone = _lone_markers(frags, body, notes)
    for m in marked:
        s, e = m.runs[0]
        if s == 0 and e < len(m.chars) and m.line.size < body:
            notes.add(int("".join(m.chars[s:e])))  # "¹¹Our evaluations …", set small
            m.line.note = True
    for f in frags:  # a note whose number is set in plain digits at the page's foot
        hit = _NOTE_START.match(f.text)
        if hit and f.size <= body - 1.0 and f.top > 0.5 * page_height:
            notes.add(int(hit.group(1)))
    if not notes:
        return frags
    fixed = {id(m.line): _rewrite(m, notes, body) for m in marked}
    out = []
    for f in frags:
        if id(f) in lone and int(f.text) in notes:
            continue
        if id(f) in fixed:
            f.text = fixed[id(f)]
            if not f.text:
                continue
        out.append(f)
    return out


def _rewrite(m: Marked, notes: set[int], body: float) -> str:
    chars = list(m.chars)
    for s, e in reversed(m.runs):
        number = int("".join(chars[s:e]))
        if s == 0 and e < len(chars) and m.line.size < body:
            if chars[e] != " ":
                chars.insert(e, " ")  # the note's own number
        elif number in notes and not _in_list(chars, s, e):
            del chars[s:e]
    return clean_text("".join(chars))


def _in_list(chars: list[str], s: int, e: int) -> bool:
    """The raised number is one of a list or range ("¹⁻³", "²,³"): citations, not a note."""
    return _joins_next("".join(chars[e : e + 2])) or _joins_last("".join(chars[max(s - 2, 0) : s]))


def _joins_next(text: str) -> bool:
    return text[:1] in _JOINERS and text[1:2].isdigit()


def _joins_last(text: str) -> bool:
    return text[-1:] in _JOINERS and text[-2:-1].isdigit()


def _lone_markers(frags: list[Line], body: float, notes: set[int]) -> set[int]:
    """Ids of digit-only fragments raised beside text on their line: the ones after text are
    markers (returned); one that starts a small-type line is a note's number (to `notes`)."""
    order = sorted(frags, key=lambda f: f.top)
    tops = [f.top for f in order]
    found: set[int] = set()
    for f in frags:
        if not (f.text.isdigit() and len(f.text) <= 3 and f.size <= _SMALLER * body):
            continue
        lo = bisect.bisect_left(tops, f.top - 2 * body)
        hi = bisect.bisect_right(tops, f.top + 2 * body)
        before = after = None
        for g in order[lo:hi]:
            if g is f or f.size > _SMALLER * g.size or g.bottom - f.bottom < RISE * g.size:
                continue
            if min(f.bottom, g.bottom) - max(f.top, g.top) <= 0:
                continue
            if f.x0 - 0.5 * g.size <= g.x1 <= f.x0 + 1:
                before = g
            elif f.x1 - 1 <= g.x0 <= f.x1 + 0.6 * g.size:
                after = g
        if (after is not None and _joins_next(after.text)) or (
            before is not None and _joins_last(before.text)
        ):
            continue
        if before is not None:
            found.add(id(f))
        elif before is None and after is not None and after.size < body:
            notes.add(int(f.text))
            f.note = True
        elif before is None and after is not None:
            found.add(id(f))
    return found
