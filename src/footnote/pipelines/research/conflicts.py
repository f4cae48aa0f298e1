"""Conflicts: the same metric with different values, after normalising scale, unit, currency,
year and stock-vs-flow, is listed side by side with each source's stated scope — never
averaged, never silently picked. Values in different currencies are not compared (no exchange
rate is invented); values of different years or of a stock and a flow are different metrics.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from footnote.textnorm import (
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    looks_like_year,
    quantities,
    split_sentences,
    tokens,
)
from footnote.types import Conflict, ConflictValue, EvidenceCard, sha256_hex

_CURRENCY = [
    (re.compile(r"(?:US\$|USD|\$)\s*$"), "USD"), (re.compile(r"^\s*(?:USD|US dollars?|dollars?)\b", re.I), "USD"),
    (re.compile(r"(?:EUR|€)\s*$"), "EUR"), (re.compile(r"^\s*(?:EUR|euros?)\b", re.I), "EUR"),
    (re.compile(r"(?:GBP|£)\s*$"), "GBP"), (re.compile(r"(?:CNY|RMB|¥)\s*$"), "CNY"),
    (re.compile(r"^\s*(?:元|人民币)"), "CNY"), (re.compile(r"\b([A-Z]{3})\s*$"), "*"),
]  # fmt: skip
_UNITS = {"t": "tonne", "ton": "tonne", "tonne": "tonne", "吨": "tonne", "kt": "kilotonne",
          "kg": "kg", "mw": "MW", "gw": "GW", "kw": "kW", "mwh": "MWh", "gwh": "GWh", "kwh": "kWh",
          "km": "km", "litre": "litre", "liter": "litre", "hectare": "hectare", "ha": "hectare"}  # fmt: skip
"""Units of measure; any other noun after a number makes it a count (the noun is a metric word)."""
_STOCK = re.compile(r"installed base|\bstock\b|in operation|in use|cumulative|存量|保有量", re.I)
_SCOPE = re.compile(
    r"\bonly\b|includ|exclud|\ball (?:types|chemistries)\b|covers|counts|not comparable|scope|"
    r"hydronic|\bexcept\b|仅|包括|不包括|不含", re.I,
)  # fmt: skip
_GENERIC = frozenset(
    [
        "about",
        "around",
        "worth",
        "estimated",
        "estimate",
        "according",
        "reported",
        "reports",
        "report",
        "value",
        "valued",
        "total",
        "year",
        "years",
        "some",
        "roughly",
        "nearly",
        "approximately",
        "figure",
        "figures",
    ]
)


@dataclass(frozen=True)
class Measure:
    """One figure of a card: value (scale applied), unit, year, stock/flow and metric words."""

    card: EvidenceCard
    value: float
    unit: str
    text: str
    year: int | None
    kind: str
    words: frozenset[str]


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"


def _identifier_or_date(text: str, start: int, end: int) -> bool:
    """A number that is part of an identifier (`2024-017`, `MO-2023/44`, `BIBREF9`) or a day of a
    month (`12 March`, `March 12`), not a measure."""
    before, after = text[max(0, start - 1) : start], text[end : end + 1]
    if before in ("/", "-", "–", "#") or after in ("/", "-", "–") or (before and before.isalpha()):
        return True
    return bool(
        re.match(rf"\s*{_MONTH}\b", text[end : end + 12], re.I)
        or re.search(rf"\b{_MONTH}\s*$", text[max(0, start - 12) : start], re.I)
    )


def _date_year(text: str, start: int) -> bool:
    """A year written after a month (`31 December 2026`): a date, so it dates the figure."""
    return bool(re.search(rf"{_MONTH}\s*$", text[max(0, start - 12) : start], re.I))


def _currency(before: str, after: str) -> str | None:
    for pattern, code in _CURRENCY:
        text = before if pattern.pattern.endswith("$") else after
        m = pattern.search(text)
        if m:
            return m.group(1) if code == "*" else code
    return None


def measures(card: EvidenceCard) -> list[Measure]:
    """The figures a card's snippet states (years, rates 'per …' and list markers left out)."""
    text = card.snippet
    years = [  # a year inside an identifier (MO-2023/44) dates nothing
        (m.start(), int(m.group(0)))
        for m in re.finditer(r"(?<!\d)(?:19|20)\d{2}(?!\d)", text)
        if not _identifier_or_date(text, m.start(), m.end()) or _date_year(text, m.start())
    ]
    words = frozenset(
        t for t in tokens(text)
        if t not in STOP_WORDS_EN and t not in STOP_WORDS_ZH and t not in _GENERIC
        and not any(ch.isdigit() for ch in t) and len(t) > 1
    )  # fmt: skip
    out: list[Measure] = []
    pos = 0
    for q in quantities(text):
        at = text.find(q.text, pos)
        if at < 0:
            continue
        pos = at + len(q.text)
        if looks_like_year(q) or _identifier_or_date(text, at, pos):
            continue
        before, after = text[max(0, at - 8) : at], text[pos : pos + 30]
        if re.match(r"\s*(?:per|a|an)\s+(?:US\s+)?(?:dollar|euro|USD|EUR)\b", after, re.I):
            continue  # an exchange rate, not a measure
        unit = _currency(before, after)
        if unit is None and q.percent:
            unit = "%"
        if unit is None:
            noun = re.match(r"\s*([A-Za-z\u4e00-\u9fff]+)", after)
            word = noun.group(1).lower() if noun else ""
            unit = _UNITS.get(word, _UNITS.get(word.rstrip("s"), "count"))
        after_years = [y for y in years if 0 <= y[0] - pos <= 40]  # "45% by … 2026", "… in 2023"
        year = (after_years[0][1] if after_years else
                min(years, key=lambda y: abs(y[0] - at))[1] if years else None)  # fmt: skip
        kind = "stock" if _STOCK.search(text) else "flow"
        prefix = before.split()[-1] if before.split() and _currency(before, "") else ""
        written = f"{prefix} {q.text}" if prefix and unit.isupper() else q.text
        out.append(
            Measure(card, q.value, unit, written.strip(), year, kind, words - {unit.lower()})
        )
    return out


