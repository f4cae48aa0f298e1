"""Conflicts: the same metric with different values, after normalising scale (万, 亿, million,
bn), unit, currency, year and stock-vs-flow, is listed side by side with each source's stated
scope — never averaged, never silently picked. A metric is the same across wording and language
when the figures' metric concepts (a small en/zh vocabulary over words, Chinese segmented by
jieba) overlap. Values in different currencies are compared only through a stated exchange rate
(`research.fx_rates`: rate, date, source — the conflict's note says which); without one they are
shown side by side unconverted (no rate is invented). Values of different years or of a stock and
a flow are different metrics. One origin gives one value: a restatement of the same origin is not
a further value. Papers' figures carry no year: they are compared by the measure they name
(`figures.settings_conflicts`, kind `settings`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from footnote.config.research import FxRate
from footnote.pipelines.research.figures import Relevance, settings_conflicts
from footnote.pipelines.research.outline import words as segmented_words
from footnote.textnorm import (
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    looks_like_year,
    quantities,
    split_sentences,
    stem,
)
from footnote.types import Conflict, ConflictValue, EvidenceCard, sha256_hex

_CURRENCY = [
    (re.compile(r"(?:US\$|USD|\$)\s*$"), "USD"), (re.compile(r"^\s*(?:USD|US dollars?|dollars?)\b", re.I), "USD"),
    (re.compile(r"(?:EUR|€)\s*$"), "EUR"), (re.compile(r"^\s*(?:EUR|euros?)\b", re.I), "EUR"),
    (re.compile(r"(?:GBP|£)\s*$"), "GBP"), (re.compile(r"(?:CNY|RMB|¥)\s*$"), "CNY"),
    (re.compile(r"^\s*(?:元|人民币)"), "CNY"), (re.compile(r"\b([A-Z]{3})\s*$"), "*"),
]  # fmt: skip
_UNITS = {"t": "tonne", "ton": "tonne", "tonne": "tonne", "吨": "tonne", "kt": "kilotonne",
          "kg": "kg", "mw": "MW", "gw": "GW", "kw": "kW", "mwh": "MWh", "gwh": "GWh", "kwh": "kWh",
          "km": "km", "litre": "litre", "liter": "litre", "hectare": "hectare", "ha": "hectare"}  # fmt: skip
"""Units of measure; any other noun after a number makes it a count (the noun is a metric word)."""
_STOCK = re.compile(r"installed base|\bstock\b|in operation|in use|cumulative|存量|保有量", re.I)
_SCOPE = re.compile(
    r"\bonly\b|includ|exclud|\ball (?:types|chemistries)\b|covers|counts|not comparable|scope|"
    r"hydronic|\bexcept\b|仅|包括|不包括|不含|(?:^|[（(])含|含有|口径|范围", re.I,
)  # fmt: skip
_GENERIC = frozenset(
    [
        "about",
        "around",
        "worth",
        "estimated",
        "estimate",
        "according",
        "reported",
        "reports",
        "report",
        "value",
        "valued",
        "total",
        "year",
        "years",
        "some",
        "roughly",
        "nearly",
        "approximately",
        "figure",
        "figures",
    ]
)
_ZH_FORM = "据统计 统计 数据 显示 报告 估计 预计 约 达 达到 为 年 其中 亿元 万元 元 万 亿"
_GENERIC_ZH = frozenset(_ZH_FORM.split())
_VOCABULARY = {
    "market": "market 市场", "size": "size worth valued value 规模 价值 产值 总额",
    "revenue": "revenue revenues sales turnover income 营收 收入 销售额 营业收入",
    "volume": "sold shipments shipped 销量 出货量", "production": "production produced output 产量 生产",
    "capacity": "capacity 产能 容量 装机容量", "installed": "installed installation 安装 装机",
    "share": "share 份额 占比 比例", "growth": "growth grew cagr 增长 增速 增长率 年均增长率",
    "battery": "battery batteries 电池 动力电池 锂电池 蓄电池 废旧电池", "lithium": "lithium 锂",
    "recycling": "recycling recycled recycle recyclers recycler processed 回收 再生 回收利用 处理 "
    "回收处理 回收量",
    "waste": "waste scrap end-of-life 废旧 废弃 废旧电池",
    "vehicle": "vehicle vehicles ev evs car cars 汽车 电动车 新能源汽车 电动汽车",
    "heat_pump": "pump pumps 热泵", "company": "company companies firms 企业 公司",
    "price": "price prices 价格", "cost": "cost costs 成本", "tonnage": "tonnes tons 吨 万吨",
    "china": "china chinese 中国 我国", "europe": "europe european eu 欧洲 欧盟",
    "global": "global world worldwide 全球 世界", "sea": "southeast 东南亚",
    "us": "american 美国", "corpus": "corpus corpora 语料 语料库", "dataset": "dataset datasets 数据集",
    "document": "documents 文档 文件", "paper": "papers articles 论文 文章",
    "sentence": "sentences 句子", "word": "words 词 单词", "token": "tokens 词元",
    "annotation": "annotated annotations 标注", "accuracy": "accuracy 准确率 精度",
}  # fmt: skip
"""Metric concepts and their words in English and Chinese: two wordings name one metric when
their concepts overlap (a word outside the vocabulary stands for itself)."""
_CONCEPT_OF: dict[str, frozenset[str]] = {}
for _concept, _words in _VOCABULARY.items():
    for _w in _words.split():  # a compound word may name several concepts (废旧电池)
        _CONCEPT_OF[_w] = _CONCEPT_OF.get(_w, frozenset()) | {_concept}


def metric_concepts(text: str) -> frozenset[str]:
    """The metric concepts a sentence names, in either language (no stop words, no figures)."""
    out: set[str] = set()
    for w in segmented_words(text):
        w = w.lower()
        if (w in STOP_WORDS_EN or w in STOP_WORDS_ZH or w in _GENERIC or w in _GENERIC_ZH
                or any(ch.isdigit() for ch in w) or not any(ch.isalnum() for ch in w)
                or (w.isascii() and len(w) < 2)):  # fmt: skip
            continue
        out |= _CONCEPT_OF.get(w) or _CONCEPT_OF.get(stem(w)) or {stem(w)}
    return frozenset(out)


@dataclass(frozen=True)
class Measure:
    """One figure of a card: value (scale applied), unit, year, stock/flow and metric words."""

    card: EvidenceCard
    value: float
    unit: str
    text: str
    year: int | None
    kind: str
    words: frozenset[str]


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"


def _identifier_or_date(text: str, start: int, end: int) -> bool:
    """A number that is part of an identifier (`2024-017`, `MO-2023/44`, `BIBREF9`) or a day of a
    month (`12 March`, `March 12`), not a measure."""
    before, after = text[max(0, start - 1) : start], text[end : end + 1]
    if (
        before in ("/", "-", "–", "#")
        or after in ("/", "-", "–")
        or (before.isascii() and before.isalpha())
    ):
        return True
    return bool(
        re.match(rf"\s*{_MONTH}\b", text[end : end + 12], re.I)
        or re.search(rf"\b{_MONTH}\s*$", text[max(0, start - 12) : start], re.I)
    )


_CITATION_BEFORE = re.compile(r"(?:\bet al\.?,?\s*\(?|[A-Z][a-z]+,\s*|[A-Z][a-z]+\s+\()\s*$")
"""A year that cites a work ("Davidson et al. (2017)", "(Smith, 2019)"): it dates no figure."""


def _date_year(text: str, start: int) -> bool:
    """A year written after a month (`31 December 2026`): a date, so it dates the figure."""
    return bool(re.search(rf"{_MONTH}\s*$", text[max(0, start - 12) : start], re.I))


def _currency(before: str, after: str) -> str | None:
    for pattern, code in _CURRENCY:
        text = before if pattern.pattern.endswith("$") else after
        m = pattern.search(text)
        if m:
            return m.group(1) if code == "*" else code
    return None


def measures(card: EvidenceCard) -> list[Measure]:
    """The figures a card's snippet states (years, rates 'per …' and list markers left out)."""
    text = card.snippet
    years = [  # a year inside an identifier (MO-2023/44) dates nothing
        (m.start(), int(m.group(0)))
        for m in re.finditer(r"(?<!\d)(?:19|20)\d{2}(?!\d)", text)
        if not _CITATION_BEFORE.search(text[max(0, m.start() - 16) : m.start()])
        and (
            not _identifier_or_date(text, m.start(), m.end())
            or _date_year(text, m.start())
            or re.search(r"\b(?:FY|CY)$", text[max(0, m.start() - 2) : m.start()])
        )  # FY2023
    ]
    words = metric_concepts(text)
    out: list[Measure] = []
    pos = 0
    for q in quantities(text):
        at = text.find(q.text, pos)
        if at < 0:
            continue
        pos = at + len(q.text)
        if looks_like_year(q) or _identifier_or_date(text, at, pos):
            continue
        before, after = text[max(0, at - 8) : at], text[pos : pos + 30]
        if re.match(r"\s*(?:per|a|an)\s+(?:US\s+)?(?:dollar|euro|USD|EUR)\b", after, re.I):
            continue  # an exchange rate, not a measure
        unit = q.family.split(":", 1)[1] if q.family.startswith("currency:") else None
        unit = unit or _currency(before, after)
        if unit is None and q.percent:
            unit = "%"
        if unit is None:
            noun = re.match(r"\s*([A-Za-z\u4e00-\u9fff]+)", after)
            word = q.unit.lower() or (noun.group(1).lower() if noun else "")
            unit = _UNITS.get(word, _UNITS.get(word.rstrip("s"), "count"))
        after_years = [y for y in years if 0 <= y[0] - pos <= 40]  # "45% by … 2026", "… in 2023"
        year = (after_years[0][1] if after_years else
                min(years, key=lambda y: abs(y[0] - at))[1] if years else None)  # fmt: skip
        kind = "stock" if _STOCK.search(text) else "flow"
        prefix = before.split()[-1] if before.split() and _currency(before, "") else ""
        written = f"{prefix} {q.text}" if prefix and unit.isupper() else q.text
        out.append(
            Measure(card, q.value, unit, written.strip(), year, kind, words - {unit.lower()})
        )
    return out


