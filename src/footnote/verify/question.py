"""What a question asks for, read by rules: the answer type, its focus, scope qualifiers, parts.

The reading is what `verify.responsive` checks an answer sentence against ("does it answer the
question?"), so it lives beside the checks. Rules only: a question whose type no rule decides is
`other`, and `other` constrains nothing (a wrong type is worse than none).

Answer types: count ("how many nodes"), quantity ("how much", "what is the F1"), duration ("how
long does it take"), date ("when", "in which year"), percent ("what percentage"), yes_no ("Is …",
"…吗"), name ("which model", "who"), list ("what are the three …", "哪些"), definition ("what is
…"), reason ("why"), comparison ("how does A differ from B"), other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from footnote.textnorm import stem, text_lang, tokens

AnswerType = Literal[
    "count",
    "quantity",
    "duration",
    "date",
    "percent",
    "yes_no",
    "name",
    "list",
    "definition",
    "reason",
    "comparison",
    "other",
]
VALUE_TYPES: frozenset[str] = frozenset({"count", "quantity", "duration", "date", "percent"})
"""Types whose answer is one value (a second, different value in one answer is a conflict)."""
FACTOID_TYPES: frozenset[str] = VALUE_TYPES | {"name"}


@dataclass(frozen=True)
class QuestionAnalysis:
    """The rule-based reading of a question."""

    answer_type: AnswerType
    focus: str = ""
    """The counted noun or the attribute asked about ("node", "model", "f1"), stemmed; "" if none."""
    qualifiers: tuple[str, ...] = ()
    """Scope qualifiers the question itself states ("average", "per", "每")."""
    parts: tuple[str, ...] = ()
    """The sub-questions of a multi-part question (empty for a single question)."""
    lang: str = "en"


_AUX = (
    r"is|are|was|were|am|do|does|did|can|could|has|have|had|will|would|should|shall|may|might"
    r"|must|isn't|aren't|doesn't|don't|didn't"
)
_YES_NO_EN = re.compile(rf"^\s*(?:{_AUX})\b(?!.*\bor\b)", re.IGNORECASE)
"""A question opening with an auxiliary; "Is it A or B?" is a choice, not yes/no."""
_YES_NO_ZH = re.compile(r"吗\s*[？?]?\s*$|是否|能否|可否|是不是|有没有|会不会|可不可以|对不对")
_WH = re.compile(r"\b(?:what|which|how|who|whom|whose|when|where|why)\b", re.IGNORECASE)

_DURATION_VERBS = re.compile(
    r"\b(?:take|takes|took|taken|last|lasts|lasted|spend|spends|spent|wait|waited|run|runs|"
    r"ran|train|trained|training|use|used|using|process|processing|need|needs|needed|require|"
    r"requires|required)\b",
    re.IGNORECASE,
)
_EN_RULES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    ("percent", re.compile(r"\bwhat (?:percentage|percent|proportion|fraction|share)\b", re.I)),
    (
        "percent",
        re.compile(r"\bhow many percent\b|\bwhat (?:is|was) the (?:percentage|share)\b", re.I),
    ),
    ("count", re.compile(r"\bhow many\b|\bwhat (?:is|was|are) the (?:total )?number of\b", re.I)),
    ("duration", re.compile(r"\bhow long\b.*\b(?:time|hours?|minutes?|days?|seconds?)\b", re.I)),
    (
        "date",
        re.compile(
            r"^\s*when\b|\b(?:what|which) (?:year|date|month|day)\b|\bin which year\b", re.I
        ),
    ),
    (
        "quantity",
        re.compile(r"\bhow (?:much|large|big|small|fast|slow|old|far|high|low|deep|wide)\b", re.I),
    ),
    (
        "reason",
        re.compile(r"^\s*why\b|\bwhat (?:is|was|are) the reasons?\b|\bfor what reason\b", re.I),
    ),
    (
        "comparison",
        re.compile(
            r"\bcompare|\bcomparison\b|\bdiffer\b|\bdifference\b|\bversus\b|\bvs\.?\s", re.I
        ),
    ),
    ("name", re.compile(r"^\s*(?:who|whom|whose)\b", re.I)),
    (
        "list",
        re.compile(
            r"^\s*(?:list|name|enumerate)\b|\bwhat are the (?:\w+ )?(?:two|three|four|five|six|main|key)\b",
            re.I,
        ),
    ),
)
_VALUE_NOUNS = frozenset(
    [
        "accuracy",
        "f1",
        "score",
        "precision",
        "recall",
        "bleu",
        "rouge",
        "auc",
        "loss",
        "rate",
        "size",
        "number",
        "value",
        "error",
        "perplexity",
        "latency",
        "throughput",
        "speed",
        "cost",
        "price",
        "revenue",
        "count",
        "length",
        "dimension",
        "margin",
        "ratio",
        "percentage",
        "share",
        "proportion",
        "mae",
        "rmse",
        "map",
        "mrr",
        "ndcg",
        "em",
    ]
)
_NAME_NOUNS = frozenset(
    [
        "model",
        "tool",
        "dataset",
        "corpus",
        "method",
        "library",
        "algorithm",
        "loss",
        "metric",
        "system",
        "language",
        "framework",
        "optimizer",
        "optimiser",
        "software",
        "name",
        "company",
        "organization",
        "organisation",
        "university",
        "journal",
        "conference",
        "venue",
        "format",
        "parser",
        "architecture",
        "benchmark",
        "encoder",
        "decoder",
        "backbone",
        "baseline",
        "function",
        "package",
        "license",
        "licence",
        "version",
        "database",
        "engine",
        "platform",
        "api",
        "service",
        "author",
        "authors",
        "team",
        "country",
        "city",
        "institution",
        "toolkit",
        "classifier",
        "tokenizer",
        "embedding",
        "embeddings",
        "approach",
        "technique",
        "strategy",
        "task",
        "objective",
        "cpu",
        "gpu",
        "hardware",
        "machine",
        "processor",
        "device",
        "operator",
        "model",
    ]
)
_WHICH = re.compile(r"\b(?:which|what)\s+((?:[A-Za-z][A-Za-z-]*\s*){1,3})", re.IGNORECASE)


def _which_noun(q: str) -> str:
    """The name noun right after "which"/"what" ("What loss function …" → "loss"), or ""."""
    m = _WHICH.search(q)
    if not m:
        return ""
    words = m.group(1).split()[:3]
    if words and re.fullmatch(_AUX, words[0], re.IGNORECASE) and not q.lower().startswith("which"):
        return ""  # "what did the authors find": the noun is the subject, not the answer's kind
    for word in words:
        if stem(word) in _NAME_NOUNS:
            return word.lower()
    return ""


_METRIC_OF = re.compile(
    r"\bwhat (?:is|was|are|were) the (?:[a-z-]+ ){0,2}?([a-z0-9-]+)(?: score| value)? (?:of|for|on|at|in|when|with|achieved|obtained|reported|used)\b|"
    r"\bwhat (?:is|was|are|were) the (?:[a-z-]+ ){0,2}?([a-z0-9-]+)\s*\?\s*$",
    re.IGNORECASE,
)
_NUMBER_OF = re.compile(r"\bnumber of\s+([a-z-]+(?:\s+[a-z-]+)?)", re.IGNORECASE)

_ZH_RULES: tuple[tuple[AnswerType, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"多久|多长时间|多少时间|耗时|用时|花了多少|需要多长")),
    ("percent", re.compile(r"百分之几|百分比|比例是|占比|多大比例|比率是多少")),
    ("date", re.compile(r"何时|什么时候|哪一年|哪年|何年|哪一天|几月|几号|哪个月")),
    (
        "count",
        re.compile(
            r"多少[个种位篇条名次层项家台张部本份]|几[个种位篇条名次层项家台张部本份]|多少(?!钱|元)\w"
        ),
    ),
    ("quantity", re.compile(r"多少|多大|多高|多快|多重|多远|几")),
    ("reason", re.compile(r"为什么|为何|原因|为啥")),
    ("comparison", re.compile(r"比较|区别|差异|对比|不同之处|有何不同")),
    (
        "name",
        re.compile(
            r"谁|哪位|哪个|哪种|哪款|哪家|什么(?:模型|工具|方法|数据集|语言|框架|算法|损失|系统|名称|软件|格式)"
        ),
    ),
    ("list", re.compile(r"哪些|有哪几")),
    ("definition", re.compile(r"什么是|是什么|的定义|含义|指什么|解释")),
)
_ZH_COUNT_NOUN = re.compile(
    r"(?:多少|几)[个种位篇条名次层项家台张部本份]?([\u4e00-\u9fff]{1,4}?)(?:[？?，,。]|$|是|有|被|在|参与|用于)"
)

QUALIFIERS_EN: tuple[str, ...] = (
    "of this type",
    "of that type",
    "of each type",
    "per",
    "each",
    "every",
    "average",
    "on average",
    "mean",
    "median",
    "only",
    "subset",
    "at most",
    "at least",
    "maximum",
    "minimum",
    "up to",
    "on the dev set",
    "on the development set",
    "on the test set",
    "on the validation set",
    "in the training set",
    "in total",
    "total",
    "overall",
    "respectively",
    "among them",
    "of them",
    "of which",
)
"""Words that narrow or aggregate a value; in an answer they must be asked for."""
QUALIFIERS_ZH: tuple[str, ...] = (
    "每",
    "平均",
    "其中",
    "该类",
    "此类",
    "这类",
    "最多",
    "最少",
    "至少",
    "至多",
    "仅",
    "只有",
    "中位数",
    "总共",
    "合计",
    "共计",
)
_RESTRICTIVE_EN = frozenset(
    {"of this type", "of that type", "only", "subset", "per", "each", "every", "average",
     "on average", "mean", "median", "among them", "of them", "of which", "on the dev set",
     "on the development set", "on the test set", "on the validation set", "in the training set"}
)  # fmt: skip
"""Qualifiers that make a value a part, a rate or a subset (a mismatch unless asked)."""
_RESTRICTIVE_ZH = frozenset({"每", "平均", "其中", "该类", "此类", "这类", "仅", "只有", "中位数"})


def qualifiers_in(text: str) -> tuple[str, ...]:
    """The scope qualifiers a text states (English by word boundaries, Chinese by substring)."""
    low = " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "
    found = [q for q in QUALIFIERS_EN if f" {q} " in low]
    found += [q for q in QUALIFIERS_ZH if q in text]
    return tuple(found)


def restrictive(qualifiers: tuple[str, ...]) -> tuple[str, ...]:
    """The qualifiers that narrow a value to a part, a rate or a subset."""
    return tuple(q for q in qualifiers if q in _RESTRICTIVE_EN or q in _RESTRICTIVE_ZH)


_PART_SPLIT = re.compile(
    r"(?:,\s*|;\s*|\s+)(?:and|as well as)\s+(?=(?:what|which|how|who|whom|when|where|why|is|are|does|do|did|was|were)\b)"
    r"|[?？]\s*(?=\S)|；|(?<=[\u4e00-\u9fff])，(?=(?:以及|并且|同时|另外)?[\u4e00-\u9fff]*(?:多少|什么|哪|几|为何|为什么|如何|怎样))|以及(?=[\u4e00-\u9fff]*(?:多少|什么|哪|几|为何|如何))",
    re.IGNORECASE,
)


def split_parts(question: str) -> tuple[str, ...]:
    """The sub-questions of a multi-part question ("How many X, and what Y?"), else ()."""
    pieces = [p.strip(" ,，;；") for p in _PART_SPLIT.split(question.strip()) if p and p.strip()]
    asks = [p for p in pieces if _asks(p)]
    if len(asks) < 2:
        return ()
    return tuple(
        p if p.endswith(("?", "？")) else p + ("？" if text_lang(p) == "zh" else "?") for p in asks
    )


def _asks(piece: str) -> bool:
    return bool(
        _WH.search(piece)
        or _YES_NO_EN.match(piece)
        or re.search(r"多少|什么|哪|几|为何|为什么|如何|怎样|吗|是否", piece)
    )


_WH_ZH = re.compile(r"什么|哪|怎么|怎样|如何|为什么|为何|多少|几|谁|何时|何种|何处")


def is_open_question(question: str) -> bool:
    """Asked with a question word and not as a yes/no question ("In what order …?", "按什么
    …排列？"): whatever its answer type, "Yes" or "No" does not answer it."""
    if _YES_NO_EN.search(question) or _YES_NO_ZH.search(question):
        return False
    return bool(_WH.search(question) or _WH_ZH.search(question))


def analyse_question(question: str) -> QuestionAnalysis:
    """The question's answer type, focus, qualifiers, parts and language (rules only)."""
    q = " ".join(question.split())
    lang = "zh" if text_lang(q) == "zh" else "en"
    kind, focus = _zh_type(q) if lang == "zh" else _en_type(q)
    return QuestionAnalysis(
        answer_type=kind,
        focus=focus,
        qualifiers=qualifiers_in(q),
        parts=split_parts(q),
        lang=lang,
    )


def _en_type(q: str) -> tuple[AnswerType, str]:
    first_wh = _WH.search(q)
    if _YES_NO_EN.match(q) and not (
        first_wh and first_wh.start() < 12 and first_wh.group(0).lower() != "which"
    ):
        return "yes_no", ""
    for kind, pattern in _EN_RULES:
        if pattern.search(q):
            return kind, _focus(kind, q)
    if re.search(r"\bhow long\b", q, re.I):
        return ("duration" if _DURATION_VERBS.search(q) else "quantity"), ""
    metric = _METRIC_OF.search(q)
    noun = metric and (metric.group(1) or metric.group(2))
    if noun and stem(noun) in _VALUE_NOUNS:
        return "quantity", stem(noun)
    which = _which_noun(q)
    if which:
        plural = which.endswith("s") and stem(which) != which
        listing = plural and re.search(r"\b(?:which|what)\b.*\b(?:are|were)\b", q, re.I)
        return ("list" if listing else "name"), stem(which)
    if re.match(r"^\s*(?:what (?:is|are|was|were|does)|define|explain|describe)\b", q, re.I):
        return "definition", ""
    return "other", ""


_FOCUS_STOP = frozenset(
    [
        "of",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "for",
        "to",
        "by",
        "with",
        "from",
        "during",
        "per",
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "can",
        "could",
        "will",
        "would",
        "should",
        "were",
        "been",
        "be",
        "that",
        "which",
        "who",
        "this",
        "these",
        "those",
        "there",
        "it",
        "its",
        "their",
        "his",
        "her",
        "our",
        "your",
        "used",
        "using",
    ]
)


def _focus(kind: AnswerType, q: str) -> str:
    """The counted noun of a count question: the last noun before the verb ("how many of the
    most recently read papers does …" → "paper")."""
    if kind != "count":
        return ""
    m = re.search(r"\bhow many\b|\bnumber of\b", q, re.IGNORECASE)
    if not m:
        return ""
    words = re.findall(r"[A-Za-z][A-Za-z-]*", q[m.end() :])
    head: list[str] = []
    for w in words:
        low = w.lower()
        if low in _FOCUS_STOP:
            if head and low not in {"of", "the", "a", "an"}:
                break
            if head and low in {"of"}:
                break
            continue
        head.append(low)
        if len(head) >= 4:
            break
    return stem(head[-1]) if head else ""


def _zh_type(q: str) -> tuple[AnswerType, str]:
    if _YES_NO_ZH.search(q) and not re.search(r"多少|哪|什么时候|多久", q):
        return "yes_no", ""
    for kind, pattern in _ZH_RULES:
        if pattern.search(q):
            focus = ""
            if kind == "count":
                m = _ZH_COUNT_NOUN.search(q)
                focus = m.group(1) if m else ""
            elif kind == "name":
                m = re.search(
                    r"什么(模型|工具|方法|数据集|语言|框架|算法|损失|系统|名称|软件|格式)", q
                )
                focus = m.group(1) if m else ""
            return kind, focus
    en_kind, en_focus = _en_type(q)  # a Chinese question quoting English terms
    return en_kind, en_focus


def focus_terms(analysis: QuestionAnalysis) -> set[str]:
    """The focus as match terms (stemmed English word, or the Chinese characters)."""
    if not analysis.focus:
        return set()
    return {analysis.focus} | set(tokens(analysis.focus))
