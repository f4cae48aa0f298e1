"""Graph answers through the one verification path: each sentence against the rows it cites.

The rows a composer was shown become row evidence (`Evidence.kind == "row"`) and its
sentences a `Draft`; `verify.gate.check_draft` checks them like any other draft. A citation of
a row the composer never saw is fabricated, dropped and counted; every value a sentence states
must occur in a cited row (`verify.values`: names, numbers, dates), and every other content
word must come from the question, the schema's vocabulary or the cited rows (`words`: an
invented genre is unsupported even when the title and year are right); with a judge,
entailment decides among sentences that pass those checks. The query's own parameters (the aligned
entities the rows were selected by) are context for names: a row of `MATCH (p:Person {name:
$person})-[:ACTED_IN]->(f)` is about `$person` even when it does not repeat it. The support
score is the share of the composer's factual sentences that passed — never a constant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from footnote.numbers import currency_spellings, quantities
from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.textnorm import (
    CJK_RUN_RE,
    QUESTION_WORDS_EN,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    jieba_segmenter,
    stem_inflected,
)
from footnote.types import Block, Citation, Sentence, Verdict
from footnote.verify.bounds import reversed_bounds
from footnote.verify.checks import CitationCheck, Judge, Thresholds
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.gate import check_draft
from footnote.verify.values import VALUE_KINDS, dates_in, names_in

__all__ = [
    "GraphVerdict", "SentenceCheck", "ShownRows", "check_graph_sentence", "cjk_content_words",
    "content_words",
    "dates_in", "names_in", "row_id", "row_text", "schema_words", "unsupported_words",
    "value_text", "verify_graph_answer",
]  # fmt: skip
CHECK_KINDS = (*VALUE_KINDS, "words", "direction", "units")
FRAME_WORDS = STOP_WORDS_EN | QUESTION_WORDS_EN | frozenset(
    {"she", "he", "her", "his", "him", "hers", "they", "them", "their", "it", "its", "there",
     "both", "each", "all", "none", "only", "also", "one", "two", "three", "four", "five", "six",
     "seven", "eight", "nine", "ten", "being", "per", "total", "together", "answer", "result",
     "results", "row", "rows", "graph", "query", "record", "records", "following", "include",
     "includes", "included", "including", "listed", "named", "called", "s", "t", "node",
     "nodes", "relationship", "relationships", "edge", "edges", "property", "properties",
     "attribute", "attributes", "label", "labels", "january",
     "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"}
)  # fmt: skip
"""Function words and the words of framing an answer (the graph's own words, "nodes", among
them): never a claim about the rows."""
CJK_FRAME_CHARS = frozenset(
    "的了是在和与及或也都而其该这那于为年月日号共有个部位名过被把将由从向对等并就又之以所但他她它们中"
)
"""Chinese characters that frame a sentence ("出生于…年"): never a claim on their own."""
CJK_FRAME_WORDS = STOP_WORDS_ZH | frozenset(
    {"分别", "包括", "共有", "一共", "总共", "如下", "以下", "结果", "答案", "查询", "记录",
     "显示", "根据", "数据", "之一", "还有", "它们", "她们"}
)  # fmt: skip
"""Chinese function words and the words of framing an answer."""
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_LATIN_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ɏ]+")
"""Latin-script words, accented letters included (Thüringer is one word)."""


def row_id(i: int) -> str:
    """The evidence id of result row `i`."""
    return f"row:{i}"


def value_text(v: Any) -> str:
    """A row value as text (lists joined, whole floats without `.0`)."""
    if isinstance(v, list):
        return ", ".join(value_text(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


def row_text(columns: Sequence[str], row: Sequence[Any]) -> str:
    """One row as `col: value; col: value`."""
    return "; ".join(f"{c}: {value_text(v)}" for c, v in zip(columns, row, strict=False))


@dataclass(frozen=True)
class ShownRows:
    """The rows a composer was shown (by id), and the query parameters they were selected by."""

    rows: Mapping[str, str]
    context: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, result: GraphRows, shown: int, params: Mapping[str, Any] | None = None
    ) -> ShownRows:
        """The first `shown` rows of `result` (what the prompt listed), with the parameters."""
        rows = {row_id(i): row_text(result.columns, r) for i, r in enumerate(result.rows[:shown])}
        ctx = tuple(
            value_text(v)
            for k, v in (params or {}).items()
            if not k.startswith("__allow_") and isinstance(v, str | int | float | list)
        )
        return cls(rows, ctx)

    def evidence(self) -> EvidenceSet:
        """The rows as the gate's evidence: only these ids are citable."""
        context = "\n".join(self.context)
        return EvidenceSet([
            Evidence(i, text, Block(i, "graph", "table", text, 0, order=n), context=context,
                     kind="row")
            for n, (i, text) in enumerate(self.rows.items())
        ])  # fmt: skip


