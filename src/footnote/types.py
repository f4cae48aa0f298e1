"""The vocabulary: frozen dataclasses shared by every layer. No I/O here.

Coordinates: a `BBox` is `(x0, y0, x1, y1)` in PDF points with the origin at the
top-left of the page (y grows downwards), the way a viewer draws a highlight.
Pages are 1-based. Non-paginated sources (HTML, Markdown, text) use page 1 and
`bbox=None`.

Ids:
- a source id is the first 12 hex digits of the file's sha256 (`Source.id`);
- a block id is `<sha[:8]>-p<page>-<hash6>` where hash6 hashes the block's order
  and text, so re-ingesting the same bytes yields the same ids (`make_block_id`);
- a table cell is addressed as `<block_id>#r<row>c<col>` (0-based, header rows
  first) — see `cell_id` / `parse_evidence_id`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

BlockKind = Literal[
    "heading",
    "paragraph",
    "list",
    "table",
    "formula",
    "caption",
    "figure",
    "reference",
    "footnote",
]
BLOCK_KINDS: tuple[BlockKind, ...] = (
    "heading",
    "paragraph",
    "list",
    "table",
    "formula",
    "caption",
    "figure",
    "reference",
    "footnote",
)
SourceKind = Literal["pdf", "html", "md", "text", "web", "graph"]
SourceType = Literal["primary", "secondary", "reprint", "unknown"]
Verdict = Literal["supported", "weak", "unsupported"]
AnswerStatus = Literal["answered", "no_evidence", "weak_evidence", "refused"]

BBox = tuple[float, float, float, float]


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def make_block_id(source_sha: str, page: int, order: int, text: str) -> str:
    """Stable block id from the source's content hash, the block's position and text."""
    digest = hashlib.sha256(f"{order}\x1f{text}".encode()).hexdigest()[:6]
    return f"{source_sha[:8]}-p{page}-{digest}"


def cell_id(block_id: str, row: int, col: int) -> str:
    """The evidence id of one table cell (0-based row over header + body rows)."""
    return f"{block_id}#r{row}c{col}"


_CELL_RE = re.compile(r"^(?P<block>[^#\s]+)#r(?P<row>\d+)c(?P<col>\d+)$")


def parse_evidence_id(evidence_id: str) -> tuple[str, tuple[int, int] | None]:
    """Split `block#r3c2` into `("block", (3, 2))`; a plain block id gives `(id, None)`."""
    m = _CELL_RE.match(evidence_id)
    if m is None:
        return evidence_id, None
    return m["block"], (int(m["row"]), int(m["col"]))


@dataclass(frozen=True)
class Table:
    """A table as structure: header rows and body rows of cell texts."""

    header: tuple[tuple[str, ...], ...]
    rows: tuple[tuple[str, ...], ...]
    _: KW_ONLY
    caption: str = ""

    @property
    def all_rows(self) -> tuple[tuple[str, ...], ...]:
        """Header rows followed by body rows: the row index space of cell ids."""
        return self.header + self.rows

    def cell(self, row: int, col: int) -> str | None:
        """Text of a cell by (row, col) over `all_rows`, or None when out of range."""
        rows = self.all_rows
        if 0 <= row < len(rows) and 0 <= col < len(rows[row]):
            return rows[row][col]
        return None

    def as_text(self) -> str:
        """A plain-text rendering (caption, then one line per row, cells split by ' | ')."""
        lines = [self.caption] if self.caption else []
        lines += [" | ".join(r) for r in self.all_rows]
        return "\n".join(lines)


@dataclass(frozen=True)
class Block:
    """One addressable unit of evidence inside a source."""

    id: str
    source_id: str
    kind: BlockKind
    text: str
    page: int
    _: KW_ONLY
    bbox: BBox | None = None
    section_path: tuple[str, ...] = ()
    order: int = 0
    lang: str = "en"
    table: Table | None = None
    formula_number: str | None = None
    links: tuple[str, ...] = ()
    """Ids of reference blocks that in-text citation markers in this block point to."""


@dataclass(frozen=True)
class Section:
    """A node of the section tree: heading text, level and the ids of its blocks."""

    title: str
    level: int
    _: KW_ONLY
    block_ids: tuple[str, ...] = ()
    children: tuple[Section, ...] = ()


@dataclass(frozen=True)
class Source:
    """A document version we ingested (or a web snapshot, or a graph)."""

    id: str
    kind: SourceKind
    title: str
    uri: str
    sha256: str
    _: KW_ONLY
    pages: int = 1
    lang: str = "en"
    version: int = 1
    fetched_at: str | None = None
    published_at: str | None = None
    source_type: SourceType = "unknown"
    labels: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Document:
    """A parsed source: its blocks in reading order and its section tree."""

    source: Source
    blocks: tuple[Block, ...]
    _: KW_ONLY
    sections: tuple[Section, ...] = ()


@dataclass(frozen=True)
class Hit:
    """One search result: a block with the score from each method that found it."""

    block: Block
    score: float
    _: KW_ONLY
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    snippet: str = ""
    context: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Citation:
    """One footnote on an answer sentence and what the checks made of it."""

    evidence_id: str
    _: KW_ONLY
    quote: str = ""
    page: int | None = None
    section: tuple[str, ...] = ()
    verdict: Verdict = "unsupported"
    relevance: float = 0.0
    checks: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Sentence:
    """One answer sentence with its citations."""

    text: str
    _: KW_ONLY
    citations: tuple[Citation, ...] = ()
    factual: bool = True
    marked_insufficient: bool = False


@dataclass(frozen=True)
class Usage:
    """What a run cost."""

    tokens_in: int = 0
    tokens_out: int = 0
    model_calls: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Answer:
    """The final answer object of the ask pipeline."""

    question: str
    status: AnswerStatus
    sentences: tuple[Sentence, ...]
    _: KW_ONLY
    support_score: float = 0.0
    reason: str | None = None
    evidence_board: tuple[Citation, ...] = ()
    nearest: tuple[Hit, ...] = ()
    usage: Usage = field(default_factory=Usage)

    @property
    def text(self) -> str:
        """The answer as one string of its sentences."""
        return " ".join(s.text for s in self.sentences)
