"""Answers from graph rows: sentences citing `row:<n>` ids, from the `compose` role or from
deterministic templates, each checked by the gate (`verify.graph_answer` → `verify.gate`)
against the rows it was shown; the model's sentences also by the judge when one is given
(templates are written from the row values, so their values are checked but not judged).
When the model's sentences state what the rows lack, the rows do not answer the question:
no template then renders them as if they did (`asked_gap` says what the graph holds instead).
Rows the model's checked sentences leave out are added as template sentences, so a list is
answered whole (`uncovered_rows`).
"""

from __future__ import annotations

import math
import re
import secrets
import string
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from footnote.errors import ModelError
from footnote.index.graph.align import Alignment
from footnote.models.base import Message
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.numbers import stem_inflected
from footnote.pipelines.graph import wording
from footnote.pipelines.graph.clarify import QUERY_WORDS, lacks
from footnote.pipelines.graph.understand import squeezed
from footnote.prompts import load_prompt
from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.textnorm import CJK_RE, CJK_RUN_RE, text_lang
from footnote.types import Sentence
from footnote.verify.checks import Judge
from footnote.verify.graph_answer import (
    GraphVerdict,
    ShownRows,
    row_id,
    schema_words,
    unsupported_words,
    value_text,
    verify_graph_answer,
)


class _Sent(BaseModel):
    text: str
    rows: list[str] = Field(default_factory=list, description="Row ids like row:0")


class _Composed(BaseModel):
    sentences: list[_Sent]


@dataclass(frozen=True)
class Composed:
    """Checked sentences, the verdict they came from, and which composer wrote them."""

    sentences: tuple[Sentence, ...]
    verdict: GraphVerdict
    method: str = "template"
    discarded: GraphVerdict | None = None
    """The model's verdict when none of its sentences passed and templates were used."""
    completed: int = 0
    """Rows the model's sentences left out, added as template sentences."""

    @property
    def fabricated(self) -> int:
        """Row ids the composer cited that it was never shown."""
        return self.verdict.fabricated

    @property
    def dropped(self) -> int:
        """Sentences that failed a check."""
        return self.verdict.dropped


THE_ANSWER = {"en": "The answer is {}.", "zh": "答案是 {}。"}
"""A lone value's sentence, by the question's language."""


def spoken(v: Any) -> str:
    """A row value as a sentence says it: a float's long tail rounded to four significant
    digits (37.979166666666664 → 37.98; two decimals from 1000 up). The rows keep every digit,
    and the number check reads a rounded figure against them as its rounding interval."""
    full = value_text(v)
    if not isinstance(v, float) or v.is_integer() or not math.isfinite(v) or abs(v) < 1e-3:
        return full
    text = f"{v:.2f}" if abs(v) >= 1000 else f"{v:.4g}"
    return text if len(text) < len(full) else full


def template_sentences(
    rows: GraphRows,
    answer_template: str,
    max_rows: int,
    only: Collection[int] | None = None,
    lang: str = "en",
) -> list[tuple[str, list[str]]]:
    """Deterministic sentences: the intent's template per row (of the first `max_rows`, or
    the indices `only`), or a generic rendering in `lang` ("en" or "zh")."""
    out: list[tuple[str, list[str]]] = []
    shown = rows.rows[:max_rows]
    fields = {f for _, f, _, _ in string.Formatter().parse(answer_template) if f}
    for i, r in enumerate(shown):
        if only is not None and i not in only:
            continue
        values = {c: spoken(v) for c, v in zip(rows.columns, r, strict=False)}
        if answer_template and fields <= set(values):
            out.append((answer_template.format(**values), [row_id(i)]))
        elif len(rows.columns) == 1 and len(rows.rows) == 1 and not isinstance(r[0], dict):
            out.append((THE_ANSWER[lang].format(spoken(r[0])), [row_id(i)]))
        else:
            out.append((row_sentence(rows.columns, r, lang), [row_id(i)]))
    return out


