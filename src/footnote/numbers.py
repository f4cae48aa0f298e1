"""Numbers in text with what they measure: the one rule for "this sentence's number is in that text".

`quantities` finds every number written with digits ("1,213", "0.85", "−3.5"), in e-notation or
powers of ten ("1e-4", "5 × 10^-5", "10⁻⁴": one number each), in English words ("three", "three
hundred thousand") or Chinese numerals ("三", "两", "十二", "一万零五百"; 十分 "very" and a lone 一
are no numbers), with
- its scale: thousand/million/billion/trillion, 万/亿/千/百万, and K/M/B written right after the
  digits ("887K", "1.5M"); a lone "m" is a metre, never a million;
- its unit and unit family: time (ms, s, hours, 秒, 年 …), length, mass, data size, frequency,
  energy, power, percent, percentage points, multipliers ("3.5x", "10 times", 倍), currency ($,
  €, 元 …), else a count with its noun ("85 annotators");
- the precision written: "about 30", "~30", "约30", "30左右" (approximate: within 10%), and the
  significant digits ("1.2 million" stands for 1.15–1.25 million; "1 million" for itself);
- ranges ("60–80%", "3 to 5 million": the unit and scale of the second end apply to the first).

`same_quantity` compares value *and* kind: "5 ms" is not "5 s" nor "5 layers", "85%" is not "85
annotators" nor 85 percentage points, "three thousand" is not "3", "1,200 ms" is "1.2 seconds".
`unmatched_numbers` lists a sentence's numbers that occur in no compatible form in a text; a year
written as one ("in 1820", "2012年") also passes when it lies inside a year range the text states
("from 2010 to 2015"; "1024–2048 tokens" is none).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import unicodedata
from dataclasses import dataclass

from footnote.number_words import (
    WORD_VALUES,
    WORDS_RUN,
    ZH_NOT_NUMBERS,
    ZH_RUN,
    chinese_value,
    english_value,
)

# -- units ----------------------------------------------------------------------------------
# (spellings, family, factor to the family's base unit); spellings are case-sensitive unless
# they are words (matched case-insensitively), so "MB" is data and "mb" is not read at all.
_UNIT_TABLE: list[tuple[tuple[str, ...], str, float]] = [
    (("ns", "nanoseconds", "nanosecond"), "time", 1e-9),
    (("μs", "µs", "us", "microseconds", "microsecond"), "time", 1e-6),
    (("ms", "msec", "milliseconds", "millisecond", "毫秒"), "time", 1e-3),
    (("s", "sec", "secs", "seconds", "second", "秒", "秒钟"), "time", 1.0),
    (("min", "mins", "minutes", "minute", "分钟"), "time", 60.0),
    (("h", "hr", "hrs", "hours", "hour", "小时", "个小时"), "time", 3600.0),
    (("days", "day", "天"), "time", 86400.0),
    (("weeks", "week", "周"), "time", 604800.0),
    (("months", "month", "个月"), "time", 2629800.0),
    (("years", "year", "年"), "time", 31557600.0),
    (("nm", "nanometres", "nanometers"), "length", 1e-9),
    (("mm", "millimetres", "millimeters", "毫米"), "length", 1e-3),
    (("cm", "centimetres", "centimeters", "厘米"), "length", 1e-2),
    (("m", "metres", "meters", "metre", "meter", "米"), "length", 1.0),
    (("km", "kilometres", "kilometers", "kilometre", "kilometer", "公里", "千米"), "length", 1e3),
    (("mg", "milligrams"), "mass", 1e-3),
    (("g", "grams", "gram", "克"), "mass", 1.0),
    (("kg", "kilograms", "kilogram", "千克", "公斤"), "mass", 1e3),
    (("bytes", "byte"), "data", 1.0),
    (("KB", "kB", "KiB"), "data", 1e3),
    (("MB", "MiB"), "data", 1e6),
    (("GB", "GiB"), "data", 1e9),
    (("TB", "TiB"), "data", 1e12),
    (("Hz",), "frequency", 1.0),
    (("kHz",), "frequency", 1e3),
    (("MHz",), "frequency", 1e6),
    (("GHz",), "frequency", 1e9),
    (("mJ",), "energy", 1e-3),
    (("J", "joules", "joule"), "energy", 1.0),
    (("kJ",), "energy", 1e3),
    (("mW",), "power", 1e-3),
    (("W", "watts", "watt"), "power", 1.0),
    (("kW",), "power", 1e3),
    (("dollars", "dollar", "USD", "美元"), "currency:USD", 1.0),
    (("euros", "euro", "EUR", "欧元"), "currency:EUR", 1.0),
    (("pounds", "GBP", "英镑"), "currency:GBP", 1.0),
    (("yuan", "RMB", "CNY", "元", "人民币"), "currency:CNY", 1.0),
    (("percent", "per cent", "%"), "percent", 1.0),
    (("percentage points", "percentage point", "pp", "个百分点", "百分点"), "points", 1.0),
    (("times", "x", "×", "倍"), "multiplier", 1.0),
]
_UNITS: dict[str, tuple[str, float]] = {}
for _spellings, _family, _factor in _UNIT_TABLE:
    for _s in _spellings:
        _UNITS[_s.lower() if len(_s) > 3 and _s.isalpha() and _s.isascii() else _s] = (
            _family,
            _factor,
        )


def _unit_alternation() -> str:
    parts = []
    for spelling in sorted(_UNITS, key=len, reverse=True):
        esc = re.escape(spelling).replace(r"\ ", r"\s+")
        parts.append(f"(?i:{esc})" if len(spelling) > 3 and spelling.isascii() else esc)
    return "|".join(parts)


_UNIT_AFTER = re.compile(rf"\s*-?\s*\\?(?P<unit>{_unit_alternation()})(?![A-Za-z])")
"""A unit after a number; LaTeX escapes its percent sign (`56\\%`)."""
_TIMES_SIGN = re.compile(r"x|×")
_NOT_TIMES = re.compile(r"\s*[\dA-Z$]")
"""A multiplier sign only when no number or name follows ("3.5x faster"; not "3 x 3",
"5 × 10^-5", "8x A100")."""


def currency_spellings(code: str) -> tuple[str, ...]:
    """How a currency (`USD`, `CNY` …) is written: its words, codes and signs."""
    family = f"currency:{code}"
    words = [s for spellings, f, _ in _UNIT_TABLE if f == family for s in spellings]
    return (*words, *(sign for sign, f in _CURRENCY_SIGNS.items() if f == family))


_CURRENCY_BEFORE = re.compile(r"(?P<cur>US\$|\$|€|£|¥|￥)\s*$")
_MATH_CLOSE = re.compile(r"(?:\\?%)?\$")
"""A LaTeX math `$` closing right after a number (`$24,783$`, `$89\\%$`): the opening `$` is
math, not a dollar."""
_CURRENCY_SIGNS = {"US$": "currency:USD", "$": "currency:USD", "€": "currency:EUR",
                   "£": "currency:GBP", "¥": "currency:CNY", "￥": "currency:CNY"}  # fmt: skip

# -- scales ---------------------------------------------------------------------------------
_SCALE_WORDS = {"thousand": 1e3, "thousands": 1e3, "million": 1e6, "millions": 1e6,
                "billion": 1e9, "billions": 1e9, "trillion": 1e12, "trillions": 1e12,
                "hundred": 1e2, "hundred thousand": 1e5, "hundred million": 1e8,
                "bn": 1e9, "mn": 1e6, "万亿": 1e12, "百万": 1e6, "千万": 1e7, "千": 1e3,
                "万": 1e4, "萬": 1e4, "亿": 1e8, "億": 1e8}  # fmt: skip
_SCALE_AFTER = re.compile(
    r"(?:\s*(?P<word>(?i:hundred(?:\s+(?:thousand|million))?|thousands?|millions?|billions?"
    r"|trillions?|bn|mn)(?![A-Za-z])"
    r"|万亿|百万|千万|[千万萬亿億]))"
    r"|(?P<suffix>[kKMB])(?![A-Za-z])|\s(?P<spaced>k)(?=\s+[a-z]{3})"
)
_SUFFIX_SCALES = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}

# -- the digits -----------------------------------------------------------------------------
_DIGITS = re.compile(
    r"(?<![A-Za-z0-9_.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d+))?"
)
"""Digits, with thousands commas and a decimal part, or a leading point (".83", a kappa)."""
_POWER = re.compile(
    r"(?<![A-Za-z0-9_.])\$?(?:(?P<m>[-+]?\d+(?:\.\d+)?)\s*(?:\\times|×|x|\*|·)\s*)?"
    r"10\s*\^\s*\{?\s*(?P<e>[-+]?\d+)\s*\}?\$?"
)
"""`5 × 10^-5`, `10^{-3}`, `1×10⁻⁴` (superscripts are folded to `^` first)."""
_SUPERSCRIPT = re.compile("(?<=10)([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_SUPER_DIGITS = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
_APPROX_BEFORE = re.compile(
    r"(?:\b(?i:about|around|approximately|approx\.?|roughly|nearly|almost|some)\s+|~\s*|≈\s*"
    r"|约[有为]?|大约[有为]?|大概[有为]?|近)$"
)
_APPROX_AFTER = re.compile(r"^\s*[\u4e00-\u9fff]?\s*(?:左右|上下(?!文))")
_REFERENCE_BEFORE = re.compile(
    r"(?:\b(?i:table|tab\.|figure|fig\.|section|sec\.|eq\.|equation|appendix|chapter|algorithm"
    r"|row|column|step|version|v\.)|表|图|第|§)\s*$"
    r"|[A-Za-z]-$"  # a name's number: SARS-CoV-2, COVID-19, GPT-3, KN-5
)
_RANGE_JOIN = re.compile(r"^\s*(?:-|–|—|~|to|and|至|到)\s*$", re.IGNORECASE)
_NOUN_AFTER = re.compile(r"\s*-?\s*([^\W\d_]{2,}|[\u4e00-\u9fff])")
_WORD_TOKEN = re.compile(r"[^\W\d_]+|\d+")
_YEAR_LIKE = re.compile(r"^(1[89]|20)\d{2}$")
_YEAR = r"(1\d{3}|20\d{2})"
_YEAR_BEFORE = re.compile(
    r"(?:\b(?i:in|from|since|during|of|by|until|till|before|after|between|and|to|years?|circa)"
    r"\s+|[于在从自至到])$"
)
_YEAR_RANGE = re.compile(
    rf"(?<![\d,.]){_YEAR}\s*年?\s*(?:-|–|—|to|until|through|至|到|~)\s*{_YEAR}(?![\d,.]\d)"
    rf"|\bbetween\s+{_YEAR}\s+and\s+{_YEAR}\b",
    re.IGNORECASE,
)
_STOP_NOUNS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "of",
        "on",
        "or",
        "than",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "with",
        "which",
        "while",
        "when",
        "per",
        "each",
        "times",
        "we",
        "they",
        "our",
        "their",
        "its",
        "there",
        "these",
        "has",
        "have",
        "had",
        "also",
        "respectively",
        "but",
        "not",
    ]
)
APPROX_TOLERANCE = 0.1
"""An approximate number ("about 30") matches values within this share of it."""


@dataclass(frozen=True)
class Quantity:
    """A number as written, its value with the scale applied, and what it measures."""

    text: str
    value: float
    percent: bool = False
    decimals: int = 0
    scale: float = 1.0
    family: str = ""
    """time | length | mass | data | frequency | energy | power | percent | currency:XXX |
    count (a noun follows) | "" (a bare number)."""
    factor: float = 1.0
    """Multiplier to the family's base unit (ms → 0.001)."""
    noun: str = ""
    """The word right after a count ("annotators" → "annotator"), by `stem`."""
    after: tuple[str, ...] = ()
    """The next few words after the number, stemmed (to match "1,213 annotated papers")."""
    approx: bool = False
    words: bool = False
    """Written in words ("three", "三") rather than digits."""
    start: int = 0
    sig: int = 0
    """Significant digits written ("1.2" → 2, "0.0001" → 1; 0 for words)."""
    unit: str = ""
    """The unit as written ("ms", "days"); for a count, whether its noun is a short lowercase
    abbreviation ("dpi") is `abbrev`."""
    abbrev: bool = False

    @property
    def base(self) -> float:
        """The value in the family's base unit."""
        return self.value * self.factor

    @property
    def step(self) -> float:
        """The precision written, in the family's base unit: "1.2 million" → 100,000, "1e-4" →
        0.0001, "91.23" → 0.01."""
        return 10.0 ** (-self.decimals) * self.scale * self.factor


