"""The public JSON contracts: the L0 dataclasses as JSON-able dicts (`--json`, the API, store rows)."""

from __future__ import annotations

import dataclasses
import types as _pytypes
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from footnote.events import BriefEvent, CheckedSentence, Event, Final, event_data
from footnote.types import (
    Answer,
    BBox,
    Block,
    BlockKind,
    Brief,
    Citation,
    Claim,
    EvidenceCard,
    Section,
    Sentence,
    Source,
    Table,
    flat_sentence,
)

T = TypeVar("T")


def table_to_dict(table: Table) -> dict[str, Any]:
    """A table as `{caption, header, rows}`."""
    return {
        "caption": table.caption,
        "header": [list(r) for r in table.header],
        "rows": [list(r) for r in table.rows],
    }


def table_from_dict(data: dict[str, Any]) -> Table:
    """Inverse of `table_to_dict`."""
    return Table(
        header=tuple(tuple(str(c) for c in r) for r in data.get("header", [])),
        rows=tuple(tuple(str(c) for c in r) for r in data.get("rows", [])),
        caption=str(data.get("caption", "")),
    )


def block_to_dict(block: Block) -> dict[str, Any]:
    """The documented JSON shape of a block (the `--json` contract)."""
    out: dict[str, Any] = {
        "id": block.id,
        "source_id": block.source_id,
        "kind": block.kind,
        "page": block.page,
        "section_path": list(block.section_path),
        "text": block.text,
        "order": block.order,
        "lang": block.lang,
        "bbox": list(block.bbox) if block.bbox else None,
    }
    if block.table is not None:
        out["table"] = table_to_dict(block.table)
        out["cells"] = [
            {"id": f"{block.id}#r{r}c{c}", "row": r, "col": c, "text": text}
            for r, row in enumerate(block.table.all_rows)
            for c, text in enumerate(row)
        ]
    if block.formula_number:
        out["formula_number"] = block.formula_number
    if block.links:
        out["links"] = list(block.links)
    if block.ocr_confidence is not None:
        out["ocr_confidence"] = block.ocr_confidence
    if block.latex:
        out["latex"] = block.latex
    return out


def block_from_dict(data: dict[str, Any]) -> Block:
    """Inverse of `block_to_dict`."""
    bbox = data.get("bbox")
    table = data.get("table")
    return Block(
        id=str(data["id"]),
        source_id=str(data["source_id"]),
        kind=cast(BlockKind, data["kind"]),
        text=str(data["text"]),
        page=int(data["page"]),
        bbox=cast(BBox, tuple(float(v) for v in bbox)) if bbox else None,
        section_path=tuple(data.get("section_path", ())),
        order=int(data.get("order", 0)),
        lang=str(data.get("lang", "en")),
        table=table_from_dict(table) if table else None,
        formula_number=data.get("formula_number"),
        links=tuple(data.get("links", ())),
        ocr_confidence=data.get("ocr_confidence"),
        latex=data.get("latex"),
    )


def section_to_dict(section: Section) -> dict[str, Any]:
    """A section tree node as a dict."""
    return {
        "title": section.title,
        "level": section.level,
        "block_ids": list(section.block_ids),
        "children": [section_to_dict(c) for c in section.children],
    }


def section_from_dict(data: dict[str, Any]) -> Section:
    """Inverse of `section_to_dict`."""
    return Section(
        title=str(data["title"]),
        level=int(data["level"]),
        block_ids=tuple(data.get("block_ids", ())),
        children=tuple(section_from_dict(c) for c in data.get("children", ())),
    )


def source_to_dict(source: Source) -> dict[str, Any]:
    """A source as a dict."""
    return {
        "id": source.id,
        "kind": source.kind,
        "title": source.title,
        "uri": source.uri,
        "sha256": source.sha256,
        "pages": source.pages,
        "lang": source.lang,
        "version": source.version,
        "fetched_at": source.fetched_at,
        "published_at": source.published_at,
        "source_type": source.source_type,
        "labels": list(source.labels),
        "acl_groups": list(source.acl_groups),
        "warnings": list(source.warnings),
        "owner": source.owner,
        "authors": list(source.authors),
        "doi": source.doi,
        "arxiv_id": source.arxiv_id,
        "parser": source.parser,
    }


