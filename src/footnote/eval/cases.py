"""The generic evaluation case format (JSON Lines) and its validation.

One case per line:
`{"id", "paper", "question", "type", "answer": str|null, "accept": [str|number],
"evidence": [{"page", "quote"}], "notes", "lang"?, "answers"?, "accept_all"?, "accept_min"?}`.
`answer: null` means the right behaviour is a refusal. `paper` is resolved against a root
folder (default: the dataset file's folder). `answers` (optional) holds more gold answers for
token F1. An answer matches when it contains *every* `accept_all` string and at least
`accept_min` (default 1) of the `accept` strings. Type `figure`: the answer is in a figure (an
answerable question a text-only pipeline may miss; reported as its own group). Optional
`answer_type` (one of `ANSWER_TYPES`: what kind of answer the question asks for) and `parts`
(how many things a multi-part question asks, ≥ 2) are what answer-type scoring reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from footnote.errors import UsageError
from footnote.textnorm import text_lang
from footnote.verify.question import AnswerType

QUESTION_TYPES = (
    "fact_lookup",
    "table_value",
    "concept",
    "cross_section",
    "counterfactual",
    "unanswerable",
    "numeric_trap",
    "figure",
)
ANSWER_TYPES: tuple[str, ...] = get_args(AnswerType)
"""What kind of answer a question asks for (a case's `answer_type`)."""
_KEYS = {"id", "paper", "question", "type", "answer", "accept", "evidence", "notes", "lang"}
_OPTIONAL = {"answers", "accept_all", "accept_min", "answer_type", "parts"}


class CaseError(UsageError):
    """A dataset line is not a valid case; the message names the file and line."""


@dataclass(frozen=True)
class GoldEvidence:
    """A passage the answer should cite: its page (None: any page) and a quote from it."""

    page: int | None
    quote: str


@dataclass(frozen=True)
class Case:
    """One evaluation question about one paper."""

    id: str
    paper: str
    question: str
    type: str
    answer: str | None
    accept: tuple[str | float, ...] = ()
    evidence: tuple[GoldEvidence, ...] = ()
    notes: str = ""
    lang: str = "en"
    answers: tuple[str, ...] = field(default=())
    accept_all: tuple[str, ...] = ()
    """Strings the answer must all contain (besides `accept_min` of `accept`)."""
    accept_min: int = 1
    answer_type: str | None = None
    """One of `ANSWER_TYPES` (None: not annotated)."""
    parts: int = 1
    """How many things the question asks (≥ 2: a multi-part question)."""

    @property
    def unanswerable(self) -> bool:
        """True when the right behaviour is a refusal."""
        return self.answer is None


detect_lang = text_lang
"""`zh` or `en`: the one language rule (`textnorm.text_lang`)."""


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def parse_case(obj: Any) -> Case:
    """Validate one decoded JSON object; ValueError with a plain message when it is wrong."""
    _need(isinstance(obj, dict), "a case must be a JSON object")
    unknown = set(obj) - _KEYS - _OPTIONAL
    _need(not unknown, f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_KEYS | _OPTIONAL)}")
    for key in ("id", "paper", "question", "type"):
        _need(key in obj, f'missing required field "{key}"')
    _need("answer" in obj, 'missing field "answer" (use null when the case should be refused)')
    cid, paper, question, qtype = obj["id"], obj["paper"], obj["question"], obj["type"]
    _need(isinstance(cid, str | int) and str(cid) != "", '"id" must be a non-empty string')
    _need(isinstance(paper, str) and paper.strip() != "", '"paper" must be a non-empty path')
    _need(isinstance(question, str) and question.strip() != "", '"question" must be text')
    _need(
        qtype in QUESTION_TYPES, f'"type" is {qtype!r}; expected one of {", ".join(QUESTION_TYPES)}'
    )
    answer = obj["answer"]
    _need(answer is None or isinstance(answer, str), '"answer" must be a string or null')
    accept = obj.get("accept", [])
    _need(
        isinstance(accept, list)
        and all(isinstance(a, str | int | float) and not isinstance(a, bool) for a in accept),
        '"accept" must be a list of strings and numbers',
    )
    evidence = []
    for i, ev in enumerate(obj.get("evidence", [])):
        _need(
            isinstance(ev, dict) and isinstance(ev.get("quote"), str),
            f"evidence[{i}] needs a quote",
        )
        page = ev.get("page")
        _need(
            page is None or (isinstance(page, int) and page >= 1), f"evidence[{i}].page must be ≥ 1"
        )
        evidence.append(GoldEvidence(page, ev["quote"]))
    answers = obj.get("answers", [])
    _need(
        isinstance(answers, list) and all(isinstance(a, str) for a in answers),
        '"answers" must be strings',
    )
    notes = obj.get("notes", "")
    _need(isinstance(notes, str), '"notes" must be a string')
    accept_all = obj.get("accept_all", [])
    _need(
        isinstance(accept_all, list) and all(isinstance(a, str) for a in accept_all),
        '"accept_all" must be a list of strings',
    )
    accept_min = obj.get("accept_min", 1)
    _need(isinstance(accept_min, int) and accept_min >= 1, '"accept_min" must be ≥ 1')
    answer_type = obj.get("answer_type")
    _need(
        answer_type is None or answer_type in ANSWER_TYPES,
        f'"answer_type" is {answer_type!r}; expected one of {", ".join(ANSWER_TYPES)}',
    )
    parts = obj.get("parts", 1)
    _need(
        isinstance(parts, int) and not isinstance(parts, bool) and parts >= 1,
        '"parts" must be ≥ 1',
    )
    return Case(
        id=str(cid),
        paper=paper,
        question=question,
        type=qtype,
        answer=answer,
        accept=tuple(a if isinstance(a, str) else float(a) for a in accept),
        evidence=tuple(evidence),
        notes=notes,
        lang=str(obj.get("lang") or detect_lang(question)),
        answers=tuple(answers),
        accept_all=tuple(accept_all),
        accept_min=accept_min,
        answer_type=answer_type,
        parts=parts,
    )


