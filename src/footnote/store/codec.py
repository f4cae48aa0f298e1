"""Conversions between the L0 dataclasses and JSON-able dicts (store rows, `--json`, API)."""

from __future__ import annotations

from typing import Any, cast

from footnote.types import Answer, BBox, Block, BlockKind, Citation, Section, Source, Table


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


def answer_to_dict(answer: Answer, *, run_id: str | None = None) -> dict[str, Any]:
    """The public answer contract of `footnote ask --json` and the API."""
    return {
        "run_id": run_id,
        "question": answer.question,
        "status": answer.status,
        "answer": answer.text,
        "sentences": [
            {
                "text": s.text,
                "citations": [citation_to_dict(c) for c in s.citations],
                "factual": s.factual,
                "insufficient": s.marked_insufficient,
            }
            for s in answer.sentences
        ],
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
