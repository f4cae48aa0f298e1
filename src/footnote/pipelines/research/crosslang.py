"""A research question in another language than its library (a Chinese question about English
papers): the question is also searched, and its papers' figures judged, in the library's
language.

With the `understand` model bound, one library search for the question, before the first
sub-question's, tells the library's language (the language of the passages it returns). When
that differs from the question's, one call rewrites the question as a query in the library's
language; code checks the reply (JSON, one line, no link or address, in the library's
language) and adds it to every sub-question's queries, so the template planner's fixed queries
(in the question's language) are no longer the only way into the library. The same query
stands beside the question when `research.figure_relevance` decides which papers' figures are
about it (`closeness.relevant_to`): a multilingual embedder scores an English sentence lower
against a Chinese question than against its English rendering. Without a model nothing is
searched for this and the plan is unchanged; when the call is refused (budget, licence, an
invalid reply) the plan is unchanged and the plan artifact says why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel, Field, ValidationError

from footnote.errors import BudgetExceeded, LicenceRefused, ModelError
from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.jsontext import find_json_object
from footnote.pipelines.research.planner import (
    LANGUAGE_NAMES,
    UNSAFE_QUERY,
    StructuredFn,
    library_language,
)
from footnote.pipelines.research.sources import SourceLog, Sources
from footnote.prompts import data_section, render
from footnote.textnorm import text_lang
from footnote.types import Outline, SubQuestion

MAX_QUERY = 200
"""Characters of the library-language query."""
REPLY_TOKENS = 80
"""Tokens the reply may use."""


class _Reply(BaseModel):
    query: str = Field(min_length=2, max_length=MAX_QUERY)


QUERY_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": MAX_QUERY}},
    "required": ["query"],
}


@dataclass(frozen=True)
class LibraryQuery:
    """The library's language as read, the query in it (empty when none was made) and why."""

    lang: str | None
    query: str
    note: str


def in_language(text: str, lang: str) -> bool:
    """Whether `text` is written in `lang`, by its script (`textnorm.text_lang`: a stray
    full-width comma leaves an English query English)."""
    return text_lang(text) == lang


def library_query_messages(question: str, library_lang: str) -> list[Message]:
    """The prompt asking for the question as one query in the library's language."""
    prompt = render("research_library_query", language=LANGUAGE_NAMES[library_lang],
                    question=data_section(question, "QUESTION"))  # fmt: skip
    return [Message("system", "You write library search queries. You output JSON only."),
            Message("user", prompt)]  # fmt: skip


def read_library_query(
    complete: StructuredFn, question: str, library_lang: str, labels: tuple[str, ...] = ()
) -> str:
    """One call's query in `library_lang`, checked (ValueError when the reply is not JSON of
    that form, spans lines, carries a link or an address, or is in another language)."""
    reply = complete(library_query_messages(question, library_lang), QUERY_SCHEMA, labels)
    try:
        got = _Reply.model_validate(find_json_object(reply))
    except (ValidationError, ValueError, TypeError) as exc:
        raise ValueError(f"not a query: {str(exc)[:200]}") from exc
    if "\n" in got.query.strip():
        raise ValueError("a query of more than one line was refused")
    query = " ".join(got.query.split())
    if UNSAFE_QUERY.search(query):
        raise ValueError(f"a query with a link, address or markup was refused: {query[:80]!r}")
    if not in_language(query, library_lang):
        raise ValueError(f"the query is not in {LANGUAGE_NAMES[library_lang]}: {query[:80]!r}")
    return query


def library_query(
    outline: Outline, sources: Sources, budget: Budget, complete: StructuredFn | None
) -> LibraryQuery:
    """The question as a query in the library's language, when the library's language differs
    from the question's (see the module). Without a model nothing is searched: no query could
    be written."""
    if complete is None:
        return LibraryQuery(None, "", "")
    log = SourceLog()
    try:
        passages = sources.search_library(outline.question, budget, log)
    except BudgetExceeded as exc:
        return LibraryQuery(None, "", f"the library's language was not read: {exc}")
    lang = library_language([p.text for p in passages])
    if lang is None or lang == outline.lang:
        return LibraryQuery(lang, "", "")
    if lang not in LANGUAGE_NAMES:
        return LibraryQuery(lang, "", f"no query is written in the library's language ({lang})")
    labels = tuple(sorted({label for p in passages for label in p.labels}))
    try:
        query = read_library_query(complete, outline.question, lang, labels)
    except (BudgetExceeded, LicenceRefused, ModelError, ValueError) as exc:
        return LibraryQuery(
            lang, "", f"no query in the library's language: {type(exc).__name__}: {exc}"
        )
    return LibraryQuery(lang, query, f"also searched in {LANGUAGE_NAMES[lang]}: {query!r}")


def with_query(plan: Sequence[SubQuestion], query: str) -> list[SubQuestion]:
    """Every sub-question with `query` added to its queries (once)."""
    if not query:
        return list(plan)
    return [replace(sq, queries=tuple(dict.fromkeys((*sq.queries, query)))) for sq in plan]