@dataclass(frozen=True)
class SentenceCheck:
    """What the gate made of one sentence: its shown and fabricated row ids, the values it
    states that no cited row holds, and the verdict."""

    text: str
    cited: tuple[str, ...]
    fabricated: tuple[str, ...]
    missing: dict[str, list[str]] = field(default_factory=dict)
    """Kind (`numbers`, `dates`, `names`, `words`, `direction`) → what the sentence states that
    no cited row (nor, for words, the question or schema) holds, or (`direction`) a comparison
    of the query it states the other way round."""
    verdict: Verdict = "unsupported"
    judge_p: float | None = None

    @classmethod
    def of(cls, text: str, checks: Sequence[CitationCheck]) -> SentenceCheck:
        """The sentence's view of its citations' checks."""
        shown = [c for c in checks if not c.fabricated]
        verdicts = {c.verdict for c in shown}
        verdict: Verdict = (
            "unsupported" if not shown or "unsupported" in verdicts
            else "weak" if "weak" in verdicts else "supported"
        )  # fmt: skip
        ps = [c.judge_p for c in shown if c.judge_p is not None]
        return cls(
            text,
            tuple(c.evidence_id for c in shown),
            tuple(c.evidence_id for c in checks if c.fabricated),
            dict(shown[0].values_missing) if shown else {},
            verdict,
            min(ps) if ps else None,
        )

    @property
    def ok(self) -> bool:
        """Cites at least one shown row, states nothing the cited rows lack, and (with a
        judge) is entailed by them."""
        return bool(self.cited) and not any(self.missing.values()) and self.verdict == "supported"

    @property
    def reasons(self) -> dict[str, str]:
        """One reason per check, as the citation's `checks`."""
        out = {"id": "shown" if self.cited else "no shown row cited"}
        if self.fabricated:
            out["fabricated"] = ", ".join(self.fabricated)
        for kind in (*VALUE_KINDS, *(k for k in CHECK_KINDS[3:] if k in self.missing)):
            miss = self.missing.get(kind, [])
            out[kind] = "missing: " + ", ".join(miss) if miss else "present"
        if self.judge_p is not None:
            out["judge"] = f"P(supported) = {self.judge_p:.2f}"
        if (
            self.cited
            and not any(self.missing.values())
            and self.verdict == "weak"
            and self.judge_p is None
        ):
            out["values"] = "states no name, number or date the rows could confirm"
        return out

    def sentence(self, rows: ShownRows) -> Sentence | None:
        """The checked sentence with its citations (None when a check failed)."""
        if not self.ok:
            return None
        verdict = self.reasons
        cites = tuple(
            Citation(i, quote=rows.rows[i], verdict="supported", relevance=1.0, checks=verdict)
            for i in self.cited
        )
        return Sentence(self.text, citations=cites)


