"""Intermediate, mutable shapes the format parsers produce before blocks get ids."""

from __future__ import annotations

from dataclasses import dataclass, field

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


def union_bbox(a: BBox | None, b: BBox | None) -> BBox | None:
    """The smallest box holding both (None when either is missing)."""
    if a is None or b is None:
        return a or b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