def _flat(columns: Sequence[str], row: Sequence[Any]) -> tuple[list[str], list[Any]]:
    """A row with each whole node or relationship (a map) spread into its properties, its
    name or title first."""
    cols: list[str] = []
    vals: list[Any] = []
    for c, v in zip(columns, row, strict=False):
        if isinstance(v, dict) and v:
            for k in sorted(v, key=lambda k: (not _NAMING.search(k), k)):
                cols.append(str(k))
                vals.append(v[k])
        else:
            cols.append(c)
            vals.append(v)
    return cols, vals


_NAMING = re.compile(r"^(?:name|title)$|name$", re.IGNORECASE)


def row_sentence(columns: Sequence[str], row: Sequence[Any], lang: str = "en") -> str:
    """One row as a sentence: its first value, then the others by column name
    ("The Polar Express (released 2004)."; "The Polar Express（released 2004）。" in Chinese),
    not a `column: value` dump; a whole node reads as its name and properties
    ("Keanu Reeves (born 1964).")."""
    columns, row = _flat(columns, row)
    values = [spoken(v) for v in row]
    if not values:
        return ""
    pairs = [f"{c} {v}" for c, v in zip(columns[1:], values[1:], strict=False) if v]
    if lang == "zh":
        return f"{values[0]}（{'，'.join(pairs)}）。" if pairs else f"{values[0]}。"
    return f"{values[0]} ({', '.join(pairs)})." if pairs else f"{values[0]}."


_ENDS = ".!?。！？…"
_CLOSERS = "\"'”’」）)]"


def finished(text: str) -> str:
    """`text` ending as a sentence: a full stop added where it has none (。 after Chinese)."""
    t = text.rstrip()
    if not t or t[-1] in _ENDS or (t[-1] in _CLOSERS and len(t) > 1 and t[-2] in _ENDS):
        return t
    return t + ("。" if CJK_RE.match(t[-1]) else ".")


def _stated(value: str, text: str, words: set[str]) -> bool:
    """Whether `text` (its casefolded `words`) names `value`: every word of it, or for
    Chinese the value as a substring (separators and spaces ignored)."""
    if CJK_RE.search(value):
        return squeezed(value) in squeezed(text)
    tokens = re.findall(r"\w+", value.casefold())
    return bool(tokens) and all(t in words for t in tokens)


def uncovered_rows(said: Sequence[str], rows: GraphRows, max_rows: int) -> list[int]:
    """Indices of the first `max_rows` rows that no sentence of `said` names: a row is named
    when one of its values that tell the rows apart (a column whose values differ) is stated.
    One row, or rows that do not differ, leave nothing to list."""
    shown = rows.rows[:max_rows]
    if len(shown) < 2:
        return []
    width = min(len(r) for r in shown)
    telling = [c for c in range(width) if len({value_text(r[c]) for r in shown}) > 1]
    text = " ".join(said)
    words = set(re.findall(r"\w+", text.casefold()))
    out = []
    for i, r in enumerate(shown):
        keys = [k for k in (value_text(r[c]) for c in telling) if k]
        if keys and not any(_stated(k, text, words) for k in keys):
            out.append(i)
    return out


_LIMITS = re.compile(r"\b(?:LIMIT|SKIP)\s+\d+|\*\s*\d*\s*\.\.\s*\d*|`[^`]*`|\$\w+", re.I)
_NUMBER_LITERAL = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def selected_by(found: Sequence[Alignment], params: Mapping[str, Any], cypher: str) -> list[str]:
    """What the rows were selected by, beyond the parameters' values: the names of the
    entities the query chose by key ("Meat/Poultry" for categoryID 6) and the numbers written
    in the query (`released < 1990`; not its LIMIT) — a sentence may restate them."""
    keys = {value_text(v) for v in params.values()}
    names = [a.best.entity.name for a in found if a.best is not None and a.best.entity.key in keys]
    return [*names, *_NUMBER_LITERAL.findall(_LIMITS.sub(" ", cypher))]


