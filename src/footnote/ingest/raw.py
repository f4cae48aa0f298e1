"""Intermediate, mutable shapes the format parsers produce before blocks get ids."""

from __future__ import annotations

from dataclasses import dataclass, field

from footnote.ingest.metadata import Meta
from footnote.types import BBox, BlockKind, Table


@dataclass
class Line:
    """One text line of a PDF page, top-left origin, with its dominant font."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    page: int = 1
    left: float = 0.0
    """Left edge of the column the line sits in (for indentation)."""
    conf: float | None = None
    """OCR confidence (0–1) of a line read from a page image; None for a text layer."""
    note: bool = False
    """The line starts a footnote (its number was read as a note's, `pdf.notes`)."""

    @property
    def height(self) -> float:
        """Line height in points."""
        return self.bottom - self.top

    @property
    def bbox(self) -> BBox:
        """(x0, top, x1, bottom)."""
        return (self.x0, self.top, self.x1, self.bottom)


@dataclass
class RawBlock:
    """A block before section paths, merging, splitting and ids are settled."""

    kind: BlockKind
    text: str
    page: int = 1
    bbox: BBox | None = None
    level: int = 0
    """Heading level (1 = top section; 0 = document title); 0 for other kinds."""
    table: Table | None = None
    formula_number: str | None = None
    lines: list[Line] = field(default_factory=list)
    size: float = 0.0
    """Dominant font size (PDF only; 0 elsewhere)."""
    bold: bool = False
    latex: str | None = None

    @property
    def ocr_confidence(self) -> float | None:
        """Mean OCR confidence of the block's lines, weighted by length (None: no OCR)."""
        read = [(ln.conf, len(ln.text)) for ln in self.lines if ln.conf is not None]
        if not read:
            return None
        total = sum(n for _, n in read) or 1
        return round(sum(c * n for c, n in read) / total, 3)


def union_bbox(a: BBox | None, b: BBox | None) -> BBox | None:
    """The smallest box holding both (None when either is missing)."""
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


@dataclass
class Parsed:
    """What a format parser hands to assembly."""

    blocks: list[RawBlock]
    meta: Meta = field(default_factory=Meta)
    pages: int = 1
    vocab: set[str] = field(default_factory=set)
    """Words seen inside lines (PDF), to tell soft hyphens from compound ones."""
    warnings: list[str] = field(default_factory=list)
    parser: str = ""
    """What read the file beyond its text layer (see `Source.parser`)."""
