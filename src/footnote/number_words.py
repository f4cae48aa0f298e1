"""Numbers written in words, English ("three hundred thousand") and Chinese (一万零五百): the
runs `numbers.quantities` reads and their values."""

from __future__ import annotations

import re

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
WORD_VALUES = {w: i for i, w in enumerate(_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_WORD = "|".join(sorted([*WORD_VALUES, *_MULTIPLIERS], key=len, reverse=True))
WORDS_RUN = re.compile(
    rf"\b(?:{'|'.join(sorted(WORD_VALUES, key=len, reverse=True))})"
    rf"(?:(?:\s+|-)(?:{_WORD}))*\b(?!-shot)",
    re.IGNORECASE,
)
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_SMALL = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10**4, "亿": 10**8}
ZH_RUN = re.compile("(?<!第)[零〇一二两三四五六七八九十][零〇一二两三四五六七八九十百千万亿]*")
ZH_NOT_NUMBERS = re.compile("十分(?!钟)|两者|三者")
"""Read at the run's own position: 十分 "very" (十分钟 is ten minutes), 两者/三者 "both"."""


def english_value(run: str) -> float:
    """The value of a run of English number words ("three hundred thousand")."""
    total, current = 0, 0
    for word in re.split(r"[\s-]+", run.lower()):
        if word == "and":
            continue
        if word in WORD_VALUES:
            current += WORD_VALUES[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _MULTIPLIERS:
            total += max(current, 1) * _MULTIPLIERS[word]
            current = 0
    return float(total + current)


def chinese_value(run: str) -> float | None:
    """The value of a run of Chinese numerals (一万零五百), or None where it is no number."""
    if len(run) > 1 and all(ch in _ZH_DIGITS for ch in run):  # 二〇二〇 is 2020, 二三 nothing
        zero = any(ch in "零〇" for ch in run)
        return float("".join(str(_ZH_DIGITS[ch]) for ch in run)) if zero else None
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in _ZH_DIGITS:
            if digit:  # 一千零五: a zero holds a place
                return None
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_SMALL:
            section += (1 if digit is None else digit) * _ZH_SMALL[ch]
            digit = None
        else:
            section += digit or 0
            total += max(section, 1) * _ZH_BIG[ch]
            section, digit = 0, None
    return float(total + section + (digit or 0))
