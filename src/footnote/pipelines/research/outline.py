"""Outline first: report kinds are fixed templates (package data `templates/*.json`); the
proposed outline is the template's items for the question, which the analyst confirms or edits
before anything is searched. Then the plan: one bounded sub-question per item, each with its
share of the run's budget."""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources
from typing import Any

from footnote.errors import UsageError
from footnote.serialize import from_plain, to_plain
from footnote.textnorm import (
    CJK_RUN_RE,
    QUESTION_WORDS_EN,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    jieba_segmenter,
    text_lang,
    tokens,
)
from footnote.types import EvidenceStandard, Outline, OutlineItem, SubQuestion

TEMPLATE_KINDS = ("players", "market_size", "regulation", "trends", "literature_review")
MAX_OUTLINE_ITEMS = 12
"""The most items an outline may have (an edit or a model's proposal with more is refused)."""


@cache
def load_template(kind: str) -> dict[str, Any]:
    """A report template by kind (UsageError naming the kinds for an unknown one)."""
    if kind not in TEMPLATE_KINDS:
        raise UsageError(
            f"unknown report template {kind!r}; templates: {', '.join(TEMPLATE_KINDS)}"
        )
    path = resources.files(__package__).joinpath(f"templates/{kind}.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


_ABOUT_PAPERS = re.compile(
    r"\b(?:these|the|this|both|two|three|four|several)\s+(?:papers?|studies|study|works?|articles?)\b"
    r"|\bin the literature\b|(?:这|那|两|几|各)[几些篇份项]*(?:论文|文章|研究|文献)"
)
"""A question about papers ("these papers", "这几篇论文"): a literature review, whatever else
it asks ("how large are the datasets in these papers" is no market-size question)."""


def about_papers(question: str) -> bool:
    """Whether the question is about papers ("these papers", "这几篇论文")."""
    return _ABOUT_PAPERS.search(question) is not None


def choose_template(question: str) -> str:
    """Literature review for a question about papers; else the template whose keywords the
    question uses most (literature review otherwise)."""
    q = question.lower()
    if about_papers(q):
        return "literature_review"
    best, hits = "literature_review", 0
    for kind in TEMPLATE_KINDS:
        n = sum(1 for kw in load_template(kind)["keywords"] if kw in q)
        if n > hits:
            best, hits = kind, n
    return best


def propose_outline(question: str, template: str | None = None, *, web: bool = True) -> Outline:
    """The template's items for this question (web search allowed per item only if `web`)."""
    question = " ".join(question.split())
    if not question:
        raise UsageError("the research question is empty")
    kind = template or choose_template(question)
    data = load_template(kind)
    items = []
    for raw in data["items"]:
        standard = from_plain(EvidenceStandard, raw.get("standard", {}))
        if not web:
            standard = EvidenceStandard(**{**to_plain(standard), "web": False})
        items.append(OutlineItem(raw["id"], raw["title"], raw["asks"], standard=standard,
                                 terms=raw.get("terms", "")))  # fmt: skip
    return Outline(question, kind, tuple(items), lang=text_lang(question))


def edit_outline(outline: Outline, data: dict[str, Any]) -> Outline:
    """The analyst's edit of an outline (the outline JSON, items added, removed or changed);
    validated by `check_items`."""
    merged = {**to_plain(outline), **data, "question": outline.question}
    try:
        edited = from_plain(Outline, merged)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"invalid outline: {exc}") from exc
    check_items(edited.items)
    return edited