@dataclass(frozen=True)
class GraphVerdict:
    """Checked sentences of one composed answer, with counts and the support score."""

    checks: tuple[SentenceCheck, ...]
    sentences: tuple[Sentence, ...]

    @property
    def fabricated(self) -> int:
        """Cited row ids that were never shown."""
        return sum(len(c.fabricated) for c in self.checks)

    @property
    def dropped(self) -> int:
        """Sentences that failed a check."""
        return sum(1 for c in self.checks if not c.ok)

    @property
    def support(self) -> float:
        """Share of the factual sentences written that passed every check (0 when none)."""
        return (len(self.checks) - self.dropped) / len(self.checks) if self.checks else 0.0

    @property
    def reason(self) -> str:
        """Why sentences were dropped, one clause per failed sentence."""
        parts = []
        for c in self.checks:
            if c.ok:
                continue
            why = [f"{k} {', '.join(v)}" for k, v in c.missing.items() if v]
            if not c.cited:
                why.insert(0, "no shown row cited")
            elif not why:
                why.append(c.reasons.get("judge") or c.reasons.get("values") or c.verdict)
            parts.append(f"{c.text[:60]!r}: " + "; ".join(why))
        return " | ".join(parts)


def _split_name(name: str) -> list[str]:
    """`unitsInStock` → units, in, stock; `ACTED_IN` → acted, in."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return spaced.lower().split()


def schema_words(spec: GraphSpec) -> frozenset[str]:
    """The schema's vocabulary: the words of its labels, relationship types and properties."""
    names = [*spec.nodes, *spec.relationships]
    names += [p for n in spec.nodes.values() for p in n.properties]
    names += [p for r in spec.relationships.values() for p in r.properties]
    return frozenset(w for n in names for w in _split_name(n))


def content_words(text: str) -> list[str]:
    """The Latin-script words of `text` that could carry a claim (not function words)."""
    words = (w.lower() for w in _LATIN_WORD.findall(text))
    return [w for w in words if w not in FRAME_WORDS and len(w) > 1]


def _known(word: str, stems: set[str]) -> bool:
    st = stem_inflected(word)
    if st in stems:
        return True
    return len(st) >= 4 and any(
        len(k) >= 4 and (st.startswith(k) or k.startswith(st)) for k in stems
    )


def unsupported_words(sentence: str, known: str, vocabulary: Collection[str] = ()) -> list[str]:
    """Content words of `sentence` found neither in the text `known` (question, cited rows,
    query parameters) nor in `vocabulary` (the schema's words): Latin-script words compared by
    a light stem (`directed` ~ `DIRECTED`, `films` ~ `film`), Chinese as jieba words
    (`unsupported_cjk_words`)."""
    stems = {stem_inflected(w) for w in _WORD.findall(known)} | {
        stem_inflected(v) for v in vocabulary
    }
    latin = [w for w in content_words(sentence) if not _known(w, stems)]
    cjk = unsupported_cjk_words(sentence, "\n".join([known, *vocabulary]))
    return list(dict.fromkeys(latin + cjk))


def _claims(word: str) -> bool:
    return (
        len(word) >= 2
        and CJK_RUN_RE.fullmatch(word) is not None
        and word not in CJK_FRAME_WORDS
        and not all(c in CJK_FRAME_CHARS for c in word)
    )


def cjk_content_words(text: str) -> list[str]:
    """The jieba words of `text`'s Chinese runs that could carry a claim (two characters or
    more; not function or framing words)."""
    return [w for run in CJK_RUN_RE.findall(text) for w in jieba_segmenter().cut(run) if _claims(w)]


def unsupported_cjk_words(sentence: str, known: str) -> list[str]:
    """The jieba words of `sentence` with a character that no stretch (two characters or
    more) of `known` covers — words, not characters: 湖红 is no word of 红河 and 蓝湖 though
    each character is there. A compound is reported by its uncovered part (喜剧电影 → 喜剧);
    a name that jieba cut oddly (斯通出 / 生于) passes when the text around it is known."""
    if CJK_RUN_RE.search(sentence) is None:
        return []
    covered = [not CJK_RUN_RE.match(c) or c in CJK_FRAME_CHARS for c in sentence]
    for i in range(len(sentence) - 1):
        for j in range(i + 2, min(len(sentence), i + 16) + 1):
            if sentence[i:j] not in known:
                break
            covered[i:j] = [True] * (j - i)
    jieba = jieba_segmenter()
    out: list[str] = []
    for word, a, b in jieba.tokenize(sentence):
        if not _claims(word) or all(covered[a:b]):
            continue
        parts = [p for p in jieba.cut_for_search(word) if p != word and _claims(p)]
        missed = [
            p for p in parts if not all(covered[a + word.find(p) : a + word.find(p) + len(p)])
        ]
        out += missed or [word]
    return out