def read_cases(path: Path) -> list[Case]:
    """Every case of a JSONL file; CaseError `file:line: problem` on the first bad line."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                case = parse_case(json.loads(line))
            except json.JSONDecodeError as exc:
                raise CaseError(
                    f"{path}:{n}: not valid JSON ({exc.msg} at column {exc.colno})"
                ) from exc
            except ValueError as exc:
                raise CaseError(f"{path}:{n}: {exc}") from exc
            if case.id in seen:
                raise CaseError(
                    f"{path}:{n}: duplicate id {case.id!r} (first on line {seen[case.id]})"
                )
            seen[case.id] = n
            cases.append(case)
    if not cases:
        raise CaseError(f"{path}: no cases")
    return cases


def case_to_dict(case: Case) -> dict[str, Any]:
    """A case as the JSON object of the generic format."""
    out: dict[str, Any] = {
        "id": case.id,
        "paper": case.paper,
        "question": case.question,
        "type": case.type,
        "answer": case.answer,
        "accept": list(case.accept),
        "evidence": [{"page": e.page, "quote": e.quote} for e in case.evidence],
        "notes": case.notes,
        "lang": case.lang,
    }
    if case.answers:
        out["answers"] = list(case.answers)
    if case.accept_all:
        out["accept_all"] = list(case.accept_all)
    if case.accept_min != 1:
        out["accept_min"] = case.accept_min
    if case.answer_type is not None:
        out["answer_type"] = case.answer_type
    if case.parts != 1:
        out["parts"] = case.parts
    return out


def write_cases(path: Path, cases: Iterable[Case]) -> None:
    """Write cases as JSON Lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case_to_dict(case), ensure_ascii=False) + "\n")


def select(
    cases: Sequence[Case],
    *,
    types: Sequence[str] = (),
    langs: Sequence[str] = (),
    limit: int | None = None,
) -> list[Case]:
    """Cases filtered by type and language, then the first `limit`."""
    bad = [t for t in types if t not in QUESTION_TYPES]
    if bad:
        raise UsageError(f"unknown question type(s) {bad}; expected {', '.join(QUESTION_TYPES)}")
    chosen = [c for c in cases if (not types or c.type in types) and (not langs or c.lang in langs)]
    return chosen[:limit] if limit is not None else chosen
