"""Text normalisation shared by the verifier and the evaluator (one definition of "matches").

`normalise` folds what PDF extraction and typing vary on: Unicode compatibility forms
(full/half-width, ligatures), case, hyphenation at line breaks, whitespace, and spaces
between CJK characters. Numbers with their scale and unit are
`footnote.numbers` (re-exported here: "1.2 million", "120万" and "1,200,000" compare equal). Also the one home of the CJK character
ranges, the sentence splitter and the stop-word lists.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from footnote.numbers import Quantity as Quantity
from footnote.numbers import looks_like_year as looks_like_year
from footnote.numbers import parse_number as parse_number
from footnote.numbers import quantities as quantities
from footnote.numbers import same_quantity as same_quantity
from footnote.numbers import stem as stem
from footnote.numbers import stem_inflected as stem_inflected
from footnote.numbers import unmatched_numbers as unmatched_numbers
from footnote.numbers import year_ranges as year_ranges

CJK_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""CJK ideograph ranges (extension A, unified, compatibility), for character classes."""
CJK_RE = re.compile(f"[{CJK_IDEOGRAPHS}]")
"""One CJK ideograph."""
CJK_RUN_RE = re.compile(f"[{CJK_IDEOGRAPHS}]+")
"""A run of CJK ideographs."""
CJK_WIDE = CJK_IDEOGRAPHS + "\u3000-\u30ff\uff00-\uffef"
"""Ideographs plus CJK punctuation, kana and full-width forms: text written without spaces."""
_CJK = CJK_WIDE

# fmt: off
STOP_WORDS_EN = frozenset([
    "a", "about", "also", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "here", "how", "i",
    "if", "in", "into", "is", "it", "its", "may", "might", "no", "not", "of", "on", "or",
    "our", "over", "should", "so", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "yes", "you", "your",
])
"""English function words: dropped from search queries and from content-word overlap."""
STOP_WORDS_ZH = frozenset([
    "的", "了", "是", "在", "和", "与", "及", "或", "也", "都", "而", "其", "该", "这", "那", "一个", "我们",
    "他们", "什么", "怎么", "怎样", "如何", "哪些", "哪个", "是否", "为什么", "一种", "这个", "那个", "这些", "那些", "以及",
    "或者", "还是", "可以", "进行", "使用", "通过", "对于", "关于", "其中", "因为", "所以", "如果", "但是", "没有", "主要",
])
"""Chinese function words and characters, likewise."""
QUESTION_WORDS_EN = frozenset([
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "list", "show", "give", "find", "tell", "name", "the", "a",
    "an", "in", "on", "of", "for", "and", "or", "i", "me", "my", "please", "can", "could",
])
"""Words that open or pad a question ("list", "show me", "please"): never part of a name."""
FREQUENT_WORDS = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "de", "der", "die", "et", "for",
    "from", "has", "have", "in", "is", "it", "la", "le", "not", "of", "on", "or", "our",
    "that", "the", "this", "to", "und", "was", "we", "which", "with",
])
"""The most frequent words of English, French, German and Spanish: a text layer with hardly any
of them is probably shifted glyphs, not language."""
# fmt: on


def has_cjk(text: str) -> bool:
    """Whether `text` contains a CJK ideograph."""
    return CJK_RE.search(text) is not None


_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x3000, 0x30FF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0xAC00, 0xD7AF),
    (0x20000, 0x2FFFF),
)
_CJK_CHAR = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _CJK_RANGES) + "]")
_CJK_LETTER = re.compile(
    "[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u3041-\u3096\u30a1-\u30fa\uac00-\ud7af"
    "\uff21-\uff3a\uff41-\uff5a\U00020000-\U0002ffff]"
)
_LATIN_LETTER = re.compile("[A-Za-z]")


def is_cjk(ch: str) -> bool:
    """True for Han (incl. extension B+), kana, hangul, CJK punctuation and full-width forms."""
    o = ord(ch)
    return any(a <= o <= b for a, b in _CJK_RANGES)


def count_cjk(text: str) -> int:
    """How many characters of `text` are CJK (the ranges of `is_cjk`)."""
    return len(_CJK_CHAR.findall(text))


def joined_sentences(texts: Iterable[str]) -> str:
    """Sentences as one text: a space between them, none after a full-width stop
    ("…1999）。Red River…", as Chinese is written)."""
    out = ""
    for t in texts:
        out += t if not out or out[-1] in "。！？；" else " " + t
    return out


def text_lang(text: str) -> str:
    """The language of a text by its script: "ja" when kana make up a tenth of the CJK-wide
    letters, "ko" when Hangul dominates, "zh" when Han characters dominate the letters (a Han
    character counts as roughly one word, about four Latin letters), else "en"."""
    han = kana = hangul = latin = 0
    for ch in text:
        o = ord(ch)
        if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D:
            kana += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
            hangul += 1
        elif is_cjk(ch):
            if ch.isalpha() or 0x4E00 <= o <= 0x9FFF:
                han += 1
        elif ch.isascii() and ch.isalpha():
            latin += 1
    if hangul * 2 >= max(1, han + kana) and hangul * 2 >= latin and hangul:
        return "ko"
    wide = han + kana
    if wide == 0 or wide * 4 < latin:
        return "en"
    return "ja" if kana * 10 >= wide else "zh"


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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[“])|(?<=[。！？；])")
_ABBREV = re.compile(
    r"(?:\bet al|\be\.g|\bi\.e|\bFig|\bEq|\bvs|\bcf|\bNo|\bSec|\bal|\bDr|\bMr|"
    r"\bMs|\bpp|\bp|\bvol|\b[A-Z])\.$"
)


def split_sentences(text: str) -> list[str]:
    """Sentences of English or Chinese text, not split after common abbreviations (e.g., Fig.)."""
    out: list[str] = []
    for part in _SENTENCE_END.split(text.strip()):
        part = part.strip()
        if not part:
            continue
        if out and _ABBREV.search(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


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


_jieba_lock = threading.Lock()
_jieba: Any = None


def jieba_segmenter() -> Any:
    """The jieba module, initialised once per process (its dictionary loads on first use; quiet
    logging): the one Chinese word segmenter of search, the graph gate and research."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
    return _jieba


def number_runs(numbers: Sequence[int]) -> str:
    """'1–3, 7' from [1, 2, 3, 7] (pages, card positions)."""
    parts: list[str] = []
    start = prev = None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(parts)