def check_items(items: tuple[OutlineItem, ...], max_items: int = MAX_OUTLINE_ITEMS) -> None:
    """The rules every outline meets, edited by the analyst or proposed by a model (UsageError
    naming the first broken one): 1 to `max_items` items, ids unique and non-empty, each
    dependency an existing item, and no cycle of dependencies (a cycle would wait forever)."""
    ids = [i.id for i in items]
    if not ids:
        raise UsageError("an outline needs at least one item")
    if len(ids) > max_items:
        raise UsageError(f"an outline has at most {max_items} items (got {len(ids)})")
    if len(set(ids)) != len(ids) or not all(i.strip() for i in ids):
        raise UsageError("outline item ids must be unique and non-empty")
    needs = {i.id: set(i.depends_on) for i in items}
    for item in items:
        unknown = needs[item.id] - set(ids)
        if unknown:
            raise UsageError(f"item {item.id!r} depends on unknown items {sorted(unknown)}")
    done: set[str] = set()
    while len(done) < len(ids):  # peel off the items whose dependencies are all done
        ready = {i for i in ids if i not in done and needs[i] <= done}
        if not ready:
            cycle = sorted(set(ids) - done)
            raise UsageError(f"the outline's dependencies form a cycle among {cycle}")
        done |= ready


_GENERIC = frozenset(
    [
        "large",
        "big",
        "fast",
        "expected",
        "grow",
        "growth",
        "main",
        "much",
        "many",
        "changing",
        "heading",
        "hold",
        "held",
        "each",
        "does",
        "did",
        "how",
        "what",
        "which",
        "who",
        "where",
        "when",
        "why",
        "are",
        "is",
        "the",
        "between",
        "and",
        "its",
        "their",
        "there",
    ]
)
"""Words of the question's form, not its subject (left out of the subject of queries)."""


def words(text: str) -> list[str]:
    """The words of a text in order: Latin tokens, and each run of Chinese segmented by jieba
    into words (东南亚动力电池 → 东南亚, 动力电池), not single characters."""
    out: list[str] = []
    pos = 0
    for m in CJK_RUN_RE.finditer(text):
        out += tokens(text[pos : m.start()])
        out += [w for w in jieba_segmenter().lcut(m.group()) if w.strip()]
        pos = m.end()
    return out + tokens(text[pos:])


def _keywords(text: str, limit: int = 8) -> list[str]:
    stop = STOP_WORDS_EN | STOP_WORDS_ZH | QUESTION_WORDS_EN | _GENERIC
    kept = [t for t in words(text) if t not in stop and len(t) > (2 if t.isascii() else 1)]
    return list(dict.fromkeys(kept))[:limit]


def _entity(question: str) -> str:
    """The question's first proper name (a capitalised word not opening it), if any."""
    words = re.findall(r"[A-Za-z][\w-]+", question)
    return next((w.split("'")[0] for w in words[1:] if w[0].isupper()), "")


def plan(
    outline: Outline,
    limits: dict[str, float | None],
    *,
    reserve: float,
    parallel: int,
    max_queries: int = 3,
) -> list[SubQuestion]:
    """One sub-question per outline item, each with an equal share of the run's budget after
    the `reserve` kept for synthesis and checks (wall clock shared by `parallel` workers)."""
    n = len(outline.items)
    share = (1.0 - reserve) / max(1, n)
    waves = math.ceil(n / max(1, parallel))
    budget: dict[str, float] = {}
    for resource, limit in limits.items():
        if limit is None:
            continue
        if resource == "seconds":
            budget[resource] = round(limit * (1.0 - reserve) / max(1, waves), 1)
        else:
            budget[resource] = max(1.0, math.floor(limit * share + 1e-9))
    out = []
    subject_words = _keywords(outline.question, 5)
    subject = " ".join(subject_words)
    entity = _entity(outline.question)
    for item in outline.items:
        # the section's own words beyond the subject (a title that repeats the question
        # would otherwise only repeat the subject)
        own = [w for w in _keywords(f"{item.title} {item.asks}", 16) if w not in subject_words]
        focus = item.terms or " ".join(own[:4])
        first = " ".join(dict.fromkeys(f"{subject} {focus}".split()))
        queries = [first, outline.question]
        if entity and outline.lang == "en":
            queries.append(f"{entity} {focus}")
        queries = list(dict.fromkeys(queries))
        out.append(
            SubQuestion(
                f"sq-{item.id}",
                item.id,
                f"{item.asks} (Question: {outline.question})",
                tuple(queries[:max_queries]),
                budget=dict(budget),
                web=item.standard.web,
                depends_on=tuple(f"sq-{d}" for d in item.depends_on),
            )
        )
    return out
