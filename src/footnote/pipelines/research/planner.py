"""A planner that reads: the outline proposed by the `understand` model for a free question
(several report kinds may combine), and the per-sub-question "what is still missing" call
that picks the next query from what was found.

No model output is trusted. The outline is parsed into a schema and checked by the same
rules as the analyst's edits (`outline.check_items`) plus the model's own bounds (item count,
id form, field lengths, the question's language); anything else falls back to today's
template outline, and the run says why. A "missing" reply is parsed the same way; a query
with a link or an address in it is refused (it could carry text out to a search provider)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError, UsageError
from footnote.models.base import Message
from footnote.models.jsontext import find_json_object
from footnote.pipelines.research.outline import (
    TEMPLATE_KINDS,
    about_papers,
    check_items,
    load_template,
    propose_outline,
)
from footnote.prompts import data_section, render
from footnote.textnorm import CJK_RUN_RE, text_lang, tokens
from footnote.types import EvidenceCard, EvidenceStandard, Outline, OutlineItem

MAX_PLANNED_ITEMS = 8
"""The most sections the model may propose (the analyst may still add more, up to
`outline.MAX_OUTLINE_ITEMS`)."""
MAX_ROUNDS = 6
"""The most search rounds of one sub-question, whatever its budget."""
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese (简体中文)"}
_NAMES_ZH = {"en": "英文", "zh": "中文"}
_ID = r"^[a-z0-9_]{1,32}$"
UNSAFE_QUERY = re.compile(r"https?:|www\.|://|@|[<>{}\[\]]", re.I)

StructuredFn = Callable[[list[Message], dict[str, object], tuple[str, ...]], str]
"""`complete(messages, json_schema, labels) -> reply text` (a budgeted, licence-gated call)."""


class PlannedItem(BaseModel):
    """One section as the model proposes it."""

    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1, max_length=120)
    asks: str = Field(min_length=3, max_length=400)
    terms: str = Field("", max_length=120)
    depends_on: list[str] = Field(default_factory=list, max_length=MAX_PLANNED_ITEMS)


class PlannedOutline(BaseModel):
    """The model's outline: the report kinds it combines and its sections."""

    kinds: list[str] = Field(default_factory=list, max_length=len(TEMPLATE_KINDS))
    items: list[PlannedItem] = Field(min_length=1, max_length=MAX_PLANNED_ITEMS)


@dataclass(frozen=True)
class Planned:
    """The proposed outline, who proposed it (`model` or `template`) and why, for the run's
    events and trace."""

    outline: Outline
    by: Literal["model", "template"]
    note: str


def _prompt_name(base: str, lang: str) -> str:
    return f"{base}_zh" if lang == "zh" else base


def plan_schema() -> dict[str, object]:
    """The JSON schema the planner's reply is asked to follow (and is parsed against)."""
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": _ID},
            "title": {"type": "string", "maxLength": 120},
            "asks": {"type": "string", "maxLength": 400},
            "terms": {"type": "string", "maxLength": 120},
            "depends_on": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["id", "title", "asks", "depends_on"],
    }
    return {
        "type": "object",
        "properties": {
            "kinds": {"type": "array", "items": {"type": "string", "enum": list(TEMPLATE_KINDS)}},
            "items": {"type": "array", "items": item, "minItems": 1, "maxItems": MAX_PLANNED_ITEMS},
        },
        "required": ["kinds", "items"],
    }


def planning_messages(question: str) -> list[Message]:
    """The planner's prompt, in the question's language, listing the report kinds."""
    kinds = "\n".join(
        f"- {kind}: " + "; ".join(i["title"] for i in load_template(kind)["items"])
        for kind in TEMPLATE_KINDS
    )
    prompt = render(_prompt_name("research_plan", text_lang(question)),
                    question=data_section(question, "QUESTION"), kinds=kinds,
                    max_items=str(MAX_PLANNED_ITEMS))  # fmt: skip
    return [Message("system", "You plan research. You output JSON only."), Message("user", prompt)]


