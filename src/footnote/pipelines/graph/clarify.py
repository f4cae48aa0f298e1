"""When graph QA asks back: signals that separate ambiguous questions from clear ones,
computed by code, combined into one decision (`decide`) against `graph.clarify_threshold`.

The model's self-reported confidence is not among them (it carries no signal: every
question came back at 1.0). The signals, each a strength in [0, 1] and the words of its
ask-back:

- `entity`: a mention aligns to several nodes (an exact or keyword tie: 1.0 / 0.9; a
  keyword runner-up of another node: half its score ratio), offered by label ("the person
  Tom Hanks or the movie …");
- `missing_property`: an attribute asked for ("the box-office gross of …", "…的票房是多少")
  whose words neither the schema, the intents' keywords nor the query vocabulary hold
  (1.0), or unknown content words elsewhere (0.3); said as "the graph does not hold X; it
  holds Y, Z";
- `schema_match`: the question names no label, property, relationship, intent keyword or
  entity of the graph (0.9), or only entities with no word of what is asked about them (0.2);
- `readings` (needs candidates): several candidate queries that return different non-empty
  results: 1.0 when no result has a strict majority of them, else half the minority's
  share (2 of 3 agree: 1/6), offered as the readings;
- `disagreement` (needs candidates): half the share of candidates outside the chosen
  result group, when `readings` did not fire.

The combined score is the strongest signal's (a noisy-or let two weak ones, unknown words
and a question naming only entities, ask back a clear follow-up); the question is asked back
when it reaches the threshold (`bench/graph_clarify_calibrate.py` fits it on a labelled dev set
under a false-clarification bound).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from footnote.index.graph.align import Alignment, Candidate
from footnote.numbers import stem_inflected
from footnote.pipelines.graph import wording
from footnote.store.graph.base import GraphRows, GraphSpec
from footnote.textnorm import CJK_RE
from footnote.verify.graph_answer import FRAME_WORDS, schema_words

ENTITY_STRENGTH = {"exact": 1.0, "keyword": 0.9, "transliteration": 0.8, "vector": 0.6}
"""Strength of a tie among distinct nodes, by how the candidates were found."""
IN_SLOT, OFF_SLOT = 1.0, 0.3
"""Strength of an unknown attribute in an attribute slot, and of unknown words elsewhere."""
MAJORITY = 0.5
"""Readings with a strict majority: this share of the minority's share (2 of 3 agree: 1/6);
with none, 1.0. Not fitted yet: the candidates' signals need the model's runs."""
NO_MATCH, ENTITY_ONLY = 0.9, 0.2
"""Strength of a question naming nothing the graph holds, and of one naming only entities."""

_QUERY_TEXT = """oldest youngest newest latest earliest first last most least more fewer less highest
    lowest largest smallest biggest best worst top average mean median sum number count
    amount many much list show give find name names tell me before after since until between
    than over under above below same different other others another each every total ever
    also not never no yes did do does done have has had get got make made place placed
    people person thing things something anything everything one ones kind type sort
    order ordered ordering item items year years recent recently currently still
    together alone both either neither any all some few several greater greatest equal
    equals smaller alphabetical alphabetically database databases data based basis"""
QUERY_WORDS = frozenset(_QUERY_TEXT.split())
"""Words of asking and of query logic (comparison, aggregation, ordering): never an
attribute the graph must hold."""

ZH_SCHEMA = {
    "名字": "name", "名称": "name", "姓名": "name", "叫什么": "name", "出生": "born",
    "生于": "born", "年龄": "born", "上映": "released", "发行": "released", "年份": "released",
    "标语": "tagline", "宣传语": "tagline", "导演": "directed", "执导": "directed",
    "演员": "acted", "出演": "acted", "演过": "acted", "参演": "acted", "主演": "acted",
    "角色": "roles", "编剧": "wrote", "制片": "produced", "评分": "rating", "评论": "reviewed",
    "电影": "movie", "影片": "movie", "人": "person", "价格": "price", "单价": "price",
    "多少钱": "price", "库存": "stock", "停产": "discontinued", "类别": "category",
    "类型": "category", "分类": "category", "供应商": "supplier", "供应": "supplies",
    "客户": "customer", "顾客": "customer", "订单": "order", "下单": "order", "订购": "orders",
    "产品": "product", "商品": "product", "数量": "quantity", "折扣": "discount",
    "国家": "country", "城市": "city", "地址": "address", "电话": "phone", "传真": "fax",
    "公司": "company", "联系人": "contact", "运费": "freight", "日期": "date", "地区": "region",
    "描述": "description", "说明": "description", "邮编": "postal",
}  # fmt: skip
"""Chinese words of attributes and things, in the English words a schema names them by:
a Chinese question is matched to the schema through them (the schema decides)."""
_ZH_ASKING_TEXT = (
    "哪些 哪个 哪家 哪位 哪年 哪一年 多少 什么 是否 有没有 怎么 怎样 为什么 谁 几 吗 呢 最 多 少 "
    "一共 总共 所有 全部 列出 告诉 我 请 给 和 与 在 的 了 是 有 个 部 种"
)
ZH_ASKING = frozenset(_ZH_ASKING_TEXT.split())
"""Chinese words of asking (never an attribute)."""

_EN_SLOTS = (
    re.compile(r"\bwhat(?:'s|\s+is|\s+was|\s+are|\s+were)\s+(?:the\s+)?(?P<a>[a-z][a-z\s-]*?)"
               r"\s+(?:of|for|in)\b", re.I),
    re.compile(r"\b(?:its|his|her|their)\s+(?P<a>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)\s*[?.!]?$",
               re.I),
    re.compile(r"\uE000'?s?\s+(?P<a>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?)\s*[?.!]?$", re.I),
    re.compile(r"^\s*(?:which|what|how\s+many)\s+(?P<a>[a-z][a-z-]*)\b", re.I),
    re.compile(r"\bhow\s+(?P<a>tall|heavy|big|long|wide|far|rich|expensive|popular|good)\b", re.I),
)  # fmt: skip
_ZH_SLOT = re.compile(
    r"的(?P<a>[\u4e00-\u9fff]{1,6}?)(?:是多少|是什么|是哪|有多|为多少|多少|是几|是谁|怎么样|如何|是多久|多久|多长|多大|多重|多高)"
)
_ZH_COUNTED = re.compile(
    r"(?:多少|几)(?:名|个|位|种|件|家|部|本|条|笔|张|次)?(?P<a>[\u4e00-\u9fff]{1,4}?)\s*(?:[？?。！!]|$)"
)
"""What a Chinese count asks for ("有多少名员工？" → 员工, "有几个孩子？" → 孩子)."""
_ZH_WHAT = re.compile(r"什么(?P<a>[\u4e00-\u9fff]{1,4}?)(?=的|[？?。！!，,]|$)")
"""What a Chinese "什么 X" asks for ("最近出演的是什么类型？" → 类型)."""
GRAPH_WORDS = re.compile(
    r"\b(?:nodes?|relationships?|edges?|vertex|vertices)\b|节点|顶点|关系", re.IGNORECASE
)
"""Words for the graph's own parts: a question asking for its nodes names what it holds."""
_EVERYTHING = frozenset({"information", "info", "details", "detail", "properties"})
_ZH_EVERYTHING = ("信息", "资料", "详情", "属性")
"""Words asking for all a node holds, never for one property it lacks."""
_PLACE = "\ue000"
_WORDS = re.compile(r"[A-Za-z][A-Za-z-]*")