def compose_answer(
    question: str,
    rows: GraphRows,
    *,
    model: RoleModel | None,
    answer_template: str = "",
    max_rows: int = 10,
    params: Mapping[str, Any] | None = None,
    labels: tuple[str, ...] = (),
    run_id: str | None = None,
    judge: Judge | None = None,
    vocabulary: Collection[str] | None = None,
    nothing_missing: bool = False,
    rows_asked: bool = False,
    asked_held: bool = False,
    named: Sequence[str] = (),
    bounds: Mapping[str, str] | None = None,
) -> Composed:
    """Sentences citing rows: from the model when given, else from templates; either way
    checked against the first `max_rows` rows (those the composer saw), `params`, the names
    of the entities the rows were selected by (`named`: "Meat/Poultry" for a key 6) and
    `vocabulary` (the schema's words; None: words unchecked); the model's sentences also by
    `judge` (entailment).
    No sentences (method "model") when the model stated values or words the rows lack, or
    wrote none (the rows do not answer the question) — unless the question asks for the rows
    themselves (`rows_asked`: "返回所有节点", "List the films …", with nothing asked the schema
    lacks; then they are rendered by template whatever the model wrote), or `nothing_missing` (the caller
    found nothing asked that the schema and rows lack): then a model that writes nothing is
    not believed, and the rows are rendered by template. English sentences to a Chinese
    question that fail only on words of their own ("belongs" for 属于) are rendered in Chinese
    by template too when `asked_held` (the caller found nothing asked that the schema and rows
    lack: an English word cannot be compared with the Chinese question's words)."""
    shown = ShownRows.of(rows, max_rows, params)
    shown = ShownRows(shown.rows, (*shown.context, *named))
    lang = "zh" if text_lang(question) == "zh" else "en"  # what template sentences are written in
    if model is not None:
        tag = "rows-" + secrets.token_hex(4)  # row text cannot forge a tag it never saw
        listing = "\n".join(f"{i}: {text.replace(tag, '')}" for i, text in shown.rows.items())
        msgs = [
            Message("system", load_prompt("graph_answer")),
            Message("user", f"Question: {question}\n\nRows:\n<{tag}>\n{listing}\n</{tag}>"),
        ]
        try:
            out = structured(model, msgs, _Composed, run_id=run_id, max_tokens=400, labels=labels)
            declined = not out.sentences  # the prompt: no sentences when the rows do not answer
        except ModelError:
            out, declined = _Composed(sentences=[]), False
        drafts = [(finished(s.text), s.rows) for s in out.sentences]
        verdict = verify_graph_answer(
            drafts, shown, judge=judge, question=question, vocabulary=vocabulary, bounds=bounds
        )
        if (bare := units_dropped(drafts, verdict)) is not None:  # the rows' values, bare
            verdict = verify_graph_answer(
                bare, shown, judge=judge, question=question, vocabulary=vocabulary, bounds=bounds
            )
        english = _wrong_language(verdict, lang, answer_template)
        english |= asked_held and _english_wording(drafts, verdict, lang)
        if verdict.sentences and not english:
            left = uncovered_rows([s.text for s in verdict.sentences], rows, max_rows)
            added = _checked_templates(
                rows, answer_template, max_rows, shown, vocabulary, left, lang
            )
            said = list({s.text: s for s in verdict.sentences}.values())  # a repeat said once
            sents = [*said, *added, *_more_rows(rows, max_rows, lang)]
            return Composed(tuple(sents), verdict, "model", completed=len(added))
        # English sentences that passed go to the template below, whatever else failed
        if (
            not english
            and not rows_asked
            and (
                (declined and not nothing_missing)
                or (
                    any(c.cited and any(c.missing.values()) for c in verdict.checks)
                    and not embellished(verdict, question)
                )
            )
        ):
            return Composed((), verdict, "model", verdict)  # the rows do not hold the answer
        discarded: GraphVerdict | None = verdict
    else:
        discarded = None
    verdict = _template_verdict(rows, answer_template, max_rows, shown, vocabulary, None, lang)
    sents = [*verdict.sentences, *_more_rows(rows, max_rows, lang)]
    return Composed(tuple(sents), verdict, "template", discarded)


