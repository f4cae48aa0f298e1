"""What an undated figure of a paper measures, so that one measure is set side by side across
papers and settings.

Papers state results without a year ("F1-score of 88%", "kappa is .83", "24,783 tweets",
"220 ms/query"), so the dated rule of `conflicts` never compares them. An undated figure is
comparable with another only when both name the same measure:

- an evaluation measure written beside the number (F1, accuracy, precision, recall, agreement
  or kappa, BLEU, ROUGE, perplexity, error rate …, in English or Chinese); a difference ("2.9%
  higher accuracy", "improves by 3 points") is its own measure; on the percent scale "0.88"
  is "88%";
- the data unit it counts, written after it (tweets, sentences, lines, dimensions …; "404-
  dimensional", "in dimension 300"), at least 10 of them;
- a physical quantity (time, data size, energy, power, frequency), compared in its base unit
  (220 ms is 0.22 s); "per query" makes it a rate, its own measure.

Anything else undated (dealers, companies, spelled-out numbers, a bare integer) measures
nothing comparable. LaTeX the papers keep (`$24,783$`, `\\%`, `\\emph{…}`) is read through.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from footnote.numbers import Quantity, quantities
from footnote.textnorm import looks_like_year, stem
from footnote.types import Conflict, ConflictValue, EvidenceCard, sha256_hex

_EVALUATION = {
    "F1": r"\bf\s*-?\s*1\b|\bf\s*-?\s*(?:1\s*-?\s*)?(?:score|measure)s?\b|f1值|f值",
    "accuracy": r"\baccurac(?:y|ies)\b|准确率|正确率|准确度",
    "precision": r"\bprecision\b|精确率|查准率",
    "recall": r"\brecall\b|召回率|查全率",
    "agreement": r"\bkappa\b|\bagreement\b|krippendorff|κ|一致性",
    "BLEU": r"\bbleu\b", "ROUGE": r"\brouge\b", "METEOR": r"\bmeteor\b",
    "perplexity": r"\bperplexit(?:y|ies)\b|困惑度",
    "AUC": r"\bauc\b", "error rate": r"\berror rates?\b|\bwer\b|\bcer\b|错误率|错误率",
    "exact match": r"\bexact match\b|(?-i:\bEM\b)",
    "correlation": r"\bcorrelations?\b|\bpearson\b|\bspearman\b|相关系数",
}  # fmt: skip
"""Evaluation measures and how they are written."""
_NAMES = re.compile("|".join(f"(?P<m{i}>{p})" for i, p in enumerate(_EVALUATION.values())), re.I)
_MEASURE_OF = dict(enumerate(_EVALUATION))
_PERCENT_SCALE = frozenset(["F1", "accuracy", "precision", "recall", "error rate", "exact match"])
"""Measures written either as a percentage or as a fraction ("88%" is "0.88")."""
_REACH = 60
"""How far (characters, within the sentence) a measure's name may stand from its number."""
_DIFFERENCE_AFTER = re.compile(
    r"\s*(?:percentage\s+points?|points?|pp)?\s*(?:[a-z]+\s+)?(?:higher|lower|more|less|better|worse|"
    r"improv\w*|gains?|increases?|decreases?|drops?|reductions?|absolute|relative)\b|\s*个?百分点",
    re.I,
)  # fmt: skip
_COMPARING = re.compile(
    r"\b(?:higher|lower|outperform\w*|improv\w*|gain\w*|increas\w*|decreas\w*|drop\w*|"
    r"reduc\w*)\b|提高|提升|下降|降低|高于|低于",
    re.I,
)  # fmt: skip
"""Words of change that make a figure in their clause a difference between two results ("a
better performance … of 47%" is a result, not a difference)."""
_RESULT_BEFORE = re.compile(
    r"(?:\b(?P<change>improvement|gain|increase|decrease|drop|reduction|boost)s?\s+)?"
    r"(?:\b(?:of|is|was|were|at|to|reach\w*|achiev\w*|obtain\w*|yield\w*)|=|为|达到)\s*"
    r"(?:over|about|around|only|nearly|approximately|up to)?\s*$",
    re.I,
)  # fmt: skip
"""What stands right before a result ("F1-score of 81%") or a difference ("a gain of 3%")."""
_LISTED = re.compile(r"\s*(?:,|and|or|to|vs\.?|和|与|、|至)\s*")
_CLAUSE_START = re.compile(r"[,;:，；：]|\.\s|\b(?:which|while|whereas)\b")
_LABELLED = re.compile(r"\b([A-Za-z][\w-]{0,7})\s*[=:]\s*$")
"""`PU=87.5%`: a number labelled with a name of its own."""
_RANGE_REST = re.compile(r"\s*(?:[-–—]|to)\s*\d[\d.,]*\s*(?:%|percent)?")
_TABLE_ROW = re.compile(r"&.*&|\\hline|\|.*\|.*\|")
_DATA_UNITS = {
    "tweet": "tweets", "post": "posts", "sentenc": "sentences", "word": "words", "token": "tokens",
    "document": "documents", "articl": "articles", "review": "reviews", "line": "lines",
    "pair": "pairs", "exampl": "examples", "instanc": "instances", "sampl": "samples",
    "utter": "utterances", "dialogu": "dialogues", "dialog": "dialogues", "question": "questions",
    "queri": "queries", "imag": "images", "dimension": "dimensions", "paramet": "parameters",
    "abstract": "abstracts", "comment": "comments", "messag": "messages", "annot": "annotations",
    "推文": "tweets", "微博": "posts", "句子": "sentences", "句": "sentences", "文档": "documents",
    "评论": "reviews", "样本": "examples", "问题": "questions", "图片": "images", "维": "dimensions",
}  # fmt: skip
"""Data units a count of a paper measures (by `stem`, and Chinese words)."""
_CLASSIFIERS = "条篇个句份项张对组"
_UNIT_WORDS = re.compile(r"[A-Za-z]+|[\u4e00-\u9fff]+")
_DIMENSION_BEFORE = re.compile(r"\bdimension(?:s|ality)?\s*(?:of|is|=|:)?\s*$", re.I)
_RATE_AFTER = re.compile(r"\s*(?:/|per\b|每)", re.I)
_PHYSICAL = frozenset(["time", "data", "energy", "power", "frequency"])
_LATEX = [(re.compile(r"\\(?:emph|textbf|textit|mathrm|text)\{"), ""), (re.compile(r"\\%"), "%"),
          (re.compile(r"\$_\{?1\}?\$"), "1"), (re.compile(r"[${}]"), "")]  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=[A-Z\u4e00-\u9fff])|[。！？；;]")


