"""Does a sentence answer the question asked? Checked by code, beside "is it supported?".

A sentence can be supported by its citation and still answer another question: "Yes" to a
how-long question, "12M" (nodes *of this type*) to how many nodes in all, a count of participants
to a question about duration, a sentence that restates the question. These checks read the
question (`verify.question`) and the sentence with what it cites, and say why a sentence does not
answer. Two kinds of finding:

- **hard**: the sentence never belongs in the answer (a yes/no to a question that is not yes/no;
  an echo of the question; words no shown passage contains, i.e. the model's own knowledge; a
  second, different value for a one-value question);
- **soft**: the sentence does not answer by itself (no value of the asked type; a value that
  counts or measures something else, or is narrowed by a qualifier the question lacks). It may
  stay beside a sentence that does answer, never alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from footnote.numbers import Quantity
from footnote.textnorm import has_cjk, quantities, stem, tokens
from footnote.verify.checks import content_tokens, is_yes_no
from footnote.verify.question import (
    VALUE_TYPES,
    QuestionAnalysis,
    is_open_question,
    qualifiers_in,
    restrictive,
)

_TIME_WORDS = re.compile(
    r"\b(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|decades?|"
    r"milliseconds?|ms|s|h|overnight)\b|秒|分钟|小时|天|周|星期|个月|年",
    re.IGNORECASE,
)
_PERCENT_WORDS = re.compile(r"%|\bper ?cent\b|百分|成\b", re.IGNORECASE)
_DATE_WORDS = re.compile(
    r"\b(?:1[5-9]\d{2}|20\d{2})\b|\b(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b"
    r"|\d+\s*年|\d+\s*月|\d+\s*日",
    re.IGNORECASE,
)
_TYPICAL = re.compile(
    r"\b(?:typical|typically|usually|normally|on average|average)\b|通常|一般|平均"
)
_RATE = re.compile(
    r"\bhow (?:fast|quickly|often|frequently)\b|\b(?:rate|speed|throughput|frequency|per)\b"
    r"|速度|速率|频率|每",
    re.IGNORECASE,
)
MODEL_KNOWLEDGE_SHARE = 0.5
"""A sentence whose new content words are found in the shown passages less often than this
(and that has at least two of them) says what no passage says."""


@dataclass(frozen=True)
class Finding:
    """Why a sentence does not answer the question."""

    reason: str
    hard: bool
    outside: bool = False
    """The sentence says what no shown passage says (not excused by answering a part)."""


def _stems(text: str) -> set[str]:
    return {stem(t) for t in content_tokens(text)}


def _novel(sentence: str, question: str) -> list[str]:
    """The sentence's content words that the question does not contain (stemmed)."""
    asked = _stems(question)
    return [s for s in (stem(t) for t in content_tokens(sentence)) if s not in asked]


def _new_values(sentence: str, question: str) -> list[Quantity]:
    asked = {round(q.value, 9) for q in quantities(question)}
    return [q for q in quantities(sentence) if round(q.value, 9) not in asked]


def echoes_question(sentence: str, question: str) -> bool:
    """Whether a sentence adds nothing to its question: no new content word, no new value."""
    if is_yes_no(sentence):
        return False
    return not _novel(sentence, question) and not _new_values(sentence, question)


def model_knowledge(sentence: str, question: str, shown: Sequence[str]) -> list[str]:
    """The sentence's new content words absent from every shown passage, when they are most of
    them (the model's own knowledge); [] otherwise. Only words of a script the passages are
    written in are compared (a Chinese answer about an English paper is not judged by this)."""
    passages = " ".join(shown)
    latin, cjk = bool(re.search(r"[A-Za-z]", passages)), has_cjk(passages)
    have = {stem(t) for t in tokens(passages)}
    novel = [t for t in _novel(sentence, question) if (latin if re.match(r"[a-z0-9]", t) else cjk)]
    novel = [t for t in novel if not t.isdigit()]  # numbers have their own check
    if len(novel) < 2:
        return []
    missing = [t for t in novel if t not in have]
    return missing if 1 - len(missing) / len(novel) < MODEL_KNOWLEDGE_SHARE else []


def _value_window(text: str, q: Quantity) -> str:
    """The words around a value in a text: two before, five after (its noun phrase)."""
    start = q.start
    before = text[:start].split()[-2:]
    after = text[start + len(q.text) :].split()[:5]
    return " ".join([*before, q.text, *after])


def _value_in(texts: Sequence[str], q: Quantity) -> tuple[str, Quantity] | None:
    """Where the sentence's value occurs in the cited texts (the text and its quantity there)."""
    for text in texts:
        for found in quantities(text):
            if abs(found.value - q.value) <= 1e-9 * max(1.0, abs(q.value)):
                return text, found
    return None


