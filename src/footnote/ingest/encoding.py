"""Bytes → text for the text, Markdown and HTML readers: one decoding rule.

1. a byte-order mark (UTF-8, UTF-16, UTF-32) decides;
2. a declared charset — `<meta charset>` / `http-equiv` in HTML, an XML declaration, an Emacs
   or Vim `coding:` line in text — is used when Python knows it and the bytes decode with it;
3. valid UTF-8 is UTF-8;
4. otherwise `charset-normalizer` guesses (Shift_JIS, EUC-JP, EUC-KR, GB18030, Big5, cp1252 …);
   a guess it is unsure of (chaos above `UNSURE_CHAOS`, or nothing fits) adds a warning, and
   the last resort is cp1252 with replacement characters (also warned about).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

UNSURE_CHAOS = 0.2
"""charset-normalizer's mess ratio above which a detected encoding is reported as a guess."""
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)  # fmt: skip
_META = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)"""
    rb"""|<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""",
    re.IGNORECASE,
)
_CODING = re.compile(rb"^[^\n]{0,80}?(?:-\*-\s*)?(?:en)?coding[:=]\s*([A-Za-z0-9_.\-]+)", re.M)


@dataclass(frozen=True)
class Decoded:
    """The text, the encoding used, and a warning when that was a guess."""

    text: str
    encoding: str
    warning: str | None = None


def declared_charset(data: bytes, *, html: bool) -> str | None:
    """The charset the document declares about itself (first 4 KiB), if Python knows it."""
    head = data[:4096]
    m = _META.search(head) if html else _CODING.search(head[:400])
    if m is None and not html:
        m = _META.search(head)
    if m is None:
        return None
    name = next(g for g in m.groups() if g).decode("ascii", "replace")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_bytes(data: bytes, *, html: bool = False) -> Decoded:
    """Decode by the rule in the module docstring."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return Decoded(data.decode(name, "replace"), name)
    declared = declared_charset(data, html=html)
    if declared is not None:
        try:
            return Decoded(data.decode(declared), declared)
        except UnicodeDecodeError:
            pass  # a wrong declaration: detect instead (and say so below)
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    best = from_bytes(data).best()
    note = f" (the declared {declared} does not fit)" if declared else ""
    if best is None:
        return Decoded(data.decode("cp1252", "replace"), "cp1252",
                       f"encoding unknown{note}: read as cp1252, some characters replaced")  # fmt: skip
    text = str(best)
    warning = None
    if best.chaos > UNSURE_CHAOS or note:
        warning = f"encoding guessed as {best.encoding} (unsure){note}"
    return Decoded(text, best.encoding, warning)