@dataclass(frozen=True)
class Figure:
    """An undated figure: its value as written, the measure it states, and its value in the
    measure's common scale (`norm`: percent, base unit) for comparing."""

    value: float
    unit: str
    measure: str
    text: str
    norm: float


def readable(text: str) -> str:
    """A snippet with the LaTeX papers keep read through (`$89\\%$` → `89%`)."""
    for pattern, by in _LATEX:
        text = pattern.sub(by, text)
    return text


def figures(snippet: str) -> list[Figure]:
    """The undated figures of a snippet that state a comparable measure (see the module)."""
    text = readable(snippet)
    out: list[Figure] = []
    for sentence in _SENTENCE_END.split(text):
        if _TABLE_ROW.search(sentence):
            continue  # a table row's cells belong to its columns, not to the nearest name
        last: tuple[int, bool] | None = None  # where the last result ended, a difference?
        for q in quantities(sentence):
            listed = last is not None and bool(_LISTED.fullmatch(sentence[last[0] : q.start]))
            f = _figure(sentence, q, last[1] if last is not None and listed else None)
            if f is not None:
                out.append(f)
                last = (q.start + len(q.text), f.measure.endswith("(difference)"))
    return out


def _figure(sentence: str, q: Quantity, listed: bool | None) -> Figure | None:
    """`listed`: the number follows another result in a list ("88% and 92%"), a difference or
    not as that one is (None: it does not)."""
    if q.words or looks_like_year(q):
        return None
    end = q.start + len(q.text)
    if q.family in _PHYSICAL:
        rate = " per item" if _RATE_AFTER.match(sentence, end) else ""
        return Figure(q.value, q.unit, f"{q.family}{rate}", q.text, q.base)
    if q.family in ("percent", "points") or (not q.family and q.decimals):
        return _evaluation(sentence, q, end, listed)
    if q.family == "count" or not q.family:
        return _count(sentence, q, end)
    return None


def _evaluation(sentence: str, q: Quantity, end: int, listed: bool | None) -> Figure | None:
    """A percentage or decimal beside the name of an evaluation measure (a number labelled
    with another name, `PU=87.5%`, is not that measure). A difference: a change word right
    after it ("2.9% higher"), else as the result it is listed after, else by what stands right
    before it ("F1 of 81%" a result, "an improvement of 3%" a difference), else by the change
    words of its clause."""
    label = _LABELLED.search(sentence[max(0, q.start - 12) : q.start])
    if label and not _NAMES.fullmatch(label.group(1)):
        return None
    lo, hi = max(0, q.start - _REACH), min(len(sentence), end + _REACH)
    best: tuple[int, str] | None = None
    for m in _NAMES.finditer(sentence, lo, hi):
        distance = q.start - m.end() if m.end() <= q.start else m.start() - end
        name = _MEASURE_OF[int(next(k for k, v in m.groupdict().items() if v)[1:])]
        if distance >= 0 and (best is None or distance < best[0]):
            best = (distance, name)
    if best is None:
        return None
    name = best[1]
    before = _RESULT_BEFORE.search(sentence[max(0, q.start - 40) : q.start])
    if q.family == "points" or _DIFFERENCE_AFTER.match(sentence, _range_end(sentence, end)):
        difference = True
    elif listed is not None:
        difference = listed
    elif before is not None:
        difference = bool(before["change"])
    else:
        difference = bool(_COMPARING.search(_CLAUSE_START.split(sentence[: q.start])[-1]))
    measure = f"{name} (difference)" if difference else name
    if name in _PERCENT_SCALE or difference:
        norm = q.value * 100 if not q.family and q.value <= 1 else q.value
        return Figure(q.value, "%" if q.family else "", measure, q.text, norm)
    return Figure(q.value, "%" if q.family == "percent" else "", measure, q.text, q.value)