def _qualified(
    analysis: QuestionAnalysis, question: str, sentence: str, cited: Sequence[str]
) -> str | None:
    """A restrictive qualifier on the answer's value ("of this type", "per", "only", 其中) that
    the question does not state."""
    asked = set(analysis.qualifiers)
    if _TYPICAL.search(question):
        asked |= {"average", "on average", "mean", "median", "平均"}
    if _RATE.search(question):
        asked |= {"per", "each", "every", "每"}
    for q in quantities(sentence):
        windows = [_value_window(sentence, q)]
        where = _value_in(cited, q)
        if where is not None:
            windows.append(_value_window(*where))
        for window in windows:
            extra = [x for x in restrictive(qualifiers_in(window)) if x not in asked]
            if extra:
                return (
                    f'the value {q.text} is qualified ("{extra[0]}"); the question asks for '
                    f"{analysis.focus or 'the value'} without that qualifier"
                )
    return None


def _form(
    analysis: QuestionAnalysis, sentence: str, cited: Sequence[str], quotes: Sequence[str]
) -> str | None:
    """Whether the sentence states a value of the asked type (None when it does)."""
    kind = analysis.answer_type
    values = [q for q in quantities(sentence) if not _in_a_name(sentence, q)]
    if kind == "count":  # a count of the focus, or of a unit the question counts ("how many hours")
        counts = [
            q
            for q in values
            if q.family in ("", "count") or _noun_after(sentence, q) == analysis.focus
        ]
        if not counts:
            return "the question asks how many; the sentence states no count"
        if analysis.focus and not _counts_focus(analysis, sentence, counts, cited):
            nouns = sorted({n for q in counts if (n := _noun_after(sentence, q))})
            what = f" ({', '.join(nouns)})" if nouns else ""
            return f"the count{what} is not a count of {analysis.focus}"
        return None
    if kind == "duration":
        timed = [q for q in values if q.family == "time"]
        if not timed and not (values and _TIME_WORDS.search(sentence)):
            return "the question asks how long; the sentence states no duration"
        return None
    if kind == "percent":
        if not values and not _PERCENT_WORDS.search(sentence):
            return "the question asks for a percentage; the sentence states none"
        return None
    if kind == "quantity":
        if not values:
            return "the question asks for a value; the sentence states none"
        return None
    if kind == "date":
        if not _DATE_WORDS.search(sentence):
            return "the question asks when; the sentence states no date"
        return None
    if kind == "name" and analysis.focus:
        return _names_focus(analysis, sentence, quotes)
    return None


_NAME_NUMBER = re.compile(r"[A-Za-z][\w.]*-$")


def _in_a_name(text: str, q: Quantity) -> bool:
    """A number glued by a hyphen to the word before it ("SemEval-2016", "GPT-4") is part of
    a name, no value the sentence states."""
    return (
        text[q.start : q.start + 1].isdigit()
        and _NAME_NUMBER.search(text[max(0, q.start - 40) : q.start]) is not None
    )


def _noun_after(text: str, q: Quantity) -> str:
    """The word right after a value in its text, stemmed ("12M nodes" → "node"), or its unit
    word ("18 months" → "month"); "" if none."""
    if q.unit and q.unit.isalpha() and len(q.unit) > 2:
        return stem(q.unit)
    m = re.match(r"\s*-?\s*([A-Za-z][A-Za-z-]+)", text[q.start + len(q.text) :])
    if not m or m.group(1).lower() in _NOT_NOUNS:
        return ""
    return stem(m.group(1))


_NOT_NOUNS = frozenset(
    [
        "of",
        "the",
        "a",
        "an",
        "and",
        "or",
        "in",
        "on",
        "at",
        "for",
        "to",
        "by",
        "with",
        "from",
        "is",
        "are",
        "was",
        "were",
        "than",
        "that",
        "this",
        "per",
        "each",
        "times",
    ]
)


def _counts_focus(
    analysis: QuestionAnalysis, sentence: str, counts: Sequence[Quantity], cited: Sequence[str]
) -> bool:
    focus = analysis.focus
    if has_cjk(focus):
        return focus in sentence or any(focus in c for c in cited) or not has_cjk(" ".join(cited))
    nouns = [_noun_after(sentence, q) for q in counts]
    for q in counts:
        where = _value_in(cited, q)
        if where is not None:
            nouns.append(_noun_after(*where))
    if focus in nouns or focus in _stems(sentence):
        return True
    near = [_value_window(sentence, q) for q in counts] + [
        _value_window(*w) for q in counts if (w := _value_in(cited, q)) is not None
    ]
    if any(focus in _stems(" ".join(w.split()[-5:])) for w in near):
        return True  # "9,280 expert-authored summaries": the noun after its modifiers
    if any(nouns):
        return False  # the value counts something else
    # no noun is written after the value anywhere: the focus must be near it in the cited text
    return any(
        focus in _stems(_value_window(*w)) for q in counts if (w := _value_in(cited, q)) is not None
    )


