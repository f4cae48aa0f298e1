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

from footnote.textnorm import CJK_IDEOGRAPHS, CJK_RE

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
# the characters Chinese spells foreign names with (after the Xinhua name-transliteration
# tables): a word outside them (公司, 产品) is not a name said alone, whatever its key
TRANSLIT_CHARS = frozenset(
    "阿埃艾爱安昂奥澳巴拜班邦保鲍贝本比彼毕碧宾波伯博布查达戴丹道德得登迪蒂丁东杜敦多厄恩尔"
    "法凡范菲费芬丰冯佛弗伏福富盖甘冈高戈哥格根古瓜圭哈海汉豪赫黑亨洪胡华怀惠霍基吉加佳贾坚杰"
    "金津晶卡凯坎康考柯科克肯库夸奎昆拉莱赖兰朗劳勒雷蕾里理利莉丽连列林琳玲隆卢鲁路伦罗洛吕"
    "马玛迈麦曼芒梅美门蒙孟米密缪摩莫默姆穆纳娜奈南楠内妮尼纽努诺欧帕派潘庞佩彭皮珀普齐奇恰"
    "乔琼丘萨塞赛桑瑟森沙莎山尚绍舍申什施史舒斯松苏索塔泰坦汤唐特滕提汀廷通图托瓦万旺威韦维"
    "温文沃乌伍西希锡席谢辛欣休雅亚扬耶伊因英尤于约泽扎詹朱卓兹琴茨佐"
)
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


def transliteration_like(text: str) -> bool:
    """Every Han character of `text` is one Chinese spells foreign names with (凯文, 汉克斯)."""
    han = CJK_RE.findall(text)
    return bool(han) and all(ch in TRANSLIT_CHARS for ch in han)


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