def outline_from_reply(question: str, reply: str, *, web: bool = True) -> Outline:
    """The model's outline, validated (ValueError saying what is wrong with it)."""
    try:
        planned = PlannedOutline.model_validate(find_json_object(reply))
    except (ValidationError, ValueError, TypeError) as exc:
        raise ValueError(f"not an outline: {str(exc)[:300]}") from exc
    unknown = [k for k in planned.kinds if k not in TEMPLATE_KINDS]
    if unknown:
        raise ValueError(f"unknown report kinds {unknown}")
    other = [k for k in planned.kinds if k != "literature_review"]
    if other and about_papers(question):
        raise ValueError(f"a question about papers is a literature review, not {'+'.join(other)}")
    lang = text_lang(question)
    foreign = [p.id for p in planned.items if lang in LANGUAGE_NAMES and text_lang(p.asks) != lang]
    if foreign:
        raise ValueError(f"sections {foreign} are not written in the question's language ({lang})")
    kept, same = distinct_sections(planned.items)
    items = tuple(
        OutlineItem(p.id, section_title(p.title, p.asks, question), " ".join(p.asks.split()),
                    standard=EvidenceStandard(web=web),
                    depends_on=tuple(dict.fromkeys(same.get(d, d) for d in p.depends_on
                                                   if same.get(d, d) != p.id)),
                    terms=" ".join(p.terms.split()))
        for p in kept
    )  # fmt: skip
    try:
        check_items(items, MAX_PLANNED_ITEMS)
    except UsageError as exc:
        raise ValueError(str(exc)) from exc
    kinds = "+".join(dict.fromkeys(planned.kinds)) or "custom"
    return Outline(question, kinds, items, lang=lang)


MAX_TITLE_WORDS = 8
"""A section title longer than this, or one that repeats the question, is rewritten from what
the section asks."""
_ASKING = re.compile(
    r"^(?:what|which|how|who|where|when|why)(?:\s+(?:are|is|was|were|do|does|did|can|could|"
    r"should|much|many|the|a|an))*\s+",
    re.IGNORECASE,
)
_LOOSE_END = frozenset(
    [
        "a",
        "an",
        "and",
        "the",
        "of",
        "for",
        "in",
        "on",
        "to",
        "with",
        "by",
        "from",
        "these",
        "those",
        "their",
        "its",
    ]
)


def section_title(title: str, asks: str, question: str) -> str:
    """The model's title, or — when it is long or repeats the question (seen: a clause of the
    question cut at 120 characters) — the first words of what the section asks, without the
    asking words ("What are the methods used to …" → "Methods used to …"). Latin script only."""
    title = " ".join(title.split())
    words = title.split()
    said = set(tokens(title))
    repeats = len(words) > 4 and len(said & set(tokens(question))) / len(said) >= DUPLICATE_OVERLAP
    if CJK_RUN_RE.search(title) or (len(words) <= MAX_TITLE_WORDS and not repeats):
        return title
    short = _ASKING.sub("", " ".join(asks.split()).rstrip("?？. ")).split()[:MAX_TITLE_WORDS]
    while short and short[-1].lower() in _LOOSE_END:
        short.pop()
    if not short:
        return title
    return short[0][:1].upper() + " ".join(short)[1:]


DUPLICATE_OVERLAP = 0.8
"""Share of word tokens two sections' questions have in common (Jaccard) above which the
later one asks what the earlier one asks."""


def distinct_sections(
    items: Sequence[PlannedItem],
) -> tuple[list[PlannedItem], dict[str, str]]:
    """The sections that ask something an earlier one does not, and each dropped id → the id
    of the section it repeated (seen in the first multi-document run: the 1.5B model proposed
    "size" and "literature_review" asking the same question word for word, and both were
    researched and marked covered)."""
    kept: list[PlannedItem] = []
    same: dict[str, str] = {}
    for p in items:
        words = set(tokens(p.asks))
        for k in kept:
            other = set(tokens(k.asks))
            if words and len(words & other) / len(words | other) >= DUPLICATE_OVERLAP:
                same[p.id] = k.id
                break
        else:
            kept.append(p)
    return kept, same


def plan_outline(
    question: str, complete: StructuredFn | None, *, template: str | None = None, web: bool = True
) -> Planned:
    """The outline for a question: the model's (when `complete` is given and no `template` is
    named), validated; today's template outline when there is no planner model, the analyst
    named a template, or the model's call is refused (budget, licence) or its outline invalid."""
    fallback = propose_outline(question, template, web=web)
    if template is not None:
        return Planned(fallback, "template", f"the {template} template, as asked")
    if complete is None:
        return Planned(fallback, "template", f"the {fallback.template} template: no planner model")
    question = fallback.question  # whitespace-normalised, known non-empty
    why = ""
    try:
        reply = complete(planning_messages(question), plan_schema(), ())
        outline = outline_from_reply(question, reply, web=web)
    except BudgetExceeded as exc:
        why = f"the budget refused the planner call ({exc})"
    except (LicenceRefused, ModelError) as exc:
        why = f"the planner call failed ({type(exc).__name__}: {exc})"
    except ValueError as exc:
        why = f"the model's outline was invalid ({exc})"
    if why:
        return Planned(fallback, "template", f"the {fallback.template} template: {why}")
    return Planned(outline, "model", f"outline proposed by the model: {len(outline.items)} "
                   f"sections ({outline.template})")  # fmt: skip


