"""The one home of caption and list-item patterns (captions in English and Chinese).

A caption starts with a label and a number: `Table 2`, `Tab. A1`, `Figure 3.1`, `Fig 4`,
`Algorithm 1`, `Listing 2`, `Chart 1`, `Exhibit 5`, `表 2`, `图 3`, `圖三`.
"""

from __future__ import annotations

import re

TABLE_LABELS = r"Table|TABLE|Tab\."
FIGURE_LABELS = r"Figure|FIGURE|Fig\.?"
OTHER_LABELS = r"Algorithm|Listing|Chart|Exhibit"
ZH_TABLE_LABELS = "表"
ZH_FIGURE_LABELS = "图|圖"
_NUMBER = r"[A-Z]?\d+(?:\.\d+)?"
_ZH_NUMBER = r"[\d一二三四五六七八九十]+(?:[.-]\d+)*"
_LABELS = f"{TABLE_LABELS}|{FIGURE_LABELS}|{OTHER_LABELS}"
_ZH_LABELS = f"{ZH_TABLE_LABELS}|{ZH_FIGURE_LABELS}"

CAPTION = re.compile(rf"^(?:{_LABELS})\s*{_NUMBER}\s*[.:|—–-]|^(?:{_ZH_LABELS})\s*{_ZH_NUMBER}")
"""A caption line: label, number and a separator (`Table 2:`), or a Chinese label and number."""
CAPTION_START = re.compile(rf"^(?:{_LABELS})\s*{_NUMBER}\b|^(?:{_ZH_LABELS})\s*{_ZH_NUMBER}")
"""A line that may start a caption (label and number, no separator needed)."""
TABLE_CAPTION = re.compile(
    rf"^(?:{TABLE_LABELS})\s*{_NUMBER}|^(?:{ZH_TABLE_LABELS})\s*{_ZH_NUMBER}"
)
"""The start of a table's caption."""
FIGURE_CAPTION = re.compile(
    rf"^(?:{FIGURE_LABELS})\s*{_NUMBER}|^(?:{ZH_FIGURE_LABELS})\s*{_ZH_NUMBER}"
)
"""The start of a figure's caption."""
LIST_START = re.compile(r"^(?:[•◦▪●○■□►∗·]|[-–*]\s|\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]\s+\S|[①-⑳])")
"""The start of a list item: a bullet, `1.`, `(a)`, `iv)` or a circled number."""

_REF = re.compile(
    rf"^(?P<label>{_LABELS}|{_ZH_LABELS})\s*(?P<num>{_NUMBER}|{_ZH_NUMBER})", re.IGNORECASE
)


def caption_ref(text: str) -> tuple[str, str] | None:
    """`("table", "2")` for `Table 2: …`, `("figure", "3")` for `图3 …`, else None."""
    m = _REF.match(text.strip())
    if m is None:
        return None
    label = m["label"].lower()
    if label.startswith("tab") or label == ZH_TABLE_LABELS:
        kind = "table"
    elif label.startswith("fig") or label in ZH_FIGURE_LABELS.split("|"):
        kind = "figure"
    else:
        kind = label
    return kind, m["num"]


def question_refs(kind: str, question: str) -> list[str]:
    """The numbers of the tables (`kind="table"`) or figures a question names ("Table 2", "表2")."""
    latin, zh = (
        (TABLE_LABELS, ZH_TABLE_LABELS) if kind == "table" else (FIGURE_LABELS, ZH_FIGURE_LABELS)
    )
    pattern = re.compile(rf"\b(?:{latin})\s*(\d+)|(?:{zh})\s*(\d+)", re.IGNORECASE)
    return list(dict.fromkeys(next(g for g in m.groups() if g) for m in pattern.finditer(question)))