_ARTIFACTS = frozenset(
    {"model", "tool", "dataset", "corpus", "method", "library", "algorithm", "metric", "system",
     "framework", "optimizer", "optimiser", "parser", "architecture", "benchmark", "loss",
     "baseline", "encoder", "decoder", "backbone", "classifier", "tokenizer", "embedding",
     "software", "package", "engine", "platform", "toolkit", "technique", "approach"}
)  # fmt: skip
"""Kinds of named things easily confused with one another (a tool given for a model); the name
of a language, a licence or a country says its kind itself and is not checked."""


def _names_focus(analysis: QuestionAnalysis, sentence: str, cited: Sequence[str]) -> str | None:
    """A which-X question: the sentence or its quote must say the name is an X."""
    focus = analysis.focus
    if has_cjk(focus) or focus not in _ARTIFACTS:
        return None  # a Chinese focus word is not looked for in an English passage
    said = _stems(sentence)
    for text in cited:
        said |= _stems(text)
    if focus in said:
        return None
    return f"nothing cited says the answer is the {focus} the question asks about"


def misplaced_yes_no(sentence: str, question: str, analysis: QuestionAnalysis) -> str:
    """Why a yes/no sentence does not answer the question ("" when it is no yes/no, or the
    question asks yes or no): the question asks for a value of some type, or with a question
    word ("In what order …?")."""
    if not is_yes_no(sentence.strip()) or analysis.answer_type == "yes_no":
        return ""
    if analysis.answer_type != "other":
        return "a yes/no answer to a question that asks for a " + analysis.answer_type.replace(
            "_", " "
        )
    if is_open_question(question):
        return "a yes/no answer to a question that is not a yes/no question"
    return ""


def check_responsive(
    sentence: str,
    question: str,
    analysis: QuestionAnalysis,
    *,
    quotes: Sequence[str] = (),
    cited: Sequence[str] = (),
    shown: Sequence[str] = (),
) -> Finding | None:
    """Why `sentence` does not answer `question` (None when nothing says it does not).

    `quotes`: the spans the sentence rests on (what it says the name or value is); `cited`: the
    whole cited texts (where its value's noun and qualifiers are read); `shown`: every passage
    shown to the model (for the own-knowledge check; skipped when empty)."""
    s = sentence.strip()
    misplaced = misplaced_yes_no(s, question, analysis)
    if misplaced:
        return Finding(misplaced, hard=True)
    if echoes_question(s, question):
        return Finding("the sentence restates the question and adds nothing", hard=True)
    if shown:
        missing = model_knowledge(s, question, shown)
        if missing:
            return Finding(
                f"no shown passage contains {', '.join(missing[:4])}: not from the evidence",
                hard=True,
                outside=True,
            )
    local = [*quotes, *cited]
    problem = _form(analysis, s, local, list(quotes) or list(cited))
    if problem is None and quotes:
        problem = _outside_quote(analysis, question, s, quotes)
    if problem is None and analysis.answer_type in VALUE_TYPES:
        problem = _qualified(analysis, question, s, local)
    return Finding(problem, hard=False) if problem else None


def _outside_quote(
    analysis: QuestionAnalysis, question: str, sentence: str, quotes: Sequence[str]
) -> str | None:
    """A factoid answer must carry a verbatim span of what it quotes: one of its values (a value
    question) or one of its new words (a which/who question)."""
    kind = analysis.answer_type
    if kind in VALUE_TYPES:
        values = _new_values(sentence, question)
        if values and not any(_value_in(quotes, q) is not None for q in values):
            return f"the value {values[0].text} is not in the quoted words"
        return None
    if kind == "name":
        said = set()
        for quote in quotes:
            said |= _stems(quote)
        novel = _novel(sentence, question)
        if novel and not any(t in said for t in novel):
            return "the name given is not in the quoted words"
    return None


def single_value_conflict(analysis: QuestionAnalysis, first: str, other: str) -> str | None:
    """A second sentence giving a different value of the kind a one-value question asks for."""
    if analysis.answer_type not in VALUE_TYPES or analysis.parts:
        return None
    a, b = _values_for(analysis, first), _values_for(analysis, other)
    if not a or not b:
        return None
    if any(abs(x.base - y.base) <= 1e-9 * max(1.0, abs(x.base)) for x in a for y in b):
        return None
    return (
        f"a second value ({b[0].text}) where the question asks for one "
        f"(the answer gives {a[0].text})"
    )


def _values_for(analysis: QuestionAnalysis, text: str) -> list[Quantity]:
    """The values in a text of the kind the question asks for."""
    kind = analysis.answer_type
    found = quantities(text)
    if kind == "duration":
        return [q for q in found if q.family == "time"]
    if kind == "percent":
        return [q for q in found if q.percent]
    if kind == "count":
        focus = analysis.focus
        return [
            q
            for q in found
            if q.family in ("", "count") and (not focus or _noun_after(text, q) in (focus, ""))
        ]
    if kind == "date":
        return [q for q in found if 1500 <= q.value <= 2100 and q.decimals == 0 and not q.family]
    return [q for q in found if not q.family or q.family == "count"]