@dataclass(frozen=True)
class Signal:
    """One reason to ask back: its kind, strength in [0, 1], what to say (in English, and in
    Chinese for a Chinese question: `wording`), the readings."""

    kind: str
    strength: float
    says: str
    options: tuple[str, ...] = ()
    says_zh: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict."""
        return {"kind": self.kind, "strength": round(self.strength, 4), "says": self.says,
                "says_zh": self.says_zh, "options": list(self.options)}  # fmt: skip


@dataclass(frozen=True)
class Decision:
    """The signals, their combined score, and whether it reached the threshold."""

    score: float
    ask: bool
    signals: tuple[Signal, ...] = field(default_factory=tuple)

    @property
    def top(self) -> Signal | None:
        """The strongest signal (what the ask-back says), or None."""
        return max(self.signals, key=lambda s: s.strength, default=None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict."""
        return {"score": round(self.score, 4), "ask": self.ask,
                "signals": [s.to_dict() for s in self.signals]}  # fmt: skip


def combine(signals: Iterable[Signal]) -> float:
    """The strongest signal's strength: weak signals do not add up (words unknown to the
    schema and a question naming only entities are each weak, and together no stronger)."""
    return max((min(1.0, max(0.0, s.strength)) for s in signals), default=0.0)


def decide(signals: Sequence[Signal], threshold: float) -> Decision:
    """Ask back when the combined score reaches `threshold` (and some signal fired)."""
    live = tuple(s for s in signals if s.strength > 0)
    score = combine(live)
    return Decision(score, bool(live) and score >= threshold - 1e-9, live)