def citation_to_dict(c: Citation) -> dict[str, Any]:
    """A citation in the public `--json` / API shape."""
    return {
        "id": c.evidence_id,
        "page": c.page,
        "section": list(c.section),
        "quote": c.quote,
        "verdict": c.verdict,
        "relevance": c.relevance,
        "checks": dict(c.checks),
    }


def sentence_to_dict(s: Sentence) -> dict[str, Any]:
    """One answer sentence in the public contract (in `final` and in each `sentence` event)."""
    return {
        "text": s.text,
        "citations": [citation_to_dict(c) for c in s.citations],
        "factual": s.factual,
        "insufficient": s.marked_insufficient,
    }


def answer_to_dict(answer: Answer, *, run_id: str | None = None) -> dict[str, Any]:
    """The public answer contract of `footnote ask --json` and the API."""
    return {
        "run_id": run_id,
        "question": answer.question,
        "status": answer.status,
        "answer": answer.text,
        "sentences": [sentence_to_dict(s) for s in answer.sentences],
        "support_score": answer.support_score,
        "reason": answer.reason,
        "evidence_board": [citation_to_dict(c) for c in answer.evidence_board],
        "nearest": [
            {
                "id": h.block.id,
                "page": h.block.page,
                "section": list(h.block.section_path),
                "text": h.block.text[:300],
            }
            for h in answer.nearest
        ],
        "usage": {
            "tokens_in": answer.usage.tokens_in,
            "tokens_out": answer.usage.tokens_out,
            "model_calls": answer.usage.model_calls,
            "seconds": answer.usage.seconds,
        },
    }


Marks = Callable[[Sequence[Any]], str]
"""The citation markers written after a sentence (`[1]`, `[^2]`), given its citations."""


def answer_pieces(answer: dict[str, Any], marks: Marks | None = None) -> list[str]:
    """The answer's sentences (the public contract) as flat text, one piece each: its citation
    `marks`, and `INSUFFICIENT_MARK` after a weakly supported one (`types.flat_sentence`)."""
    return [
        flat_sentence(str(s["text"]), insufficient=bool(s.get("insufficient")),
                      marks=marks(s.get("citations") or []) if marks else "")
        for s in answer.get("sentences") or []
    ]  # fmt: skip


def answer_text(answer: dict[str, Any], marks: Marks | None = None) -> str:
    """An answer (the public contract) as one flat string, weak sentences marked: what every
    surface that shows an answer as plain text prints."""
    return " ".join(answer_pieces(answer, marks))


def claims_text(claims: Sequence[Claim], marks: Marks | None = None) -> str:
    """A brief's claims as flat text: each with its card `marks`, a weak one marked like a weak
    answer sentence."""
    return " ".join(
        flat_sentence(c.text, insufficient=c.verdict == "weak",
                      marks=marks(c.card_ids) if marks else "")
        for c in claims
    )  # fmt: skip