def _with_words(
    check: SentenceCheck, rows: ShownRows, question: str, vocabulary: Collection[str] | None
) -> SentenceCheck:
    """`check` with the content words its cited rows, the question and the schema lack
    (unchanged without a vocabulary: a caller that knows no schema cannot judge words)."""
    if not check.cited or vocabulary is None:
        return check
    known = "\n".join([question, *rows.context, *(rows.rows[i] for i in check.cited)])
    words = unsupported_words(check.text, known, vocabulary)
    units = unnamed_currencies(check.text, "\n".join([known, *vocabulary]))
    verdict = "unsupported" if words or units else check.verdict
    missing = {**check.missing, "words": words, **({"units": units} if units else {})}
    return replace(check, missing=missing, verdict=verdict)


def unnamed_currencies(sentence: str, known: str) -> list[str]:
    """The currency figures of a graph sentence whose currency nothing it may draw on names
    (question, schema, rows): a value stored bare is no price in 元 or dollars
    ("Tofu 的单价是 23.25 元" over `unitPrice: 23.25`)."""
    low = known.lower()
    return [
        q.text for q in quantities(sentence)
        if q.family.startswith("currency:")  # "pound" names what "pounds" does
        and not any(s.lower().rstrip("s") in low for s in currency_spellings(q.family[9:]))
    ]  # fmt: skip


def _with_direction(check: SentenceCheck, bounds: Mapping[str, str] | None) -> SentenceCheck:
    """`check` with the query's comparisons the sentence states the other way round."""
    if not bounds or not check.cited:
        return check
    reversed_ = reversed_bounds(check.text, bounds)
    if not reversed_:
        return check
    return replace(check, missing={**check.missing, "direction": reversed_}, verdict="unsupported")


def verify_graph_answer(
    drafts: Sequence[tuple[str, Sequence[str]]],
    rows: ShownRows,
    *,
    judge: Judge | None = None,
    thresholds: Thresholds = Thresholds(),
    question: str = "",
    vocabulary: Collection[str] | None = None,
    bounds: Mapping[str, str] | None = None,
) -> GraphVerdict:
    """Check each (sentence, cited row ids) of a composed graph answer against `rows` with
    the gate (`verify.gate.check_draft`), then, given `vocabulary` (the schema's words, a
    template's own words), its content words against the question, the vocabulary and the
    cited rows, and, given `bounds` (`verify.bounds.query_bounds`), that it states none of the
    query's comparisons the other way round (`direction`); `judge` adds entailment after the
    value checks."""
    draft = Draft([
        DraftSentence(t.strip(), list(dict.fromkeys(ids))) for t, ids in drafts if t.strip()
    ])  # fmt: skip
    results = check_draft(
        draft, rows.evidence(), judge=judge, thresholds=thresholds, question=question,
        max_cites=None,
    )  # fmt: skip
    checks = tuple(
        _with_direction(
            _with_words(SentenceCheck.of(s.text, r), rows, question, vocabulary), bounds
        )
        for s, r in zip(draft.sentences, results, strict=True)
    )
    kept = tuple(s for c in checks if (s := c.sentence(rows)) is not None)
    return GraphVerdict(checks, kept)


def check_graph_sentence(
    text: str, ids: Sequence[str], rows: ShownRows, *, judge: Judge | None = None
) -> SentenceCheck:
    """The gate's checks of one sentence citing rows."""
    return verify_graph_answer([(text, ids)], rows, judge=judge).checks[0]