def thing(c: Candidate) -> str:
    """A candidate as offered: "the person Tom Hanks", "the movie Top Gun"."""
    label = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", c.entity.label).lower()
    return f"the {label} {c.entity.name}"


def _thing_zh(c: Candidate) -> str:
    """A candidate as offered to a Chinese question: "Tom Hanks（Person）"."""
    return f"{c.entity.name}（{c.entity.label}）"


def entity_signals(found: Sequence[Alignment]) -> list[Signal]:
    """A mention that aligns to several nodes: a tie (by method), or a keyword runner-up of
    another node (half its score ratio)."""
    out = []
    for a in found:
        best = a.best
        if best is None:
            continue
        distinct = list({(c.entity.label, c.entity.key): c for c in a.candidates}.values())
        if len(distinct) < 2:
            continue
        if a.ambiguous:
            strength = ENTITY_STRENGTH.get(best.method, 0.6)
            tied = [c for c in distinct if c.score >= best.score - 1e-9]
            offered = tied if len(tied) > 1 else distinct  # names holding every word said
            offered.sort(key=lambda c: (c.entity.label, c.entity.name))  # a tie has no order
        elif best.method == "keyword" and distinct[1].method == "keyword":
            strength = 0.5 * distinct[1].score / max(best.score, 1e-9)
            offered = distinct[:2]
        else:
            continue
        names = [thing(c) for c in offered[:5]]
        says = f"{a.mention!r} could mean {_or(names)}: which one did you mean?"
        out.append(Signal("entity", strength, says, tuple(c.entity.name for c in offered[:5]),
                          wording.entity_choice(a.mention, [_thing_zh(c) for c in offered[:5]])))  # fmt: skip
    return out