def _wrong_language(verdict: GraphVerdict, lang: str, answer_template: str) -> bool:
    """The model's checked sentences answer a Chinese question in English where the intent
    has a sentence template (in the question's language) to render the rows with instead."""
    return (
        bool(verdict.sentences)
        and lang == "zh"
        and bool(answer_template)
        and not any(CJK_RE.search(s.text) for s in verdict.sentences)
    )


def _english_wording(
    drafts: Sequence[tuple[str, Sequence[str]]], verdict: GraphVerdict, lang: str
) -> bool:
    """English sentences to a Chinese question, each failure only on the words (gd-054: "The
    product Ikura belongs to the category Seafood." over the rows it names)."""
    failed = [c for c in verdict.checks if any(c.missing.values())]
    return (
        lang == "zh"
        and bool(failed)
        and not any(CJK_RE.search(text) for text, _ in drafts)
        and all(c.cited and {k for k, v in c.missing.items() if v} <= {"words"} for c in failed)
    )


_FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")


def units_dropped(
    drafts: Sequence[tuple[str, Sequence[str]]], verdict: GraphVerdict
) -> list[tuple[str, Sequence[str]]] | None:
    """The drafts with each currency nothing names written as its bare figure ("23.25 元" →
    "23.25") in the sentences that failed on that alone — the value is the rows', the unit the
    model's (gd-044) — or None when no sentence failed on a unit alone."""
    if len(drafts) != len(verdict.checks):
        return None
    out, changed = [], False
    for (text, ids), c in zip(drafts, verdict.checks, strict=True):
        spans = c.missing.get("units") or []
        if c.cited and spans and not any(v for k, v in c.missing.items() if k != "units"):
            for span in spans:
                if m := _FIGURE.search(span):
                    text = text.replace(span, m.group())
            changed = True
        out.append((text, ids))
    return out if changed else None


_LISTING = re.compile(
    r"(?:^|[,;.]\s*|\b(?:and|then)\s+)(?:please\s+)?(?:return|list|show|display|retrieve|"
    r"give me|get)\b|(?:^|[，,；;。]|并|然后|再)\s*请?(?:返回|列出|显示|检索|给出|获取)",
    re.IGNORECASE,
)


def is_listing(question: str) -> bool:
    """Whether the question is (or ends in) a command to return rows ("返回…", "…，并返回…",
    "List …", "… and return …"), not a question whose answer a sentence states."""
    return _LISTING.search(question) is not None


def embellished(verdict: GraphVerdict, question: str) -> bool:
    """The model's cited sentences failed on words alone, none of them a word of the (English)
    question: it added a word of its own ("ordered 1577 times", where the rows hold a total
    quantity), or stated a comparison of the query the other way round ("before Peter" for
    `name >= $peter`, in any language), which says nothing about what the rows lack, so they
    are rendered by template.
    A missing name, number or date, a word the question asked about ("grossed" for "box-office
    gross"), or a Chinese question (whose words these are not compared with) still means the
    rows do not hold the answer."""
    failed = [c for c in verdict.checks if c.cited and any(c.missing.values())]
    kinds = {k for c in failed for k, v in c.missing.items() if v}
    if not failed or not kinds <= {"words", "direction"}:
        return False
    if kinds == {"direction"}:  # the model's wording reversed the query's comparison
        return True
    if CJK_RE.search(question):
        return False
    asked = {stem_inflected(w.lower()) for w in re.findall(r"[A-Za-z]+", question)}
    return not any(
        stem_inflected(w.lower()) in asked for c in failed for w in c.missing.get("words", [])
    )