def _differ(a: Measure, b: Measure) -> bool:
    if math.isclose(a.value, b.value, rel_tol=0.01):
        return False
    return not (a.unit == "%" and b.unit == "%" and abs(a.value - b.value) < 0.5)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared metric words over the smaller set (0 below three shared words)."""
    shared = len(a & b)
    return shared / min(len(a), len(b)) if shared >= 3 else 0.0


def find_conflicts(
    cards: Sequence[EvidenceCard],
    origin: Callable[[EvidenceCard], str],
    scope_of: Callable[[EvidenceCard], str],
    items_of: Callable[[EvidenceCard], Sequence[str]],
    *,
    min_overlap: float = 0.3,
) -> list[Conflict]:
    """Groups of figures that disagree: same unit, year and stock/flow, overlapping metric
    words, different origins and values more than 1 % apart."""
    ms = [m for c in cards for m in measures(c)]
    parent = list(range(len(ms)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    for i, a in enumerate(ms):
        for j in range(i + 1, len(ms)):
            b = ms[j]
            if (
                a.year is not None  # a figure without its year is no metric to compare
                and a.unit == b.unit and a.year == b.year and a.kind == b.kind
                and origin(a.card) != origin(b.card)
                and _overlap(a.words, b.words) >= min_overlap and _differ(a, b)
            ):  # fmt: skip
                parent[find(j)] = find(i)
                linked |= {i, j}
    groups: dict[int, list[Measure]] = {}
    for i in sorted(linked):
        groups.setdefault(find(i), []).append(ms[i])
    out = []
    for group in groups.values():
        per_card: dict[str, Measure] = {}
        for m in group:
            per_card.setdefault(m.card.id, m)
        if len({origin(m.card) for m in per_card.values()}) < 2:
            continue
        common = Counter(w for m in per_card.values() for w in m.words)
        metric_words = [w for w, n in common.most_common() if n >= 2][:5]
        unit, year = group[0].unit, group[0].year
        metric = " ".join(metric_words) + f" ({unit}{', ' + str(year) if year else ''})"
        values = tuple(
            ConflictValue(m.card.id, m.value, m.unit, m.text, year=m.year, scope=scope_of(m.card),
                          source_title=m.card.source_title)
            for m in per_card.values()
        )  # fmt: skip
        cid = "conflict_" + sha256_hex("|".join(sorted(per_card)).encode())[:10]
        items = tuple(dict.fromkeys(i for m in per_card.values() for i in items_of(m.card)))
        out.append(Conflict(cid, metric, values, item_ids=items,
                            note="values differ; shown side by side with each source's scope, not combined"))  # fmt: skip
    return out


def scope_sentences(text: str, span: tuple[int, int] | None, radius: int = 400) -> str:
    """Sentences near a snippet that state what a figure includes or excludes."""
    if span is None:
        return ""
    lo, hi = max(0, span[0] - radius), min(len(text), span[1] + radius)
    window = text[lo:hi]
    picked = [s for s in split_sentences(window.replace("\n", " ")) if _SCOPE.search(s)]
    return " ".join(picked[:3])[:500]