def _range_end(sentence: str, end: int) -> int:
    """Where a range that starts with this number ends ("2–10% improvements")."""
    m = _RANGE_REST.match(sentence, end)
    return m.end() if m else end


def _count(sentence: str, q: Quantity, end: int) -> Figure | None:
    """A count of a data unit written after the number, or a dimension written before it."""
    if q.value < 10 or (q.decimals and q.scale == 1):
        return None
    unit = ""
    if _DIMENSION_BEFORE.search(sentence[max(0, q.start - 24) : q.start]):
        unit = "dimensions"
    else:
        tail = re.split(r"[,;:()（），；：]", sentence[end : end + 48], maxsplit=1)[0]
        for word in _UNIT_WORDS.findall(tail)[:5]:
            word = word.lower().lstrip(_CLASSIFIERS)
            found = _DATA_UNITS.get(stem(word)) or next(
                (u for k, u in _DATA_UNITS.items() if word.startswith(k)), None
            )  # "dimensional", 条推文
            if found:
                unit = found
                break
    if not unit:
        return None
    return Figure(q.value, unit, f"count of {unit}", q.text, q.value)


Relevance = Callable[[Sequence[EvidenceCard]], list[bool]]
"""Which of these cards' sentences are about the research question (`closeness.relevant_to`)."""


def settings_conflicts(
    cards: Sequence[EvidenceCard],
    origin: Callable[[EvidenceCard], str],
    items_of: Callable[[EvidenceCard], Sequence[str]],
    *,
    relevant: Relevance | None = None,
) -> list[Conflict]:
    """Undated cards' figures of one measure across the brief, from at least two cards, that
    differ: papers' results for different settings, side by side (kind `settings`) with each
    one's setting and attached to every item whose cards hold one. A card `relevant` drops
    (its sentence is not about the research question) gives no value. Each value's setting is
    its own sentence (a paper's neighbouring sentences describe other settings). One origin may
    give several values (one per setting), never the same value twice."""
    stated = [(c, fs) for c in cards if (fs := figures(c.snippet))]  # only these are judged
    verdicts = relevant([c for c, _fs in stated]) if relevant else [True] * len(stated)
    found: dict[str, dict[tuple[str, float], tuple[EvidenceCard, Figure]]] = {}
    for (card, fs), ok in zip(stated, verdicts, strict=True):
        for f in fs if ok else ():
            found.setdefault(f.measure, {}).setdefault((origin(card), round(f.norm, 6)), (card, f))
    out = []
    for measure, picked in found.items():
        values = list(picked.values())
        if len({c.id for c, _f in values}) < 2 or not any(
            _differ(a, b) for _c, a in values for _d, b in values
        ):
            continue
        units = sorted({f.unit for _c, f in values if f.unit})
        metric = f"{measure} ({'/'.join(units) + ', ' if units else ''}undated)"
        shown = tuple(
            ConflictValue(c.id, f.value, f.unit, f.text, year=None, scope=_setting(c.snippet),
                          source_title=c.source_title)
            for c, f in values
        )  # fmt: skip
        ids = sorted(f"{c.id}:{f.norm:g}" for c, f in values)
        cid = "conflict_" + sha256_hex("|".join(ids).encode())[:10]
        items = tuple(dict.fromkeys(i for c, _f in values for i in items_of(c)))
        out.append(Conflict(cid, metric, shown, item_ids=items, note=_NOTE, kind="settings"))
    return out


_NOTE = ("undated figures of one measure for different papers or settings; shown side by side "
         "with each one's setting, not combined: check that they measure the same thing")  # fmt: skip


def _differ(a: Figure, b: Figure) -> bool:
    if math.isclose(a.norm, b.norm, rel_tol=0.01):
        return False
    return not (a.unit == "%" and b.unit == "%" and abs(a.norm - b.norm) < 0.5)


def _setting(snippet: str) -> str:
    """A paper figure's setting as its sentence states it."""
    text = readable(snippet).strip()
    return f"as stated: “{text[:240]}{'…' if len(text) > 240 else ''}”"
