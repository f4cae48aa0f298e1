"""Text hygiene: odd Unicode, ligatures, hyphenation, CJK-aware line joining, language."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from footnote.textnorm import FREQUENT_WORDS, count_cjk, is_cjk

LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u0132": "IJ",
    "\u0133": "ij",
    "\u0152": "OE",
    "\u0153": "oe",
}
_LIG_TABLE = str.maketrans(LIGATURES)
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def join_surrogates(text: str) -> str:
    """UTF-16 surrogate pairs (per-glyph PDF text of astral characters such as math italic 𝐸)
    joined into the characters they encode; a lone half is dropped."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")


def clean_text(text: str) -> str:
    """Drop NUL/control chars and lone surrogates, expand ligatures, normalise spaces."""
    if not text:
        return ""
    text = text.translate(_LIG_TABLE).translate(_ZERO_WIDTH)
    if text.isascii():  # the common case: only ASCII control characters can be wrong
        cleaned = _ASCII_CONTROL.sub("", text)
    else:
        out = []
        for ch in text:
            if ch in "\n\t":
                out.append(ch)
                continue
            cat = unicodedata.category(ch)
            if cat in ("Cc", "Cs", "Cn") or ch == "\ufffe":
                continue
            out.append(ch)
        cleaned = "".join(out)
    cleaned = _SPACES.sub(" ", cleaned)
    return "\n".join(line.strip() for line in cleaned.split("\n")).strip()


_HYPHEN_END = re.compile(r"([A-Za-z\u00c0-\u024f]+)[-\u2010\u00ad]$")
_HYPHENS = ("-", "\u2010", "\u00ad")
_WORD_START = re.compile(r"^([a-z\u00df-\u024f]+)")


TAIL = 64
"""Characters at the end of the text joined so far that decide the next join (the last word
and what precedes it); a join looks at no more, so joining is linear in the text's length."""


def join_lines(lines: Sequence[str], vocabulary: set[str] | None = None) -> str:
    """Join a paragraph's lines: repair hyphenation, no space between CJK lines."""
    done: list[str] = []
    tail = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        tail = _join_two(tail, line, vocabulary) if tail else line
        if len(tail) > 2 * TAIL:
            done.append(tail[:-TAIL])
            tail = tail[-TAIL:]
    done.append(tail)
    return "".join(done)


def _join_two(left: str, right: str, vocabulary: set[str] | None) -> str:
    m = _HYPHEN_END.search(left) if left.endswith(_HYPHENS) else None
    if m:
        nxt = _WORD_START.match(right)
        if nxt and _should_dehyphenate(left, m.group(1), nxt.group(1), vocabulary):
            return left[:-1] + right
        if nxt or right[:1].isupper() or right[:1].isdigit():
            return left + right  # keep a real hyphen: "state-of-the-" + "art"
    if left[-1:] and right[:1] and (is_cjk(left[-1]) or is_cjk(right[0])):
        if is_cjk(left[-1]) and is_cjk(right[0]):
            return left + right
        if is_cjk(left[-1]) and not right[0].isalnum():
            return left + right
        if is_cjk(right[0]) and not left[-1].isalnum():
            return left + right
    return left + " " + right


def _should_dehyphenate(left: str, head: str, tail: str, vocabulary: set[str] | None) -> bool:
    """Soft line-end hyphen or a real one? Compound words keep their hyphen."""
    start = len(left) - len(head) - 1
    before = left[start - 1] if start > 0 else " "
    if before in "-\u2010":  # "state-of-the-" → a hyphenated compound
        return False
    if vocabulary:
        joined = (head + tail).lower()
        hyphenated = f"{head}-{tail}".lower()
        if hyphenated in vocabulary and joined not in vocabulary:
            return False
    return True


_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:-[A-Za-z\u00c0-\u024f]+)*")


def build_vocabulary(texts: Iterable[str]) -> set[str]:
    """Lower-cased words (hyphenated compounds kept whole) seen inside lines."""
    vocab: set[str] = set()
    for text in texts:
        for m in _WORD_RE.finditer(text):
            if m.end() < len(text):  # a word at the very end may be a broken one
                vocab.add(m.group(0).lower())
    return vocab


_PUA_OR_BAD = re.compile("[\ue000-\uf8ff\ufffd\x00-\x08\x0b\x0c\x0e-\x1f]")


def garbled_reason(text: str) -> str | None:
    """Why a page's text layer looks unusable (private-use, replacement, shifted glyphs)."""
    chars = [ch for ch in text if not ch.isspace()]
    if len(chars) < 40:
        return None
    bad = len(_PUA_OR_BAD.findall(text))
    if bad / len(chars) > 0.3:
        return "private-use or replacement characters"
    letters = sum(1 for ch in chars if ch.isascii() and ch.isalpha())
    cjk = count_cjk(text)
    if cjk * 4 >= letters or letters < 200:
        return None
    words = re.findall(r"[A-Za-z]+", text)
    if len(words) < 60:
        return None
    stop = sum(1 for w in words if w.lower() in FREQUENT_WORDS)
    if stop / len(words) < 0.015:
        return "text does not read as language (shifted glyph mapping?)"
    return None