def _money(unit: str) -> bool:
    return len(unit) == 3 and unit.isupper()


class Rates:
    """The stated exchange rates (`research.fx_rates`), either direction of each pair."""

    def __init__(self, rates: Sequence[FxRate] = ()) -> None:
        self.table: dict[tuple[str, str], tuple[float, FxRate]] = {}
        for r in rates:
            base, quote = r.pair.split("/")
            self.table.setdefault((base, quote), (r.rate, r))
            self.table.setdefault((quote, base), (1.0 / r.rate, r))

    def convert(self, value: float, frm: str, to: str) -> tuple[float, FxRate | None] | None:
        """`value` in `frm` as `to`, with the rate used (None: same unit); None without a rate."""
        if frm == to:
            return value, None
        found = self.table.get((frm, to))
        return (value * found[0], found[1]) if found else None


def _comparable(a: Measure, b: Measure) -> bool:
    """Same kind of quantity: one unit, or money in any currency (converted only at a stated
    rate, else shown unconverted)."""
    return a.unit == b.unit or (_money(a.unit) and _money(b.unit))


def _differ(a: Measure, b: Measure, rates: Rates) -> bool:
    b_value = b.value
    if a.unit != b.unit:
        converted = rates.convert(b.value, b.unit, a.unit)
        if converted is None:
            return True  # different currencies and no stated rate: both are shown
        b_value = converted[0]
    if math.isclose(a.value, b_value, rel_tol=0.01):
        return False
    return not (a.unit == "%" and b.unit == "%" and abs(a.value - b_value) < 0.5)


