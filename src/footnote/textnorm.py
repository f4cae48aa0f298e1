"""Text normalisation shared by the verifier and the evaluator (one definition of "matches").

`normalise` folds what PDF extraction and typing vary on: Unicode compatibility forms
(full/half-width, ligatures), case, hyphenation at line breaks, whitespace, and spaces
between CJK characters. `quantities` pulls numbers with their scale and unit so that
"1.2 million", "120万" and "1,200,000" compare equal.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*(\w)")
_SOFT_HYPHEN = re.compile("\u00ad")
_WS = re.compile(r"\s+")
_CJK_GAP = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalise(text: str) -> str:
    """Fold text for matching: NFKC, dehyphenate, lower-case, one space, no CJK gaps."""
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    text = _SOFT_HYPHEN.sub("", text)
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _DASHES.sub("-", text)
    text = _WS.sub(" ", text).strip().lower()
    return _CJK_GAP.sub("", text)


def contains(haystack: str, needle: str) -> bool:
    """True when `needle` occurs in `haystack` after normalisation of both."""
    n = normalise(needle)
    return bool(n) and n in normalise(haystack)


_TOKEN = re.compile(rf"[{_CJK}]|[a-z0-9]+(?:\.[0-9]+)?")


def tokens(text: str) -> list[str]:
    """Normalised word tokens; each CJK character is a token."""
    return _TOKEN.findall(normalise(text))


def fuzzy_contains(haystack: str, needle: str, threshold: float = 0.85) -> bool:
    """True when most of `needle`'s tokens appear in order in a window of `haystack`."""
    if contains(haystack, needle):
        return True
    n, h = tokens(needle), tokens(haystack)
    if not n or not h:
        return False
    best = 0
    for start in range(len(h)):
        if h[start] != n[0]:
            continue
        i, matched = start, 0
        for tok in n:
            window_end = min(len(h), i + 3)
            for j in range(i, window_end):
                if h[j] == tok:
                    matched += 1
                    i = j + 1
                    break
        best = max(best, matched)
    return best / len(n) >= threshold


# -- numbers --------------------------------------------------------------------------------
_SCALES: dict[str, float] = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "千": 1e3,
    "万": 1e4,
    "萬": 1e4,
    "亿": 1e8,
    "億": 1e8,
    "百万": 1e6,
    "千万": 1e7,
    "万亿": 1e12,
}
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<num>[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?)"
    r"\s*(?P<scale>thousand|million|billion|trillion|bn|mn|万亿|百万|千万|[kmb万萬亿億千](?![a-z]))?"
    r"\s*(?P<pct>%|percent|per cent|个百分点|百分点)?",
    re.IGNORECASE,
)
_YEAR_LIKE = re.compile(r"^(1[89]|20)\d{2}$")


@dataclass(frozen=True)
class Quantity:
    """A number as written, its value with the scale applied, and whether it is a percent."""

    text: str
    value: float
    percent: bool = False
    decimals: int = 0
    scale: float = 1.0


def quantities(text: str) -> list[Quantity]:
    """Numbers in `text` with scale words (million, 万, 亿 …) and percent signs applied."""
    folded = unicodedata.normalize("NFKC", text)
    found: list[Quantity] = []
    for m in _NUMBER.finditer(folded):
        raw = m["num"].replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        scale = _SCALES.get((m["scale"] or "").lower(), 1.0)
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        found.append(Quantity(m.group(0).strip(), value * scale, bool(m["pct"]), decimals, scale))
    return found


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Equal values, allowing 85% == 0.85 and rounding of the less precise one."""
    candidates = [b.value]
    if a.percent and not b.percent:
        candidates.append(b.value * 100)
    if b.percent and not a.percent:
        candidates.append(b.value / 100)
    for v in candidates:
        if math.isclose(a.value, v, rel_tol=1e-9, abs_tol=1e-9):
            return True
        # "1.2 million" vs "1,213,000": a scaled number stands for its rounding interval
        if a.scale > 1 and abs(a.value - v) <= 0.5 * 10 ** (-a.decimals) * a.scale:
            return True
    return False


def unmatched_numbers(sentence: str, evidence: str) -> list[str]:
    """Numbers in `sentence` that occur in no form in `evidence` (years and list markers too)."""
    have = quantities(evidence)
    missing = []
    for q in quantities(sentence):
        if not any(same_quantity(q, e) for e in have):
            missing.append(q.text)
    return missing


def looks_like_year(q: Quantity) -> bool:
    """A plain four-digit number between 1800 and 2099."""
    return not q.percent and bool(_YEAR_LIKE.match(q.text))