_IE_PLURALS = frozenset(["movies", "cookies", "zombies", "rookies", "calories", "selfies", "pies",
                         "ties", "lies", "hippies", "smoothies", "goalies", "aunties"])  # fmt: skip
"""Plurals of nouns in -ie ("movies" → "movie", not "movy")."""


def stem(word: str) -> str:
    """The one English noun stem of the project (lower case, plural removed: "nodes" → "node",
    "studies" → "study", "classes" → "class", "boxes" → "box"; "corpus" stays), so that a
    counted noun, a question's focus and a passage's words compare across forms."""
    w = word.lower()
    if w.endswith(("ss", "us", "is")) or w in ("series", "species", "news", *_IE_PLURALS):
        return w[:-1] if w in _IE_PLURALS else w
    for suffix in ("ies", "sses", "es", "s"):
        if w.endswith(suffix) and len(w) > len(suffix) + 2:
            if suffix == "ies":
                return w[:-3] + "y"
            if suffix == "sses":
                return w[:-2]
            if suffix == "es" and not w.endswith(("ches", "shes", "xes", "zes")):
                return w[:-1]
            return w[: -len(suffix)]
    return w


def stem_inflected(word: str) -> str:
    """`stem`, with "-ing" and "-ed" also removed ("trained" → "train"), for comparing the
    content words of two texts whatever their tense."""
    w = word.lower()
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return stem(w)