def _amount(value: float, unit: str) -> str:
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(value) >= scale:
            return f"{unit} {value / scale:,.3g} {word}"
    return f"{unit} {value:,.4g}"


def _conversion_note(values: Sequence[Measure], unit: str, rates: Rates) -> str:
    """How values in other currencies were compared: each converted value and the stated rate
    (its date and source) it was converted at; those without a rate, unconverted."""
    converted, used, unconverted = [], {}, []
    for m in values:
        if m.unit == unit:
            continue
        got = rates.convert(m.value, m.unit, unit)
        if got is None or got[1] is None:
            unconverted.append(m.unit)
            continue
        converted.append(f"{m.text} ≈ {_amount(got[0], unit)}")
        used[got[1].pair] = got[1]
    parts = []
    if converted:
        stated = "; ".join(f"{r.pair} {r.rate:g} on {r.date} (source: {r.source})"
                           for r in used.values())  # fmt: skip
        parts.append(f"compared in {unit} at the stated rate {stated}: {', '.join(converted)}")
    if unconverted:
        parts.append(f"in different currencies ({', '.join(sorted({unit, *unconverted}))}): "
                     "shown unconverted, no exchange rate is assumed")  # fmt: skip
    return "; ".join(parts)


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared metric concepts over the smaller set (0 below three shared concepts)."""
    shared = len(a & b)
    return shared / min(len(a), len(b)) if shared >= 3 else 0.0


def _scope_in(text: str) -> str:
    """The clauses of a snippet itself that state what its figure includes or excludes."""
    parts = re.split(r"(?<=[,;，；。(（])", text)
    return " ".join(p.strip(" ,;，；。()（）") for p in parts if _SCOPE.search(p))[:300]


def find_conflicts(
    cards: Sequence[EvidenceCard],
    origin: Callable[[EvidenceCard], str],
    scope_of: Callable[[EvidenceCard], str],
    items_of: Callable[[EvidenceCard], Sequence[str]],
    *,
    min_overlap: float = 0.3,
    fx_rates: Sequence[FxRate] = (),
    relevant: Relevance | None = None,
) -> list[Conflict]:
    """Groups of figures that disagree: one metric (overlapping metric concepts, one year,
    stock or flow, comparable units), different origins, and values more than 1 % apart —
    across currencies only at a stated rate in `fx_rates` (the note says rate, date and
    source), and without one, in different currencies at all. One value per origin; each value
    with its scope and year, as its source states it. Undated figures (papers' results) follow
    `figures.settings_conflicts`, only from cards `relevant` keeps."""
    rates = Rates(fx_rates)
    ms = [m for c in cards for m in measures(c)]
    parent = list(range(len(ms)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    for i, a in enumerate(ms):
        for j in range(i + 1, len(ms)):
            b = ms[j]
            if (
                a.year is not None  # a figure without its year is no metric to compare
                and _comparable(a, b) and a.year == b.year and a.kind == b.kind
                and origin(a.card) != origin(b.card)
                and _overlap(a.words, b.words) >= min_overlap and _differ(a, b, rates)
            ):  # fmt: skip
                parent[find(j)] = find(i)
                linked |= {i, j}
    groups: dict[int, list[Measure]] = {}
    for i in sorted(linked):
        groups.setdefault(find(i), []).append(ms[i])
    out = []
    for group in groups.values():
        unit = Counter(m.unit for m in group).most_common(1)[0][0]
        per_origin: dict[str, Measure] = {}
        restated = 0
        for m in sorted(group, key=lambda m: m.unit != unit):  # a card's value in the main unit
            key = origin(m.card)
            if key in per_origin:
                restated += per_origin[key].card.id != m.card.id
                continue
            if any(v.card.id == m.card.id for v in per_origin.values()):
                continue
            per_origin[key] = m
        picked = list(per_origin.values())
        if len(picked) < 2 or not any(_differ(a, b, rates) for a in picked for b in picked):
            continue
        common = Counter(w for m in picked for w in m.words)
        metric_words = sorted(w for w, n in common.items() if n >= 2)[:5]
        year = group[0].year
        units = sorted({m.unit for m in picked})
        metric = " ".join(metric_words) + f" ({'/'.join(units)}{', ' + str(year) if year else ''})"
        values = tuple(
            ConflictValue(m.card.id, m.value, m.unit, m.text, year=m.year,
                          scope=scope_of(m.card) or _scope_in(m.card.snippet),
                          source_title=m.card.source_title)
            for m in picked
        )  # fmt: skip
        notes = ["values differ; shown side by side with each source's scope, not combined"]
        if len(units) > 1 and all(_money(u) for u in units):
            notes.append(_conversion_note(picked, unit, rates))
        if restated:
            notes.append(f"{restated} restatement(s) of the same origin not counted as values")
        ids = sorted(m.card.id for m in picked)
        cid = "conflict_" + sha256_hex("|".join(ids).encode())[:10]
        items = tuple(dict.fromkeys(i for m in group for i in items_of(m.card)))
        out.append(Conflict(cid, metric, values, item_ids=items, note="; ".join(notes)))
    dated = {m.card.id for m in ms if m.year is not None}
    undated = [c for c in cards if c.id not in dated]
    return out + settings_conflicts(undated, origin, items_of, relevant=relevant)


def scope_sentences(text: str, span: tuple[int, int] | None, radius: int = 400) -> str:
    """Sentences near a snippet that state what a figure includes or excludes."""
    if span is None:
        return ""
    lo, hi = max(0, span[0] - radius), min(len(text), span[1] + radius)
    window = text[lo:hi]
    picked = [s for s in split_sentences(window.replace("\n", " ")) if _SCOPE.search(s)]
    return " ".join(picked[:3])[:500]