# -- research artifacts ----------------------------------------------------------------------
def to_plain(obj: Any) -> Any:
    """A dataclass (or a structure of them) as JSON-able dicts, lists and scalars."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list | tuple):
        return [to_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    return obj


def from_plain(cls: type[T], data: Any) -> T:
    """Inverse of `to_plain` for the frozen dataclasses of `footnote.types` (fields checked)."""
    return cast(T, _build(cls, data))


def _build(tp: Any, data: Any) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise ValueError(f"{tp.__name__}: expected an object, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        kw = {
            f.name: _build(hints[f.name], data[f.name])
            for f in dataclasses.fields(tp)
            if f.name in data and f.name != "_"
        }
        return tp(**kw)
    if origin in (typing.Union, _pytypes.UnionType):
        if data is None:
            return None
        inner = [a for a in args if a is not type(None)]
        return _build(inner[0], data) if len(inner) == 1 else data
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], v) for v in data)
        return tuple(_build(a, v) for a, v in zip(args, data, strict=True))
    if origin is dict:
        return {str(k): _build(args[1], v) for k, v in dict(data).items()}
    if origin is typing.Literal:
        if data not in args:
            raise ValueError(f"{data!r} is not one of {args}")
        return data
    if tp is float:
        return float(data)
    if tp is int:
        return int(data)
    return data


def card_to_dict(card: EvidenceCard) -> dict[str, Any]:
    """An evidence card in the public JSON shape (design §4)."""
    out: dict[str, Any] = to_plain(card)
    out["span"] = list(card.span) if card.span else None
    return out


def brief_to_dict(brief: Brief) -> dict[str, Any]:
    """The public brief contract: sections with claims, each claim's cards with their snippets.

    Each section also carries `text` and `citations` as `{id, snippets, title, metadata}`: the
    shape Ai2's ScholarQA (AstaBench SQA) scorer reads."""
    cards = {c.id: c for c in brief.cards}

    def cite(card_id: str) -> dict[str, Any]:
        c = cards[card_id]
        return {
            "id": c.id,
            "snippets": [c.snippet],
            "title": c.source_title,
            "metadata": {
                "url": c.url,
                "locator": c.locator,
                "published_at": c.published_at,
                "source_type": c.source_type,
                "independence": c.independence,
                "labels": list(c.labels),
            },
        }

    sections = []
    for s in brief.sections:
        claims = [
            {**to_plain(cl), "citations": [cite(i) for i in cl.card_ids if i in cards]}
            for cl in s.claims
        ]
        used = list(dict.fromkeys(i for cl in s.claims for i in cl.card_ids if i in cards))
        sections.append(
            {
                "item_id": s.item_id,
                "title": s.title,
                "text": claims_text(s.claims),
                "coverage": s.coverage,
                "notes": list(s.notes),
                "bound_cards": list(s.bound_cards),
                "claims": claims,
                "citations": [cite(i) for i in used],
            }
        )
    return {
        "run_id": brief.run_id,
        "question": brief.question,
        "mode": brief.mode,
        "outline": to_plain(brief.outline),
        "sections": sections,
        "cards": [card_to_dict(c) for c in brief.cards],
        "conflicts": to_plain(brief.conflicts),
        "checklist": to_plain(brief.checklist),
        "not_covered": list(brief.not_covered),
        "unused_cards": list(brief.unused_cards),
        "wrapped_up": brief.wrapped_up,
        "sample_rate": brief.sample_rate,
        "budget_used": dict(brief.budget_used),
        "review": to_plain(brief.review),
    }


def brief_from_dict(data: dict[str, Any]) -> Brief:
    """Inverse of `brief_to_dict` (the claims' inlined citations are dropped: cards hold them)."""
    plain = dict(data)
    plain["sections"] = [
        {
            **{k: v for k, v in s.items() if k not in ("text", "citations")},
            "claims": [{k: v for k, v in c.items() if k != "citations"} for c in s["claims"]],
        }
        for s in data["sections"]
    ]
    return from_plain(Brief, plain)


def event_to_dict(event: Event, *, run_id: str | None = None) -> dict[str, Any]:
    """An event's JSON payload (the SSE `data:`); `final` carries the public answer contract,
    `brief` the public brief contract."""
    if isinstance(event, Final):
        return {"answer": answer_to_dict(event.answer, run_id=run_id)}
    if isinstance(event, BriefEvent):
        return {"brief": brief_to_dict(event.brief)}
    if isinstance(event, CheckedSentence):
        return {"index": event.index, "sentence": sentence_to_dict(event.sentence)}
    out: dict[str, Any] = to_plain(event_data(event))
    return out
