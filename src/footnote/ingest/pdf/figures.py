"""Figures: the text drawn inside a figure (labels, axes, legends) becomes one `figure` block.

A figure is found from its "Figure N" caption: the images / form XObjects right above the
caption, plus the short or small-font text blocks stacked between the caption and the nearest
body text above it. The figure block's text is the caption followed by the figure's own text,
the way a table block leads with its caption; the caption block itself stays.
"""

from __future__ import annotations

from footnote.ingest.block_rules import NAMED_HEADINGS, NUMBERED, heading_key
from footnote.ingest.captions import FIGURE_CAPTION
from footnote.ingest.raw import RawBlock, union_bbox
from footnote.textnorm import count_cjk
from footnote.types import BBox

_TERMINAL = (".", "!", "?", "。", "！", "？")
_NEAR = 60.0
"""Points between a caption and the bottom of the figure it belongs to."""


def attach_figures(
    blocks: list[RawBlock], graphics: list[BBox], body: float, page_height: float
) -> list[RawBlock]:
    """One page's blocks with figure-internal text folded into `figure` blocks."""
    out = list(blocks)
    i = 0
    while i < len(out):
        cap = out[i]
        if cap.kind != "caption" or cap.bbox is None or not FIGURE_CAPTION.match(cap.text):
            i += 1
            continue
        if _second_caption(out, i):
            i += 1
            continue
        region = _graphics_above(cap.bbox, graphics)
        members = _members(out, i, region, body, page_height)
        if region is None and not members:
            i += 1
            continue
        for m in members:
            region = union_bbox(region, m.bbox)
        inner = "\n".join(m.text for m in members)
        text = f"{cap.text}\n{inner}" if inner else cap.text
        figure = RawBlock("figure", text, cap.page, region, size=cap.size)
        ids = {id(m) for m in members}
        at = min((k for k, b in enumerate(out) if id(b) in ids), default=i)
        kept = [b for b in out if id(b) not in ids]
        cap_at = kept.index(cap)
        at = min(at, cap_at)
        kept.insert(at, figure)
        out = kept
        i = kept.index(cap) + 1
    return out


def _second_caption(blocks: list[RawBlock], i: int) -> bool:
    """The second caption of a bilingual pair ("图 1 …" right above "Figure 1 …")."""
    cap = blocks[i]
    assert cap.bbox is not None
    for b in blocks[max(0, i - 2) : i]:
        if (
            b.kind == "caption"
            and FIGURE_CAPTION.match(b.text)
            and b.bbox is not None
            and -2 < cap.bbox[1] - b.bbox[3] < 40
        ):
            return True
    return False


def _graphics_above(cap: BBox, graphics: list[BBox]) -> BBox | None:
    """The union of images/forms whose bottom sits just above the caption, over its width."""
    region: BBox | None = None
    for g in graphics:
        overlap = min(g[2], cap[2]) - max(g[0], cap[0])
        if overlap > 0 and cap[1] - _NEAR <= g[3] <= cap[1] + 5:
            region = union_bbox(region, g)
    return region


def _members(
    blocks: list[RawBlock], ci: int, region: BBox | None, body: float, page_height: float
) -> list[RawBlock]:
    cap = blocks[ci]
    assert cap.bbox is not None
    found: list[RawBlock] = []
    if region is not None:
        found = [b for b in blocks if b.page == cap.page and _inside(b, region) and _movable(b)]
    top = min([cap.bbox[1], *(b.bbox[1] for b in found if b.bbox)])
    j = ci - 1
    while j >= 0:
        b = blocks[j]
        j -= 1
        if any(b is f for f in found):
            continue
        if b.page != cap.page or b.bbox is None or not _movable(b):
            break
        if b.bbox[3] > cap.bbox[1] + 3 or top - b.bbox[3] > (12 if region else 0.1 * page_height):
            break
        x_overlap = min(b.bbox[2], cap.bbox[2]) - max(b.bbox[0], cap.bbox[0])
        same_flow = bool(b.lines and cap.lines) and b.lines[0].left == cap.lines[0].left
        if x_overlap <= 0 and not same_flow:
            break
        if not _figure_like(b, body):
            break
        found.append(b)
        top = min(top, b.bbox[1])
    return found


def _inside(b: RawBlock, box: BBox) -> bool:
    if b.bbox is None:
        return False
    cx, cy = (b.bbox[0] + b.bbox[2]) / 2, (b.bbox[1] + b.bbox[3]) / 2
    return box[0] - 3 <= cx <= box[2] + 3 and box[1] - 3 <= cy <= box[3] + 3


def _movable(b: RawBlock) -> bool:
    """Blocks that may belong to a figure (never captions, tables or real section headings)."""
    if b.kind in ("caption", "table", "figure", "reference"):
        return False
    named = bool(NUMBERED.match(b.text)) or heading_key(b.text) in NAMED_HEADINGS
    return not (b.kind == "heading" and named)


def _figure_like(b: RawBlock, body: float) -> bool:
    """Small-font or short, fragmentary text: labels and legends, not a paragraph."""
    lines = [ln.text for ln in b.lines] or [b.text]
    avg = sum(len(t) for t in lines) / len(lines)
    words = len(b.text.split())
    if b.size <= 0.75 * body:
        return True
    if b.size <= body - 1.5 and avg < 60 and len(lines) <= 6:
        return True
    cjk = count_cjk(b.text)
    prose_end = b.text.endswith(_TERMINAL) and (words > 3 or cjk > 5)
    width = avg + cjk / len(lines)  # a Han character is about two Latin letters wide
    return width <= 40 and len(lines) <= 4 and not prose_end