def _tail(text: str, end: int) -> tuple[int, str, float, str, tuple[str, ...], str]:
    """After a number: (end, family, factor, noun, next words, unit or raw noun)."""
    m = _UNIT_AFTER.match(text, end)
    if m and not (_TIMES_SIGN.fullmatch(m["unit"]) and _NOT_TIMES.match(text, m.end())):
        unit = m["unit"]
        key = unit if unit in _UNITS else re.sub(r"\s+", " ", unit.lower())
        family, factor = _UNITS.get(key, ("", 1.0))
        if family:
            return m.end(), family, factor, "", (), unit
    after = tuple(stem(w) for w in _WORD_TOKEN.findall(text[end : end + 60])[:4])
    n = _NOUN_AFTER.match(text, end)
    raw = n.group(1) if n and n.group(1).lower() not in _STOP_NOUNS else ""
    return end, "count" if raw else "", 1.0, stem(raw) if raw else "", after, raw


def quantities(text: str) -> list[Quantity]:
    """Every number of `text` with its scale, unit family (or count noun) and approximation."""
    return list(_quantities(text))


@functools.lru_cache(maxsize=8192)
def _quantities(text: str) -> tuple[Quantity, ...]:
    """`quantities`, cached: the same evidence is checked against every sentence and round."""
    folded = _fold(text)
    found: list[Quantity] = []
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int, mantissa: str, exp: int, scale: float, words: bool) -> None:
        value = float(mantissa) * 10.0**exp * scale
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        sig = 0 if words else max(1, len(re.sub(r"\D", "", mantissa).lstrip("0")))
        q = _finish(folded, start, end, value, decimals, scale * 10.0**exp, words)
        found.append(dataclasses.replace(q, sig=sig))
        spans.append((start, max(end, q.start + len(q.text))))

    for m in _POWER.finditer(folded):
        add(m.start(), m.end(), m["m"] or "1", int(m["e"]), 1.0, False)
    for m in _DIGITS.finditer(folded):
        if any(a <= m.start() < b for a, b in spans):
            continue
        end, scale, raw = m.end(), 1.0, m.group(0).replace(",", "")
        if m["exp"] is not None:  # 1e-4: one number, never "1" and "4"
            add(m.start(), end, raw[: raw.lower().index("e")], int(m["exp"]), 1.0, False)
            continue
        s = _SCALE_AFTER.match(folded, end)
        if s:
            word = re.sub(r"\s+", " ", s["word"].lower()) if s["word"] else ""
            scale = _SCALE_WORDS[word] if word else _SUFFIX_SCALES[s["suffix"] or s["spaced"]]
            end = s.end()
        add(m.start(), end, raw, 0, scale, False)
    for m in WORDS_RUN.finditer(folded):
        value = english_value(m.group(0))
        if m.group(0).lower() == "one" and not _has_unit(folded, m.end()):
            continue  # "one of the" is rarely a quantity
        found.append(_finish(folded, m.start(), m.end(), value, 0, 1.0, True))
    for m in ZH_RUN.finditer(folded):
        run = m.group(0)
        if ZH_NOT_NUMBERS.match(folded, m.start()) or any(a <= m.start() < b for a, b in spans):
            continue
        if run == "一" and not _has_unit(folded, m.end()):
            continue  # 一个, 一致, 一些: rarely a quantity, like "one"
        zh = chinese_value(run)
        if zh is not None:
            found.append(_finish(folded, m.start(), m.end(), zh, 0, 1.0, True))
    found.sort(key=lambda q: q.start)
    return tuple(_join_ranges(folded, found))


