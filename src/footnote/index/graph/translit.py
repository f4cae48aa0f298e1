"""Transliteration keys: a Latin name and its Chinese rendering meet on one sound key.

Chinese renders a foreign name syllable by syllable (Ron Howard → 朗·霍华德, lang huo hua de).
Both sides reduce to the consonant classes a reader hears: the Latin side drops what Chinese
drops (coda n/l/r, silent final e, doubled letters) and keeps clusters (Hanks → 汉克斯, k-s);
the Chinese side is the pinyin initial of each character (pypinyin). Name parts stay apart
("L|HHD"). Keys are generated at import for every Latin name (alias rows of kind `translit`)
and for CJK mentions at question time; one differing class is tolerated through the
deletion neighbourhood (`deletes`), which an index looks up exactly, so the step scales.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from footnote.textnorm import CJK_IDEOGRAPHS

_VOWELS = frozenset("aeiouy")
_DIGRAPHS = (
    ("tch", "K"), ("sch", "S"), ("ch", "K"), ("sh", "S"), ("th", "S"), ("ph", "F"),
    ("ck", "K"), ("gh", ""), ("wh", "H"), ("qu", "KH"), ("x", "KS"),
)  # fmt: skip
_PLAIN = {"b": "B", "p": "B", "d": "D", "t": "D", "k": "K", "q": "K", "f": "F", "v": "H",
          "w": "H", "s": "S", "z": "S", "j": "K"}  # fmt: skip
_PINYIN = {"b": "B", "p": "B", "m": "M", "f": "F", "d": "D", "t": "D", "n": "N", "l": "L",
           "g": "K", "k": "K", "h": "H", "j": "K", "q": "K", "x": "S", "zh": "K", "ch": "K",
           "sh": "S", "r": "L", "z": "S", "c": "S", "s": "S", "w": "H"}  # fmt: skip
_SEPARATORS = "·・•‧\\-－"
_HAN_NAME = re.compile(f"[{CJK_IDEOGRAPHS}]+(?:[{_SEPARATORS}][{CJK_IDEOGRAPHS}]+)+")


def _latin_part(token: str) -> str:
    t = unicodedata.normalize("NFKD", token).encode("ascii", "ignore").decode().lower()
    t = re.sub(r"[^a-z]", "", t)
    if len(t) > 3 and t.endswith("e") and t[-2] not in _VOWELS:
        t = t[:-1]  # silent final e
    t = re.sub(r"(.)\1", r"\1", t)
    if t.endswith("ng"):
        t = t[:-1]
    for a, b in _DIGRAPHS:
        t = t.replace(a, b)
    out = []
    for i, c in enumerate(t):
        nxt = t[i + 1] if i + 1 < len(t) else ""
        onset = nxt in _VOWELS and nxt != ""
        if c.isupper():
            out.append(c)
        elif c in _VOWELS:
            continue
        elif c in "nm":  # coda n is nasalised away; a final m gets its own syllable (姆)
            if onset or (c == "m" and not nxt):
                out.append(c.upper())
        elif c in "rl":  # coda r is silent, coda l becomes 尔 (no initial)
            if onset:
                out.append("L")
        elif c == "h":
            if onset:
                out.append("H")
        elif c == "c":
            out.append("S" if nxt in ("e", "i", "y") and nxt else "K")
        elif c == "g":
            out.append("K")
        elif c in _PLAIN:
            out.append(_PLAIN[c])
    return "".join(out)


def latin_key(name: str) -> str:
    """The sound key of a Latin-script name ("Ron Howard" → "L|HHD"); "" when not Latin."""
    if any(ch.isalpha() and ord(ch) >= 0x250 for ch in name):
        return ""
    parts = [_latin_part(t) for t in re.split(r"[\s\-.]+", name) if t]
    return "|".join(p for p in parts if p)


def han_key(text: str) -> str:
    """The sound key of a Chinese transliteration ("朗·霍华德" → "L|HHD"); "" without Han
    (or without pypinyin, the `graph` extra: then only aliases and vectors cross scripts)."""
    try:
        from pypinyin import Style, pinyin
    except ImportError:  # pragma: no cover - the extra is installed by scripts/setup
        return ""

    parts = [p for p in re.split(f"[{_SEPARATORS}]", text) if p]
    out = []
    for part in parts:
        if not re.fullmatch(f"[{CJK_IDEOGRAPHS}]+", part):
            return ""
        initials = [s[0] for s in pinyin(part, style=Style.INITIALS, strict=False)]
        out.append("".join(_PINYIN.get(i, "") for i in initials))
    return "|".join(p for p in out if p)


def deletes(key: str) -> set[str]:
    """The key with one class deleted (the deletion neighbourhood of edit distance 1)."""
    return {key[:i] + key[i + 1 :] for i in range(len(key)) if key[i] != "|"}


def han_names(question: str, max_part: int = 5) -> Iterator[str]:
    """Spans of `question` that may be a transliterated name ("朗·霍华德导演过…" yields
    "朗·霍华德", "朗·霍华", …): the outer parts of a ·-joined run cut to every length up to
    `max_part`, longest first."""
    for m in _HAN_NAME.finditer(question):
        span = m.group(0)
        first_end = re.search(f"[{_SEPARATORS}]", span)
        last_start = max(span.rfind(s) for s in "·・•‧-－")
        assert first_end is not None
        head, tail = span[: first_end.start()], span[last_start + 1 :]
        middle = span[first_end.start() : last_start + 1]
        cuts = [
            (head[len(head) - a :], tail[:b])
            for a in range(min(len(head), max_part), 0, -1)
            for b in range(min(len(tail), max_part), 0, -1)
        ]
        for h, t in sorted(cuts, key=lambda c: -(len(c[0]) + len(c[1]))):
            yield h + middle + t
