"""The patterns that say what a block is, shared by every format parser: heading numbering
(English and Chinese), named headings and equation numbers (captions and list markers are in
`ingest/captions.py`)."""

from __future__ import annotations

import re

from footnote.textnorm import CJK_IDEOGRAPHS

_CN_NUM = "一二三四五六七八九十百零〇"
NUMBERED = re.compile(
    r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3}|[A-H](?:\.\d{1,2}){1,3}|[B-H]"
    r"|A(?=\s+Append|\s+Supplement)|[IVX]{1,4})\.?\s+"
    rf"(?P<rest>[A-Z{CJK_IDEOGRAPHS}].*)$"
)
CN_CHAPTER = re.compile(rf"^第[{_CN_NUM}\d]+(?P<unit>[章节部分篇])")
CN_ITEM = re.compile(rf"^(?:[{_CN_NUM}]+[、．.]|（[{_CN_NUM}]+）)")
# fmt: off
NAMED_HEADINGS = frozenset(
    {
        "abstract", "references", "bibliography", "acknowledgments", "acknowledgements",
        "acknowledgment", "introduction", "conclusion", "conclusions", "related work",
        "appendix", "appendices", "literature cited", "works cited", "discussion", "methods",
        "results", "摘要", "参考文献", "致谢", "引言", "结论", "附录", "目录", "abstract:",
    }
)
# fmt: on
REFERENCE_HEADINGS = frozenset(
    {"references", "bibliography", "literature cited", "works cited", "参考文献", "references:"}
)
EQ_NUMBER = re.compile(r"\(\s*(\d{1,3}(?:\.\d{1,3})?[a-z]?)\s*\)$")


def heading_key(text: str) -> str:
    """A heading's name without numbering or trailing punctuation, lower-cased."""
    m = NUMBERED.match(text)
    core = m.group("rest") if m else text
    return core.strip().rstrip(".:").strip().lower()


def numbered_level(text: str) -> int | None:
    """Level implied by a numbering pattern ("2.1 Data" → 2), or None."""
    m = NUMBERED.match(text)
    if m:
        num = m.group("num")
        return 1 if re.fullmatch(r"[IVX]+", num) else num.count(".") + 1
    m2 = CN_CHAPTER.match(text)
    if m2:
        return 1 if m2.group("unit") in "章部篇" else 2
    if CN_ITEM.match(text):
        return 2 if text.startswith("（") else 1
    return None
