"""The model extractor: passages chosen by cue words, shown with short ids, settings back as
schema-checked JSON. Its output is a list of candidates like the rules'; nothing is kept before
the verification gate has checked it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model

from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.roles import RoleModel
from footnote.models.structured import structured
from footnote.pipelines.reproduce.fields import Field as SettingField
from footnote.pipelines.reproduce.fields import cue_score
from footnote.pipelines.reproduce.rules import Candidate
from footnote.prompts import render
from footnote.types import Block

SHOWN_CHARS = 700
"""Characters of one passage shown to the model (the checks use the whole block)."""
_DELIMITERS = ("<<<EVIDENCE", "EVIDENCE>>>")
_LIST = re.compile(r"\s*(?:,|;|、|，|\band\b|和|及|与)\s*")


@dataclass(frozen=True)
class Shown:
    """The passages of one extractor call: short id → block."""

    blocks: tuple[Block, ...]

    def short_ids(self) -> list[str]:
        """E1, E2, … in the order shown."""
        return [f"E{i}" for i in range(1, len(self.blocks) + 1)]

    def real_id(self, short: str) -> str | None:
        """The block id behind a short id (None when the model named none it was shown)."""
        ids = dict(zip(self.short_ids(), self.blocks, strict=True))
        block = ids.get(short.strip().strip("[]"))
        return block.id if block is not None else None


def passage_text(block: Block) -> str:
    """A block as the model sees it: table rows as text; delimiters of the data section removed."""
    text = block.table.as_text() if block.table is not None else block.text
    for d in _DELIMITERS:
        text = text.replace(d, " ")
    return text[:SHOWN_CHARS]


def choose_passages(blocks: Sequence[Block], fields: tuple[SettingField, ...], k: int) -> Shown:
    """The `k` blocks whose text mentions most of the fields' cues (reading order kept)."""
    scored = [
        (cue_score(passage_text(b), fields), -b.order, b)
        for b in blocks
        if b.kind not in ("reference", "heading", "figure") and (b.text.strip() or b.table)
    ]
    best = sorted((s for s in scored if s[0] > 0), key=lambda s: (s[0], s[1]), reverse=True)[:k]
    return Shown(tuple(sorted((b for _, _, b in best), key=lambda b: b.order)))


def output_type(fields: tuple[SettingField, ...], shown: Shown) -> type[BaseModel]:
    """The JSON schema of one call: field names and passage ids are enums in the schema (so a
    constrained decoder keeps to them); parsing is lenient so one bad entry does not void the
    reply — entries outside the enums are dropped afterwards."""
    names: dict[str, Any] = {"enum": [f.name for f in fields]}
    ids: dict[str, Any] = {"enum": shown.short_ids()}
    entry = create_model(
        "Setting",
        field=(str, Field(..., json_schema_extra=names)),
        value=(str, Field(..., max_length=200)),
        evidence=(str, Field(..., json_schema_extra=ids)),
        quote=(str, Field("", max_length=600)),
    )
    return create_model(
        "Settings", settings=(list[entry], Field(default_factory=list, max_length=60))
    )


def extract_with_model(
    model: RoleModel,
    blocks: Sequence[Block],
    fields: tuple[SettingField, ...],
    *,
    k: int,
    labels: Sequence[str] = (),
    budget: Budget | None = None,
    run_id: str | None = None,
) -> tuple[list[Candidate], Shown]:
    """Candidates for `fields` from one model call over the best `k` passages."""
    shown = choose_passages(blocks, fields, k)
    if not shown.blocks:
        return [], shown
    lang_zh = any(b.lang == "zh" for b in shown.blocks)
    field_lines = "\n".join(
        f"- {f.name}: {f.label}" + (f" ({f.label_zh})" if lang_zh else "") for f in fields
    )
    evidence = "\n\n".join(
        f"[{sid}] ({' > '.join(b.section_path[-1:])}) {passage_text(b)}"
        for sid, b in zip(shown.short_ids(), shown.blocks, strict=True)
    )
    prompt = render("settings_extract", fields=field_lines, evidence=evidence)
    out_type = output_type(fields, shown)
    result = structured(
        model,
        [Message("user", prompt)],
        out_type,
        labels=labels,
        budget=budget,
        max_tokens=500,
        run_id=run_id,
    )
    found: list[Candidate] = []
    multi = {f.name for f in fields if f.multi}
    names = {f.name for f in fields}
    for item in getattr(result, "settings", []):
        real = shown.real_id(str(item.evidence))
        value = str(item.value).strip()
        if real is None or not value or item.field not in names:
            continue  # an id it was not shown, or a field it was not asked for
        for one in split_names(value) if item.field in multi else [value]:
            found.append(Candidate(str(item.field), one, real, str(item.quote), by="model"))
    return found, shown


def split_names(value: str) -> list[str]:
    """A list of names given as one value ("TextCNN、BiLSTM and BERT") as separate values."""
    parts = [p.strip() for p in _LIST.split(value) if p.strip()]
    return parts if len(parts) > 1 else [value]
