"""Settings of how ask answers and refuses (`answering.*`), and their calibration.

The answerability threshold is fitted, not chosen: `bench/ask_calibrate.py` runs the fit half of
the development set, and writes `answering_calibration.json` (package data beside this module)
with the threshold, the false-refusal bound it was fitted under, the cases, the model and the
date. `answerable_threshold = None` (the default) uses that fitted value.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import Field

from footnote.config.base import _Section

CALIBRATION_FILE = "answering_calibration.json"


class AnsweringSettings(_Section):
    """Answering: retrieval strategy, tables by structure, the answerability call and refusal."""

    retrieval: str = Field(
        "windows",
        pattern="^(windows|search)$",
        description="Order of the evidence shown: `windows` (best sentence window blended with the "
        "search rank, prose before formula/figure text, cross-section questions spread over "
        "sections, a translated query when question and paper languages differ) or `search` "
        "(the hybrid search order).",
    )
    tables: bool = Field(
        True,
        description="Answer a question that names a table's row and column from the cell, by code "
        "(the model is not asked).",
    )
    parts: bool = Field(
        True,
        description="Answer a multi-part or counterfactual question with one quoted, cited sentence "
        "per part (one call); each part is checked on its own.",
    )
    repair_quotes: bool = Field(
        False,
        description="Replace a quote that does not occur in the cited passage by the passage's "
        "sentence that holds the answer and overlaps the quote most (off: not yet measured on "
        "100 test cases; `bench/ask_quality.py --configs new,+repair` or `+extract`).",
    )
    quote_spans: bool = Field(
        False,
        description='Show the verbatim quote an answer rests on instead of a "Yes"/"No" to a '
        "question that does not ask yes or no, or of a bare value whose quote holds it and states "
        "the question's words (off: not yet measured on 100 test cases; "
        "`bench/ask_quality.py --configs new,+extract`).",
    )
    answerability: bool = Field(
        True,
        description="After composing, ask the compose model whether the cited passage answers the "
        "question (one scored yes/no call); below the threshold the answer becomes a refusal.",
    )
    answerable_threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="P(answerable) below which a composed answer is refused; None: the fitted value "
        "in the calibration file.",
    )
    translate: bool = Field(
        True,
        description="Search a translated question too when its language differs from the paper's "
        "(one short model call).",
    )
    responsive: bool = Field(
        True,
        description="Check by code that the answer answers the question asked (answer type, the "
        "counted noun and its qualifiers, yes/no only for yes/no questions, no echo, no words "
        "from outside the evidence, one value per one-value question, every part answered or "
        "said to be unanswered); the table path only for a named table or a one-value question "
        "naming the whole row and column; an answer with no supported sentence that answers is "
        "a refusal that shows no answer sentence. Off: only support is checked (the behaviour "
        "before issue #29, kept for measurement).",
    )


@cache
def calibration() -> dict[str, Any]:
    """The calibration record (package data)."""
    text = files("footnote.config").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def answerable_threshold(settings: AnsweringSettings) -> float:
    """The threshold in force: the setting, else the fitted one."""
    if settings.answerable_threshold is not None:
        return settings.answerable_threshold
    return float(calibration()["answerable_threshold"])
