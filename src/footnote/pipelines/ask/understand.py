"""Understand a question: its type, key terms, explicit table/figure/section references, language."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from footnote.ingest.captions import question_refs
from footnote.textnorm import quantities, text_lang
from footnote.verify.checks import content_tokens

QuestionType = Literal["fact_lookup", "table_value", "concept", "cross_section", "counterfactual"]


class Understanding(BaseModel):
    """The schema-validated reading of a question."""

    type: QuestionType = Field(description="What kind of question this is.")
    key_terms: list[str] = Field(default_factory=list, description="Content words to search for.")
    table_refs: list[str] = Field(default_factory=list, description="Tables named, e.g. '2'.")
    figure_refs: list[str] = Field(default_factory=list, description="Figures named, e.g. '3'.")
    section_refs: list[str] = Field(default_factory=list, description="Sections named, e.g. '4.1'.")
    lang: Literal["en", "zh"] = Field("en", description="Language of the question.")
    yes_no: bool = Field(False, description="Whether the question expects yes or no.")


_SECTION = re.compile(r"\b(?:section|sec\.|§)\s*(\d+(?:\.\d+)*)|第\s*(\d+)\s*[节章]", re.IGNORECASE)
_YES_NO = re.compile(
    r"^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b|吗[?？]?$|是否",
    re.IGNORECASE,
)
_COUNTERFACTUAL = re.compile(r"\bwhat if\b|\bwould\b.*\bif\b|\bhad\b.*\bwould\b|假如|如果.*会|假设")
_CROSS = re.compile(
    r"\bcompare|\bcomparison|\bdifference|\bdiffer\b|\bversus\b|\bvs\.?\b|\bboth\b|\brelationship\b"
    r"|比较|区别|差异|对比",
    re.IGNORECASE,
)
_CONCEPT = re.compile(
    r"^(?:what is|what are|define|explain|describe)\b|什么是|是什么|解释|定义", re.I
)
_TABLE_VALUE = re.compile(
    r"\bhow (?:many|much)\b|\bwhat (?:percentage|score|accuracy|value|number)\b|\bscore\b|\baccuracy\b"
    r"|\bf1\b|多少|几个|百分之|准确率|得分",
    re.IGNORECASE,
)


def _refs(pattern: re.Pattern[str], text: str) -> list[str]:
    return list(dict.fromkeys(next(g for g in m.groups() if g) for m in pattern.finditer(text)))


def understand_by_rules(question: str) -> Understanding:
    """Classify a question with patterns (fast, deterministic)."""
    q = question.strip()
    tables = question_refs("table", q)
    qtype: QuestionType
    if _COUNTERFACTUAL.search(q):
        qtype = "counterfactual"
    elif tables or (_TABLE_VALUE.search(q) and not _CONCEPT.search(q)):
        qtype = "table_value"
    elif _CROSS.search(q):
        qtype = "cross_section"
    elif _CONCEPT.search(q):
        qtype = "concept"
    else:
        qtype = "fact_lookup"
    terms = list(dict.fromkeys(content_tokens(q)))
    terms += [x.text for x in quantities(q) if x.text not in terms]
    return Understanding(
        type=qtype,
        key_terms=terms[:16],
        table_refs=tables,
        figure_refs=question_refs("figure", q),
        section_refs=_refs(_SECTION, q),
        lang="zh" if text_lang(q) == "zh" else "en",
        yes_no=bool(_YES_NO.search(q)),
    )
