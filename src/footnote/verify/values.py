"""The values a sentence states, checked against structured evidence (result rows).

A sentence citing rows passes the value checks when every value it states occurs in the rows
it cites: calendar dates by value (`2001-05-03` = `3 May 2001` = `2001年5月3日`), numbers by
the one number rule (`textnorm.unmatched_numbers`: value, unit, scale), names (quoted or
capitalised spans, runs of Latin words in Chinese text) by normalised whole-word containment
in the rows or in their `context` (the query parameters the rows were selected by); a number
of the `context` restated as the bound it was ("before 1990", "2000年以后", "the 1950s") is no
claim about a row. Used by
`verify.checks` for row evidence; prose evidence is checked by overlap or the judge instead.
"""

from __future__ import annotations

import re

from footnote.textnorm import (
    QUESTION_WORDS_EN,
    STOP_WORDS_EN,
    normalise,
    quantities,
    unmatched_numbers,
)

VALUE_KINDS = ("numbers", "dates", "names")
"""The kinds of value a sentence is checked for, in the order reported."""


def missing_values(sentence: str, rows: str, context: str = "") -> dict[str, list[str]]:
    """Kind → values of `sentence` found in no form in `rows` (names also in `context`);
    only kinds with something missing appear."""
    missing: dict[str, list[str]] = {"dates": [], "numbers": [], "names": []}
    have_dates = {d for d, _ in dates_in(rows)}
    rest = sentence
    for d, span in dates_in(sentence):
        if d not in have_dates:
            missing["dates"].append(span)
        rest = rest.replace(span, " ")
    missing["numbers"] = unmatched_numbers(_without_bounds(rest, context), rows)
    known = normalise(rows + "\n" + context)
    missing["names"] = [n for n in names_in(rest) if not _name_known(n, known)]
    return {k: v for k, v in missing.items() if v}


_BOUND = re.compile(
    r"\b(?:before|after|since|until|till|over|under|above|below|(?:more|less|fewer|greater|"
    r"earlier|later|older|younger|higher|lower) than|at (?:least|most))\s+(\d[\d,]*(?:\.\d+)?)\b"
    r"|(?:早于|晚于|超过|低于|高于|大于|小于|多于|少于|不少于|不超过|至少|至多)\s*(\d[\d,]*(?:\.\d+)?)"
    r"|(\d[\d,]*(?:\.\d+)?)\s*年?\s*(?:以前|之前|以后|之后|以上|以下)"
    r"|\b(\d{3}0)'?s\b|(\d{3}0)\s*年代",
    re.I,
)


def _without_bounds(sentence: str, context: str) -> str:
    """`sentence` without the bounds it restates from `context` ("before 1990" where the
    query filtered by 1990): the number is the question's, not a value of a row."""
    bounds = {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", context)}

    def drop(m: re.Match[str]) -> str:
        number = next(g for g in m.groups() if g)
        return " " if number.replace(",", "") in bounds else m.group(0)

    return _BOUND.sub(drop, sentence) if bounds else sentence


def states_values(sentence: str) -> bool:
    """Whether a sentence states any date, number or name the value checks can confirm."""
    return bool(dates_in(sentence) or quantities(sentence) or names_in(sentence))


# -- dates -----------------------------------------------------------------------------------
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], 1)}  # fmt: skip
_MONTHS |= {m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9}
_MON = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_PATTERNS = (
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.]+Z?)?\b"), "ymd"),
    (re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b"), "ymd"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "ymd"),
    (re.compile(rf"\b({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "mdy"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MON})\.?,?\s+(\d{{4}})\b", re.I), "dmy"),
)


def dates_in(text: str) -> list[tuple[tuple[int, int, int], str]]:
    """Full calendar dates in `text` as ((year, month, day), the text written)."""
    out: list[tuple[tuple[int, int, int], str]] = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            a, b, c = m.group(1), m.group(2), m.group(3)
            if order == "ymd":
                y, mo, d = int(a), int(b), int(c)
            elif order == "mdy":
                y, mo, d = int(c), _MONTHS[a.lower().rstrip(".")], int(b)
            else:
                y, mo, d = int(c), _MONTHS[b.lower().rstrip(".")], int(a)
            if 1 <= mo <= 12 and 1 <= d <= 31:
                out.append(((y, mo, d), m.group(0)))
    return out