def _template_verdict(
    rows: GraphRows,
    answer_template: str,
    max_rows: int,
    shown: ShownRows,
    vocabulary: Collection[str] | None,
    only: Collection[int] | None,
    lang: str = "en",
) -> GraphVerdict:
    """Template sentences (for the rows `only`, or all shown), checked against the rows; the
    template's own words (and the generic rendering's) count as vocabulary."""
    frame = f"{answer_template} {THE_ANSWER[lang]}"
    own = {w.lower() for w in re.findall(r"[A-Za-z]+", frame)}  # the template's words
    own |= set(CJK_RUN_RE.findall(frame))
    return verify_graph_answer(
        template_sentences(rows, answer_template, max_rows, only, lang), shown,
        vocabulary=None if vocabulary is None else {*vocabulary, *own},
    )  # fmt: skip


def _checked_templates(
    rows: GraphRows,
    answer_template: str,
    max_rows: int,
    shown: ShownRows,
    vocabulary: Collection[str] | None,
    only: Sequence[int],
    lang: str = "en",
) -> tuple[Sentence, ...]:
    """The checked template sentences of the rows `only` (none when empty)."""
    if not only:
        return ()
    verdict = _template_verdict(rows, answer_template, max_rows, shown, vocabulary, only, lang)
    return verdict.sentences


def _more_rows(rows: GraphRows, max_rows: int, lang: str = "en") -> list[Sentence]:
    """A note when the answer shows only the first `max_rows` rows."""
    if len(rows.rows) > max_rows or rows.truncated:
        if lang == "zh":
            more = "还有更多" if rows.truncated else f"共 {len(rows.rows)} 行"
            return [Sentence(f"（显示前 {max_rows} 行，{more}。）", factual=False)]
        more = "more" if rows.truncated else str(len(rows.rows))
        return [Sentence(f"(Showing {max_rows} of {more} rows.)", factual=False)]
    return []


_ASKING = frozenset(
    {"about", "come", "came", "comes", "out", "get", "got", "gets", "make", "made", "makes",
     "tell", "know", "many", "much", "all", "any", "some", "every", "there", "exist", "exists"}
)  # fmt: skip


def asked_gap(
    question: str, spec: GraphSpec, rows: GraphRows, names: Sequence[str], labels: Sequence[str]
) -> tuple[str, str]:
    """Why rows do not answer `question`, in English and in Chinese (`wording`): "the graph
    does not hold X; it holds Y, Z" when the question asks for words that neither the schema
    nor the rows hold (X as written in the question; Y, Z the properties of `labels`, else of
    every label), else that the rows of the query do not state what was asked."""
    known = "\n".join([*names, *rows.columns, *(value_text(v) for r in rows.rows for v in r)])
    keywords = {w for i in spec.intents.values() for k in i.keywords for w in k.lower().split()}
    unknown = set(unsupported_words(question, known, schema_words(spec) | keywords))
    unknown -= _ASKING | QUERY_WORDS  # words of asking and of query logic ("before", "most")
    runs: list[tuple[int, int]] = []
    for m in re.finditer(r"[A-Za-z]+", question):
        if m.group(0).lower() not in unknown:
            continue
        if runs and re.fullmatch(r"[\s-]*", question[runs[-1][1] : m.start()]):
            runs[-1] = (runs[-1][0], m.end())
        else:
            runs.append((m.start(), m.end()))
    held = [lab for lab in dict.fromkeys(labels) if lab in spec.nodes] or list(spec.nodes)
    props = list(dict.fromkeys(p for lab in held for p in spec.nodes[lab].properties))
    if runs:
        asked = " and ".join(question[a:b] for a, b in runs)
        return lacks(asked, props)
    return (
        "the rows of this query do not state what the question asks: they hold "
        + ", ".join(rows.columns),
        wording.rows_lack(rows.columns),
    )