def _fold(text: str) -> str:
    """NFKC with exponents made explicit (`10⁻⁴` → `10^-4`) and U+2212 minus as `-`."""
    text = _SUPERSCRIPT.sub(lambda m: "^" + m.group(1).translate(_SUPER_DIGITS), text)
    return unicodedata.normalize("NFKC", text).replace("\u2212", "-")


def _has_unit(text: str, end: int) -> bool:
    return bool(_UNIT_AFTER.match(text, end) or _SCALE_AFTER.match(text, end))


def _finish(
    text: str, start: int, end: int, value: float, decimals: int, scale: float, words: bool
) -> Quantity:
    before = text[max(0, start - 16) : start]
    family, factor, noun, unit = "", 1.0, "", ""
    after: tuple[str, ...] = ()
    cur = _CURRENCY_BEFORE.search(before)
    math = bool(cur and before.endswith("$") and _MATH_CLOSE.match(text, end))
    cur = None if math else cur
    if _REFERENCE_BEFORE.search(before):
        new_end = end  # "Table 2", "Section 3": a label, not a quantity of anything
    elif cur:
        family = _CURRENCY_SIGNS[cur["cur"]]
        new_end, start = end, start - (len(before) - cur.start())
    elif before.endswith("百分之"):
        new_end, family = end, "percent"  # 百分之十二 is 12%
    elif math and text.startswith("$", end):  # `$24,783$ tweets`: the noun is past the `$`
        family, factor, noun, after, unit = _tail(text, end + 1)[1:]
        new_end = end
    else:
        new_end, family, factor, noun, after, unit = _tail(text, end)
    approx = bool(_APPROX_BEFORE.search(before) or _APPROX_AFTER.match(text[new_end:]))
    return Quantity(
        text[start:new_end].strip(),
        value,
        family == "percent",
        decimals,
        scale,
        family,
        factor,
        noun,
        after,
        approx,
        words,
        start,
        unit=unit,
        abbrev=family == "count" and len(unit) <= 3 and unit.isascii() and unit.islower(),
    )