# -- names -----------------------------------------------------------------------------------
_QUOTED = re.compile(r"[\"“「『‘]([^\"”」』’]{2,120})[\"”」』’]")
_APOSTROPHE_QUOTED = re.compile(r"(?<![A-Za-z0-9'’])'([^'\n]{2,120}?)'(?![A-Za-z0-9])")
"""A name between straight apostrophes used as quotes ('Dustin Hoffman'), not O'Brien's."""
_QUOTE_APOSTROPHE = re.compile(r"(?<![A-Za-z0-9])'|'(?![A-Za-z0-9])")
_POSSESSIVE = re.compile(r"['’]s$")
_CAPS = re.compile(
    r"(?<![\w'’])[A-Z][\w'’.&-]*(?:\s+(?:[A-Z0-9][\w'’.&-]*|of|the|de|du|la|von|van|and|&)(?=\s|$|[,.;:!?)]))*"
)
_LATIN_IN_CJK = re.compile(r"[A-Za-z][A-Za-z0-9'’.&-]*(?:\s+[A-Za-z0-9][A-Za-z0-9'’.&-]*)*")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_COMMON = STOP_WORDS_EN | QUESTION_WORDS_EN | frozenset(
    {"she", "he", "they", "it", "its", "there", "their", "both", "each", "all", "none", "no",
     "yes", "one", "only", "also", "in", "on", "at", "by", "from", "for", "with", "as", "and",
     "or", "but", "total", "overall", "together", "among", "according", "based", "showing",
     "rows", "row", "graph", "result", "results", "answer", "i"}
)  # fmt: skip


def names_in(text: str) -> list[str]:
    """Spans of `text` that name something: quoted strings (straight apostrophes used as
    quotes too) and capitalised runs, without a closing possessive (a lone capitalised word
    that only starts the sentence, or a common word, is not a name); in Chinese text, runs of
    Latin-script words."""
    found = [m.group(1).strip() for q in (_QUOTED, _APOSTROPHE_QUOTED) for m in q.finditer(text)]
    found.sort(key=text.find)
    pattern = _LATIN_IN_CJK if _CJK.search(text) else _CAPS
    unquoted = _QUOTE_APOSTROPHE.sub(" ", text)  # 'Dustin Hoffman' → Dustin Hoffman, same offsets
    for m in pattern.finditer(unquoted):
        span = m.group(0).strip(" .,;:!?'’-&")
        words = span.split()
        while words and words[0].lower() in _COMMON:
            words = words[1:]
        while words and words[-1].lower() in _COMMON | {"of", "the", "de", "and", "&"}:
            words = words[:-1]
        if not words:
            continue
        words[-1] = _POSSESSIVE.sub("", words[-1])  # Dustin Hoffman's → Dustin Hoffman
        lone_start = len(words) == 1 and m.start() == _first_word_at(unquoted)
        if lone_start and pattern is _CAPS:
            continue
        if len(words) == 1 and len(words[0]) < 2:
            continue
        found.append(" ".join(words))
    return list(dict.fromkeys(f for f in found if f and not f.isdigit()))


def _first_word_at(text: str) -> int:
    m = re.search(r"\w", text)
    return m.start() if m else 0


_TRAILING_NUMBERS = re.compile(r"(?:\s+\d[\d,.]*)+$")


def _name_known(name: str, known: str) -> bool:
    """The name occurs in the evidence (or, for a run of names, each of its parts does; or,
    for a name followed by numbers, the name does: the numbers are checked as numbers)."""
    n = normalise(name)
    if _occurs(n, known):
        return True
    head = _TRAILING_NUMBERS.sub("", n)  # "SomethingTotallyDifferent 1967": a column, its value
    if head != n and head and _occurs(head, known):
        return True
    words = n.split()
    for i in range(1, len(words)):  # "<column> <value>" as a row states it ("column: value")
        if _occurs(f"{' '.join(words[:i])}: {' '.join(words[i:])}", known):
            return True
    parts = [p for p in re.split(r"\s+(?:and|&)\s+|,\s*", n) if p]
    return len(parts) > 1 and all(_occurs(p, known) for p in parts)


def _occurs(needle: str, haystack: str) -> bool:
    """`needle` in `haystack` as whole words ("US" is not found in "status")."""
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None