def _or(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _stems(words: Iterable[str]) -> set[str]:
    return {stem_inflected(w.lower()) for w in words}


def _known(word: str, stems: set[str]) -> bool:
    st = stem_inflected(word.lower())
    return st in stems or (
        len(st) >= 4 and any(len(k) >= 4 and (st.startswith(k) or k.startswith(st)) for k in stems)
    )


def _vocabulary(spec: GraphSpec) -> tuple[set[str], list[str]]:
    """(stems of the schema's words and the intents' keywords, the Chinese keywords)."""
    keys = [k for i in spec.intents.values() for k in i.keywords]
    words = {w for k in keys for w in _WORDS.findall(k)}
    words |= {w for i in spec.intents.values() for w in _WORDS.findall(i.description)}
    return _stems(schema_words(spec) | words), [k for k in keys if CJK_RE.search(k)]


def _masked(question: str, names: Sequence[str]) -> str:
    """`question` with the entity names in it replaced by a placeholder."""
    q = question
    for n in sorted({n for n in names if len(n) >= 2}, key=len, reverse=True):
        q = re.sub(re.escape(n), _PLACE, q, flags=re.I)
    return q


def _zh_known(text: str, stems: set[str], zh_keys: Sequence[str]) -> bool:
    if any(k in text or text in k for k in zh_keys):
        return True
    return any(zh in text and _known(en, stems) for zh, en in ZH_SCHEMA.items())


def _held(spec: GraphSpec, found: Sequence[Alignment]) -> list[str]:
    labels = [a.best.entity.label for a in found if a.best is not None]
    held = [lab for lab in dict.fromkeys(labels) if lab in spec.nodes] or list(spec.nodes)
    return list(dict.fromkeys(p for lab in held for p in spec.nodes[lab].properties))


def missing_property(
    question: str,
    spec: GraphSpec,
    found: Sequence[Alignment],
    names: Sequence[str] = (),
    known: str = "",
) -> Signal | None:
    """An attribute asked for that the schema lacks: "the graph does not hold X; it holds
    Y, Z" (Y, Z the properties of the aligned entities' labels, else of every label);
    `known`: more text whose words count as held (a result's columns and values)."""
    stems, zh_keys = _vocabulary(spec)
    stems |= _stems(FRAME_WORDS | QUERY_WORDS | _EVERYTHING) | _stems(_WORDS.findall(known))
    names = [*names, *(n for a in found for n in _names(a))]
    q = _masked(question, names)
    props = _held(spec, found)
    for pattern in _EN_SLOTS:
        m = pattern.search(q)
        if m is None:
            continue
        asked = [w for w in _WORDS.findall(m["a"]) if w.lower() not in FRAME_WORDS]
        if any(not _known(w, stems) for w in asked):
            return _gap(" ".join(asked), props, IN_SLOT)
    for z in [*_ZH_SLOT.finditer(q), *_ZH_COUNTED.finditer(q), *_ZH_WHAT.finditer(q)]:
        if z["a"].endswith(_ZH_EVERYTHING):  # "节点的信息": all it holds
            continue
        if z["a"] not in ZH_ASKING and not _zh_known(z["a"], stems, zh_keys):
            return _gap(z["a"], props, IN_SLOT)
    latin = [w for w in _WORDS.findall(q) if len(w) > 2 and not _known(w, stems)]
    if latin:
        return _gap(" ".join(dict.fromkeys(latin)), props, OFF_SLOT)
    return None


def lacks(asked: str, props: Sequence[str]) -> tuple[str, str]:
    """ "the graph does not hold X; it holds Y, Z", in English and in Chinese."""
    return f"the graph does not hold {asked}; it holds {', '.join(props)}", wording.missing(
        asked, props
    )


def _gap(asked: str, props: Sequence[str], strength: float) -> Signal:
    says, says_zh = lacks(asked, props)
    return Signal("missing_property", strength, says, tuple(props[:6]), says_zh)


def _names(a: Alignment) -> list[str]:
    """The words of `a` to mask: its best entity's name, and its mention unless it only
    matched by vectors (then the mention may be the whole question)."""
    best = a.best
    if best is None:
        return []
    return [best.entity.name] + ([a.mention] if best.method != "vector" else [])


def schema_match(
    question: str, spec: GraphSpec, found: Sequence[Alignment], names: Sequence[str] = ()
) -> Signal | None:
    """A question that names nothing the graph holds (no label, property, relationship,
    intent keyword, nor entity), or only entities with no word of what is asked."""
    if GRAPH_WORDS.search(question):  # "all nodes", "所有节点": the graph itself is named
        return None
    stems, zh_keys = _vocabulary(spec)
    names = [*names, *(n for a in found for n in _names(a))]
    q = _masked(question, names)
    latin = [w for w in _WORDS.findall(q) if w.lower() not in FRAME_WORDS]
    hits = [w for w in latin if _known(w, stems)]
    cjk = "".join(CJK_RE.findall(q))
    if cjk and _zh_known(cjk, stems, zh_keys):
        hits.append(cjk)
    entities = any(a.best is not None for a in found) or _PLACE in q
    if hits:
        return None
    labels = ", ".join(spec.nodes)
    if not entities:
        says = (
            f"the question names nothing this graph holds (it holds {labels}): what are you "
            "looking for?"
        )
        return Signal("schema_match", NO_MATCH, says, tuple(spec.nodes),
                      wording.names_nothing(list(spec.nodes)))  # fmt: skip
    said = list(dict.fromkeys(a.best.entity.name for a in found if a.best)) or [*names, "it"]
    says = f"what would you like to know about {_or(said)}? This graph holds {labels}"
    zh = wording.about_what([n for n in said if n != "it"] or ["它"], list(spec.nodes))
    return Signal("schema_match", ENTITY_ONLY, says, tuple(spec.nodes), zh)


def code_signals(
    question: str,
    spec: GraphSpec,
    found: Sequence[Alignment],
    names: Sequence[str] = (),
    known: str | None = "",
) -> list[Signal]:
    """The signals that need no model: entity ties, a missing property (None `known`: not
    looked for), the schema match."""
    out = entity_signals(found)
    gap = None if known is None else missing_property(question, spec, found, names, known)
    for sig in (gap, schema_match(question, spec, found, names)):
        if sig is not None:
            out.append(sig)
    return out


def reading_signals(groups: Sequence[tuple[str, GraphRows, int]]) -> list[Signal]:
    """From the candidates that ran, grouped by result set (`(query, rows, how many)` per
    group, the chosen group first): several non-empty readings, else disagreement."""
    full = [g for g in groups if g[1].rows]
    if len(full) >= 2:
        n, largest = sum(k for _, _, k in full), max(k for _, _, k in full)
        strength = 1.0 if 2 * largest <= n else MAJORITY * (1.0 - largest / n)
        opts = tuple(f"{c}  →  {first_row(r)}" for c, r, _ in full[:4])
        says = (
            f"the question can be read in {len(full)} ways that give different results: "
            + "; ".join(f"({i + 1}) {o}" for i, o in enumerate(opts))
            + ". Which one do you mean?"
        )
        return [Signal("readings", strength, says, opts, wording.readings(opts))]
    total = sum(k for _, _, k in groups)
    if len(groups) >= 2 and total:
        says = "the candidate queries disagree about this question: please say more precisely"
        return [Signal("disagreement", 0.5 * (1.0 - groups[0][2] / total), says,
                       says_zh=wording.DISAGREE)]  # fmt: skip
    return []


def first_row(rows: GraphRows) -> str:
    """The first row in words, with how many more there are."""
    if not rows.rows:
        return "no rows"
    first = ", ".join(f"{c}: {v}" for c, v in zip(rows.columns, rows.rows[0], strict=False))
    more = f" (+{len(rows.rows) - 1} more)" if len(rows.rows) > 1 else ""
    return first[:120] + more


def row_words(rows: GraphRows, limit: int = 50) -> list[str]:
    """What a result holds, as text for `missing_property`'s `known`: its columns and the
    values of its first `limit` rows."""
    return [*rows.columns, *(str(v) for r in rows.rows[:limit] for v in r)]


_GAPS = (
    (re.compile(r"unknown property (\w+)\.(\w+)"), "property"),
    (re.compile(r"unknown property (\w+) on (\w+)"), "property_on"),
    (re.compile(r"unknown label (\w+)"), "label"),
    (re.compile(r"unknown relationship type (\w+)"), "relationship"),
)


def schema_gap(error: str, spec: GraphSpec) -> tuple[str, list[str], str] | None:
    """When the last rejection named a schema element the graph lacks: the sentence "the
    graph does not hold X", the nearest elements it does hold and the sentence in Chinese
    (`wording`); else None (also when the property exists on another label: the query was
    wrong, the graph is not)."""
    props = sorted({p for n in spec.nodes.values() for p in n.properties}
                   | {p for r in spec.relationships.values() for p in r.properties})  # fmt: skip
    found = [(m, kind) for pattern, kind in _GAPS if (m := pattern.search(error))]
    for m, kind in sorted(found, key=lambda f: f[0].start())[:1]:  # the first reason given
        if kind in ("property", "property_on") and m.group(2 if kind == "property" else 1) in props:
            return None  # the graph holds it, on another label: a wrong query, not a gap
        if kind == "property":
            what, pool = m.group(2), props
        elif kind == "property_on":
            label = m.group(2)
            what = m.group(1)
            pool = sorted(spec.nodes[label].properties) if label in spec.nodes else props
        elif kind == "label":
            what, pool = m.group(1), sorted(spec.nodes)
        else:
            what, pool = m.group(1), sorted(spec.relationships)
        near = difflib.get_close_matches(what, pool, n=3, cutoff=0.5) or pool[:3]
        noun = {"label": "nodes labelled", "relationship": "relationships of type"}.get(
            kind, "the property"
        )
        said = f"the graph does not hold {noun} {what!r}; nearest it holds: {', '.join(near)}"
        return said, near, wording.lacks_element(kind, what, near)
    return None