def _join_ranges(text: str, found: list[Quantity]) -> list[Quantity]:
    """ "60–80%", "3 to 5 million": the first end takes the second's unit and scale."""
    out = list(found)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        gap = text[a.start + len(a.text) : b.start]
        if a.family or not _RANGE_JOIN.match(gap) or not (b.family or b.scale > 1):
            continue
        scale = b.scale if a.scale == 1 and b.scale > 1 else a.scale
        out[i] = dataclasses.replace(
            a, value=a.value / a.scale * scale, percent=b.percent, scale=scale, family=b.family,
            factor=b.factor, noun=b.noun, after=b.after, approx=a.approx or b.approx,
            unit=b.unit, abbrev=b.abbrev,
        )  # fmt: skip
    return out


def _nouns_agree(a: Quantity, b: Quantity) -> bool:
    """Two counts: their nouns agree unless both are plain English words (3+ letters, neither a
    prefix of the other) and neither occurs right after the other number ("1,213 annotated
    papers" ~ "1,213 papers"; "105 cp/ml" ~ "105 copies": an abbreviation says too little)."""
    x, y = a.noun, b.noun
    if not (x.isascii() and y.isascii()) or min(len(x), len(y)) < 3:
        return True  # Chinese measure words vary freely; another language or an abbreviation
    if x.startswith(y) or y.startswith(x):
        return True
    return x in b.after or y in a.after


