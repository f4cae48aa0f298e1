"""Rows of the `sources` and `blocks` tables, shared by the SQLite and PostgreSQL stores
(their columns are the same in both)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from footnote.serialize import block_to_dict
from footnote.store.records import SourceRecord
from footnote.types import BBox, Block, BlockKind, Source, SourceKind, SourceType, Table

BLOCK_COLUMNS = "id, source_id, kind, text, page, bbox, section_path, ord, lang, data"
SOURCE_COLUMNS = (
    "id, kind, title, uri, sha256, pages, lang, version, fetched_at, published_at, "
    "source_type, labels, acl_groups, warnings, sections, superseded_by, meta, parser, "
    "owner, created_at"
)


def block_from_row(row: Any) -> Block:
    """A `blocks` row (any mapping by column name) as a Block."""
    data: dict[str, Any] = json.loads(row["data"])
    table = data.get("table")
    bbox = json.loads(row["bbox"]) if row["bbox"] else None
    return Block(
        id=row["id"],
        source_id=row["source_id"],
        kind=cast(BlockKind, row["kind"]),
        text=row["text"],
        page=row["page"],
        bbox=cast(BBox, tuple(bbox)) if bbox else None,
        section_path=tuple(json.loads(row["section_path"])),
        order=row["ord"],
        lang=row["lang"],
        table=Table(
            header=tuple(tuple(r) for r in table["header"]),
            rows=tuple(tuple(r) for r in table["rows"]),
            caption=table.get("caption", ""),
        )
        if table
        else None,
        formula_number=data.get("formula_number"),
        links=tuple(data.get("links", ())),
        ocr_confidence=data.get("ocr_confidence"),
        latex=data.get("latex"),
    )


def record_from_row(row: Any, blocks: int) -> SourceRecord:
    """A `sources` row as a SourceRecord with its block count."""
    meta: dict[str, Any] = json.loads(row["meta"])
    source = Source(
        id=row["id"],
        kind=cast(SourceKind, row["kind"]),
        title=row["title"],
        uri=row["uri"],
        sha256=row["sha256"],
        pages=row["pages"],
        lang=row["lang"],
        version=row["version"],
        fetched_at=row["fetched_at"],
        published_at=row["published_at"],
        source_type=cast(SourceType, row["source_type"]),
        labels=tuple(json.loads(row["labels"])),
        acl_groups=tuple(json.loads(row["acl_groups"])),
        warnings=tuple(json.loads(row["warnings"])),
        authors=tuple(meta.get("authors", ())),
        doi=meta.get("doi"),
        arxiv_id=meta.get("arxiv_id"),
        parser=row["parser"],
        owner=row["owner"],
    )
    return SourceRecord(
        source=source,
        blocks=blocks,
        created_at=row["created_at"],
        superseded_by=row["superseded_by"],
    )


def source_meta(src: Source) -> dict[str, Any]:
    """The `meta` column of a source: authors and identifiers."""
    meta: dict[str, Any] = {"authors": list(src.authors)} if src.authors else {}
    if src.doi:
        meta["doi"] = src.doi
    if src.arxiv_id:
        meta["arxiv_id"] = src.arxiv_id
    return meta


def block_row(b: Block) -> tuple[Any, ...]:
    """A block as the column values of `BLOCK_COLUMNS`."""
    extra = block_to_dict(b)
    keys = ("table", "formula_number", "links", "ocr_confidence", "latex")
    data = {k: extra[k] for k in keys if k in extra}
    return (
        b.id,
        b.source_id,
        b.kind,
        b.text,
        b.page,
        json.dumps(list(b.bbox)) if b.bbox else None,
        json.dumps(list(b.section_path), ensure_ascii=False),
        b.order,
        b.lang,
        json.dumps(data, ensure_ascii=False),
    )


def context_lists(
    blocks: Sequence[Block],
    radius: int,
    near: Sequence[tuple[Any, ...]],
    head_of: dict[str, str | None],
) -> dict[str, list[str]]:
    """`DocumentStore.context_ids` from the (id, source_id, ord) rows near the blocks and each
    block's nearest preceding heading id."""
    out: dict[str, list[str]] = {}
    for b in blocks:
        found = {
            (int(o), str(i))
            for i, sid, o in near
            if sid == b.source_id and abs(int(o) - b.order) <= radius and i != b.id
        }
        head = head_of.get(b.id)
        ids = [i for _, i in sorted(found)]
        if b.kind != "heading" and head and head != b.id and head not in ids:
            ids.insert(0, head)
        out[b.id] = ids
    return out
