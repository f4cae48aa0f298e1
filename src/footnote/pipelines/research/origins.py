"""Origins named in a card's own text, found by code: reports, agencies, studies, "according
to …", "据…报告", academic citations, document numbers, and the figures quoted with them.

Cards of different sources that name one origin restate it: attribution groups them with a
confidence, and they count as that one origin, never as corroboration of each other. Cards of
different sources that quote one figure without naming where it comes from are left undecided
for the analyst (a shared origin is possible, independence is not shown)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from footnote.textnorm import looks_like_year, normalise, quantities
from footnote.types import EvidenceCard

_NAME = r"((?:the\s+)?[A-Z0-9][\w&'’.-]*(?:\s+(?:of|for|on|and|&|[A-Z0-9][\w&'’.-]*)){0,7})"
_MULTI = r"([A-Z][\w&'’.-]*(?:\s+(?:of|for|on|and|&|[A-Z][\w&'’.-]*)){1,7})"
_MONTHS = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b"
)
_EN = [
    re.compile(r"\b[Aa]ccording to " + _NAME),
    re.compile(
        r"\b(?:a|the|an) (?:\d{4} )?(?:report|study|survey|analysis|estimate|outlook|"
        r"review|forecast) (?:by|from|of) " + _NAME
    ),
    re.compile(r"\b(?:data|figures|estimates|numbers|statistics) (?:from|by) " + _NAME),
    re.compile(r"\b(?:cited in|quoted in|quoted from|published by|reported by) " + _NAME),
    re.compile(_NAME + r"(?:'s|’s) (?:\d{4} )?(?:report|study|survey|outlook|analysis|review)\b"),
    re.compile(  # a multi-word name before a reporting verb ("Halden Research estimates")
        _MULTI + r" (?:estimates|estimated|reports|reported|finds|found|says|said|"
        r"projects|projected|forecasts|forecast|puts|put|counts|counted)\b"
    ),
    re.compile(r"\b([A-Z][a-z]+ et al\.?,? \(?\d{4})"),
]
_ZH = [
    re.compile(r"(?:据|根据|援引|引用)([^，。,；;《》]{2,24}?)(?:发布的|的)?(?:报告|统计|数据|测算|预测|研究|调查|显示|称|估计)"),
    re.compile(r"([^，。,；;《》\s]{2,16}?)(?:发布的|的)?《"),
    re.compile(r"《([^》]{2,40})》"),
]  # fmt: skip
_LEAD = re.compile(
    r"^(?:In|At|By|From|Since|After|Before|During|As|With|While|When)\s+(?:\d{4},?\s+)?"
)
_DOC = re.compile(
    r"\b[A-Z]{2,}(?:/[A-Z]+)*[ /-]?(?:T\s)?\d{2,}(?:[/-]\d+)+\b|[\u4e00-\u9fff]{1,6}〔\d{4}〕\d+号"
)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_GENERIC = _set(
    "the a an of for on and report reports study survey outlook analysis review forecast its "
    "their market annual global new latest data figures estimate estimates 2024 2023 2025 "
    "research et al in at by from since after before during as with while when last next this "
    "报告 数据 统计 研究 发布 最新 年度 显示 机构"
)  # fmt: skip
_PRONOUN = _set("it this that these they we he she which who analysts experts one")


@dataclass(frozen=True)
class OriginMention:
    """An origin a card's text names: its kind, the words as written, a key to match on, and
    the figures quoted in the same sentence."""

    kind: str
    """named (a report, agency, study or attribution) | citation | document"""
    name: str
    key: frozenset[str]
    figures: tuple[tuple[float, str], ...]

    @property
    def label(self) -> str:
        """How the origin is shown: `kind: name`."""
        return f"{self.kind}: {self.name}"


def _key(name: str) -> frozenset[str]:
    """The distinctive words of an origin's name (generic words of reports left out)."""
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z&'-]+|[\u4e00-\u9fff]+|\d{4}", normalise(name)):
        w = w.lower().removesuffix("'s")
        if w not in _GENERIC and not w.isdigit():
            out.add(w)
    return frozenset(out)


def figures_in(text: str) -> tuple[tuple[float, str], ...]:
    """The figures of a text as (value, unit family), years left out."""
    return tuple((q.value, q.family or q.unit) for q in quantities(text) if not looks_like_year(q))


def origin_mentions(text: str) -> list[OriginMention]:
    """The origins a text names, in order, each once."""
    figures = figures_in(text)
    found: dict[frozenset[str], OriginMention] = {}
    for m in _DOC.finditer(text):
        name = m.group(0)
        found.setdefault(frozenset({"doc:" + re.sub(r"\W", "", name).lower()}),
                         OriginMention("document", name, frozenset({"doc:" + re.sub(r"\W", "", name).lower()}), figures))  # fmt: skip
    for pattern in (*_EN, *_ZH):
        for m in pattern.finditer(text):
            name = m.group(1).strip(" .,'’").removeprefix("the ").removeprefix("The ")
            name = _LEAD.sub("", name)
            if (
                name.split(" ")[0].lower() in _PRONOUN
                or _MONTHS.search(name)  # a date is no origin
                or text[m.end(1) : m.end(1) + 1] in ("/", "-")  # part of a document number
            ):
                continue
            kind = "citation" if "et al" in name else "named"
            key = _key(name)
            if not key or key in found or any(key < k for k in found):
                continue
            for k in [k for k in found if k < key]:
                del found[k]  # the longer name of one origin is kept
            found[key] = OriginMention(kind, name, key, figures)
    return list(found.values())


def same_origin(a: OriginMention, b: OriginMention) -> bool:
    """Two mentions name one origin: the distinctive words of one name are all in the other
    (`Orrin` ~ `Orrin Analytics`, not `Veldmark Energy Agency` ~ `Veldmark Statistics Office`);
    document numbers exactly."""
    if a.kind == "document" or b.kind == "document":
        return a.key == b.key
    return a.key <= b.key or b.key <= a.key


def names_itself(card: EvidenceCard, mention: OriginMention) -> bool:
    """The card's source is the named origin: its host or a part of its title (`… | Halden
    Research`) is that name, give or take one word."""
    if mention.kind == "document":
        return False
    host = (urlsplit(card.url or "").hostname or "").removeprefix("www.").rsplit(".", 1)[0]
    parts = [*re.split(r"\s+[|–—-]\s+|\s*\|\s*", card.source_title or ""), host.replace(".", " ")]
    return any(mention.key <= (k := _key(p)) and len(k - mention.key) <= 1 for p in parts)


def shared_figure(a: Sequence[tuple[float, str]], b: Sequence[tuple[float, str]]) -> bool:
    """Some figure of `a` is one of `b` (same value within 0.5 %, same unit family)."""
    return any(
        fa == fb and abs(va - vb) <= 0.005 * max(abs(va), abs(vb)) for va, fa in a for vb, fb in b
    )