# -- what is still missing ----------------------------------------------------------------


class Missing(BaseModel):
    """The model's reading of a sub-question's findings: what is unanswered, and next queries."""

    missing: list[str] = Field(default_factory=list, max_length=8)
    next_query: str = Field("", max_length=200)
    library_query: str = Field("", max_length=200)


MISSING_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "missing": {"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": 8},
        "next_query": {"type": "string", "maxLength": 200},
        "library_query": {"type": "string", "maxLength": 200},
    },
    "required": ["missing", "next_query"],
}


def _listing(cards: Sequence[str], limit: int = 12) -> str:
    shown = [" ".join(c.split())[:400] for c in cards[:limit]]
    return "\n".join(f"- {c}" for c in shown) or "(none)"


def missing_messages(
    question: str, findings: Sequence[str], known: Sequence[EvidenceCard], tried: Sequence[str],
    *, lang: str, library_lang: str | None,
) -> list[Message]:  # fmt: skip
    """The "what is still missing" prompt, in the question's language; asks for a query in the
    library's language too when that differs."""
    library_ask = ""
    if library_lang and library_lang != lang and library_lang in LANGUAGE_NAMES:
        name = (_NAMES_ZH if lang == "zh" else LANGUAGE_NAMES)[library_lang]
        library_ask = (
            f' 资料库是{name}的：请同时在 "library_query" 中给出同一检索的{name}写法。'
            if lang == "zh"
            else f' The library is in {name}: also give "library_query", the same query in {name}.'
        )
    prompt = render(_prompt_name("research_missing", lang), question=question,
                    findings=data_section(_listing(findings), "FINDINGS"),
                    known=data_section(_listing([c.snippet for c in known]), "KNOWN"),
                    tried="; ".join(tried), library_ask=library_ask)  # fmt: skip
    return [Message("system", "You check research progress. You output JSON only."),
            Message("user", prompt)]  # fmt: skip


def read_missing(
    complete: StructuredFn, question: str, findings: Sequence[str],
    known: Sequence[EvidenceCard], tried: Sequence[str], *, lang: str,
    library_lang: str | None, labels: tuple[str, ...],
) -> Missing:  # fmt: skip
    """One "missing" call, its reply validated (ValueError when it is not one): queries are
    one line, without links or addresses; a listed gap needs a next query."""
    messages = missing_messages(question, findings, known, tried, lang=lang,
                                library_lang=library_lang)  # fmt: skip
    reply = complete(messages, MISSING_SCHEMA, labels)
    try:
        got = Missing.model_validate(find_json_object(reply))
    except (ValidationError, ValueError, TypeError) as exc:
        raise ValueError(f"not a reading of what is missing: {str(exc)[:300]}") from exc
    missing = [" ".join(m.split())[:300] for m in got.missing if m.strip()]
    queries = [" ".join(q.split()) for q in (got.next_query, got.library_query)]
    for q in queries:
        if UNSAFE_QUERY.search(q):
            raise ValueError(f"a query with a link, address or markup was refused: {q[:80]!r}")
    if missing and not queries[0]:
        raise ValueError("parts are missing but no next query was given")
    return Missing(missing=missing, next_query=queries[0], library_query=queries[1])


def library_language(texts: Sequence[str]) -> str | None:
    """The language of the library passages read (None when none was read)."""
    sample = " ".join(t[:600] for t in texts[:8])
    return text_lang(sample) if sample.strip() else None


def rounds_for(limits: dict[str, float | None], used: dict[str, float]) -> int:
    """How many search rounds a sub-question's budget pays for, at what its first round cost:
    for each limited resource (searches, calls, tokens, seconds), the limit over the first
    round's use; the least of them, at least 1 and at most `MAX_ROUNDS`."""
    fits = [
        int(limit // used[r])
        for r, limit in limits.items()
        if limit is not None and used.get(r, 0) > 0
    ]
    return max(1, min([MAX_ROUNDS, *fits]))