def _kinds_agree(a: Quantity, b: Quantity) -> bool:
    if not a.family or not b.family:
        return True  # a bare number (a table cell, "F1 of 78.4") is compatible with any kind
    if a.family == "count" and b.family == "count":
        return _nouns_agree(a, b)
    if "count" in (a.family, b.family):
        # a unit against a count noun disagrees ("5 ms" is not "5 layers", "40 GB" not "40
        # GPUs") unless the noun is a short lowercase abbreviation with the unit's initial
        # ("2 days" ~ "2 dpi")
        count, unit = (a, b) if a.family == "count" else (b, a)
        return count.abbrev and unit.family in _MEASURES and count.unit[:1] == unit.unit[:1].lower()
    return a.family == b.family


_MEASURES = frozenset(["time", "length", "mass", "data", "frequency", "energy", "power"])
"""Units a short abbreviation may stand for; percent, points, multipliers and currencies are
never counts ("85%" is not "85 annotators", "$5" is not "5 papers", "4x" is not "4 GPUs")."""


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """`a` (a claim's number) states `b`: the same kind (percent, percentage points and
    multipliers apart), the same value with units converted within a family, 85% == 0.85.
    Tolerance comes only from the precision `a` writes: "about 30" (±10%), or a rounded figure
    of two or more significant digits standing for its rounding interval against a more
    precise `b` ("1.2 million" ~ "1,213,000", "91.2%" ~ "91.23%"; "1 million" is not 1.4
    million)."""
    if not _kinds_agree(a, b):
        return False
    unit_family = a.family == b.family and a.family in _MEASURES
    x, y = (a.base, b.base) if unit_family else (a.value, b.value)
    sx, sy = (a.step, b.step) if unit_family else (a.step / a.factor, b.step / b.factor)
    candidates = [(y, sy)]
    if a.percent and not b.percent:
        candidates.append((y * 100, sy * 100))
    if b.percent and not a.percent:
        candidates.append((y / 100, sy / 100))
    for v, sv in candidates:
        if math.isclose(x, v, rel_tol=1e-9, abs_tol=1e-12):
            return True
        if a.approx and abs(x - v) <= APPROX_TOLERANCE * max(abs(x), abs(v)):
            return True
        coarser = sx > sv * (1 + 1e-9) and a.sig >= 2 and not a.words
        if coarser and abs(x - v) < 0.5 * sx * (1 - 1e-9):  # 21 is not 21.5
            return True
    return False


def looks_like_year(q: Quantity) -> bool:
    """A plain four-digit number between 1800 and 2099 ("2012年" too)."""
    return not q.percent and bool(_YEAR_LIKE.match(q.text.removesuffix("年").strip()))


def _year_context(q: Quantity, text: str) -> bool:
    """A year-like number written as a year: after "in", "from", "of", 于 …, or before 年, and
    counting nothing ("in 2012", "2012年"; not "2000 tokens", not "the size is 1999")."""
    if not looks_like_year(q) or not (q.family == "" or q.unit == "年"):
        return False
    return q.unit == "年" or bool(_YEAR_BEFORE.search(text[max(0, q.start - 12) : q.start]))


def year_ranges(text: str) -> list[tuple[int, int]]:
    """Year ranges a text states: "2010–2015", "from 2010 to 2015", "between 2010 and 2015",
    "2010年至2015年" — ends between 1800 and 2099 that count nothing ("1900–2000 tokens" and
    "1024–2048" are no ranges of years)."""
    out = []
    folded = _fold(text)
    for m in _YEAR_RANGE.finditer(folded):
        _, family, _, _, _, unit = _tail(folded, m.end())
        if family and unit != "年":
            continue
        lo, hi = (int(g) for g in (m.groups()[:2] if m.group(1) else m.groups()[2:]))
        out.append((min(lo, hi), max(lo, hi)))
    return out


def unmatched_numbers(sentence: str, evidence: str) -> list[str]:
    """Numbers of `sentence` found in no compatible form in `evidence`; a year also passes when
    it lies inside a year range the evidence states (the dates-in-range check)."""
    have = quantities(evidence)
    ranges: list[tuple[int, int]] | None = None
    missing = []
    folded = _fold(sentence)
    for q in quantities(sentence):
        if any(same_quantity(q, e) for e in have):
            continue
        if _year_context(q, folded):
            ranges = year_ranges(evidence) if ranges is None else ranges
            if any(lo <= q.value <= hi for lo, hi in ranges):
                continue
        missing.append(q.text)
    return missing


# -- one number as a value (settings tables, computation inputs) ------------------------------
_SCI_VALUE = re.compile(
    r"^\$?\s*(?:(?P<m>[-+]?\d+(?:\.\d+)?)\s*(?:\\times|×|x|\*|·)\s*)?10\s*\^\s*\{?\s*(?P<e>[-+]?\d+)"
    r"\s*\}?\s*\$?$"
)
_E_VALUE = re.compile(r"^(?P<m>[-+]?\d+(?:\.\d+)?)\s*[eE]\s*(?P<e>[-+]?\d+)$")
_UNIT_TAIL = re.compile(r"\s*(?:%|[A-Za-z\u4e00-\u9fff][\w\u4e00-\u9fff ]*)$")


def parse_number(text: str) -> float | None:
    """The value of a text that is one number, written any usual way — `2e-5`, `5\\times
    10^{-5}`, `10^{-3}`, `3,177`, `887K`, `1.2 million`, `12 万`, `three` — possibly followed by
    a unit word (`50 tokens`, `80%` gives 80); None when it is not exactly one number."""
    t = _fold(text).strip()
    if t.lower() in WORD_VALUES:
        return float(WORD_VALUES[t.lower()])
    for pattern in (_SCI_VALUE, _E_VALUE):
        m = pattern.match(t)
        if m:
            mantissa = float(m["m"]) if m["m"] else 1.0
            return mantissa * 10.0 ** int(m["e"])
    found = quantities(t)
    if len(found) != 1:
        return None
    q = found[0]
    rest = t.replace(q.text, "", 1) if q.text in t else None
    if rest is None or (rest.strip() and not _UNIT_TAIL.fullmatch(rest)):
        return None
    return q.value
