"""Opening a PDF file with pypdfium2 and walking its characters into positioned text fragments."""

from __future__ import annotations

import bisect
import ctypes
import functools
import itertools
import math
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from footnote.errors import EncryptedDocument, IngestError, UnsupportedInput
from footnote.ingest.captions import TABLE_CAPTION
from footnote.ingest.cleanup import clean_text
from footnote.ingest.pdf import notes
from footnote.ingest.raw import Line
from footnote.textnorm import CJK_IDEOGRAPHS, is_cjk

_ERR_PASSWORD = 4
BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|medi|cmbx|-bd\b|,bd|\bbd\b", re.I)


@dataclass
class PageText:
    """The positioned text of one page plus what the page holds besides text."""

    number: int
    width: float
    height: float
    fragments: list[Line] = field(default_factory=list)
    n_chars: int = 0
    n_images: int = 0
    n_paths: int = 0
    n_hlines: int = 0
    """Thin horizontal vector paths (rules), a hint that the page may hold a ruled table."""
    n_vlines: int = 0
    n_rects: int = 0
    has_table_caption: bool = False
    graphics: list[tuple[float, float, float, float]] = field(default_factory=list)
    """Top-level images and form XObjects (top-left origin): where figures sit."""
    image_cover: float = 0.0
    """The share of the page the largest image covers (a scan covers most of it)."""
    hrules: list[tuple[float, float, float]] = field(default_factory=list)
    """Horizontal rules as (y, x0, x1), top-left origin: the lines of ruled tables."""
    vrules: list[tuple[float, float, float]] = field(default_factory=list)
    """Vertical rules as (x, y0, y1)."""


def sniff_pdf(data: bytes, path: Path) -> None:
    """Refuse bytes that are not a complete PDF (magic header, %%EOF trailer)."""
    if b"%PDF-" not in data[:1024]:
        raise UnsupportedInput(f"{path.name}: not a PDF (no %PDF- header)", path=str(path))
    if b"%%EOF" not in data[-4096:]:
        raise UnsupportedInput(
            f"{path.name}: truncated or corrupt PDF (no %%EOF trailer)", path=str(path)
        )


def open_pdf(data: bytes, path: Path, password: str | None) -> pdfium.PdfDocument:
    """Open PDF bytes; raise EncryptedDocument / UnsupportedInput with clear messages."""
    try:
        return pdfium.PdfDocument(data, password=password or None)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _ERR_PASSWORD:
            hint = "wrong password" if password else "encrypted PDF: pass --password"
            raise EncryptedDocument(f"{path.name}: {hint}", path=str(path)) from None
        raise UnsupportedInput(f"{path.name}: corrupt PDF ({exc})", path=str(path)) from None


def metadata_title(pdf: pdfium.PdfDocument) -> str:
    """The Info dictionary's title when it looks like a real title."""
    try:
        title = clean_text(str(pdf.get_metadata_dict().get("Title", "")))
    except pdfium.PdfiumError:
        return ""
    low = title.lower()
    if (
        len(title) < 4
        or len(title) > 300
        or not re.search(rf"[A-Za-z{CJK_IDEOGRAPHS}]{{3}}", title)
    ):
        return ""
    if re.search(r"\.(docx?|pdf|tex|dvi|indd|qxd)$|^untitled|^microsoft|^slide", low):
        return ""
    return title


def metadata_dict(pdf: pdfium.PdfDocument) -> dict[str, str]:
    """The Info dictionary (Title, Author, CreationDate …); empty when unreadable."""
    try:
        return {str(k): str(v) for k, v in pdf.get_metadata_dict().items()}
    except pdfium.PdfiumError:
        return {}


def page_text(pdf: pdfium.PdfDocument, index: int) -> str:
    """All text of one page (0-based) as pdfium orders it, rotated margin stamps included."""
    if index >= len(pdf):
        return ""
    page = pdf[index]
    textpage = page.get_textpage()
    try:
        return clean_text(textpage.get_text_range())
    finally:
        textpage.close()
        page.close()


class _Frag:
    """A fragment under construction."""

    __slots__ = ("bold", "bottom", "chars", "index", "nchar", "sizes", "top", "x0", "x1")

    def __init__(self, x0: float, top: float, x1: float, bottom: float) -> None:
        self.x0, self.top, self.x1, self.bottom = x0, top, x1, bottom
        self.chars: list[str] = []
        self.index: list[int] = []
        """Each character's index in the text page (-1 for an inserted space or hyphen)."""
        self.sizes: dict[float, int] = {}
        self.bold = 0
        self.nchar = 0


def read_pages(pdf: pdfium.PdfDocument, indices: range | None = None) -> list[PageText]:
    """Every page's (or the 0-based `indices`') text fragments: runs of characters on one
    baseline without a wide gap."""
    pages = []
    for index in indices if indices is not None else range(len(pdf)):
        page = pdf[index]
        try:
            pages.append(_read_page(page, index + 1))
        finally:
            page.close()
    return pages


def _objects(page: pdfium.PdfPage) -> Iterator[tuple[Any, int, int]]:
    """(raw object, type, nesting level) of every page object, form contents included; raw
    pdfium calls, since wrapping ~100k objects a document in Python objects costs seconds."""
    stack: list[tuple[Any, int]] = [(None, 0)]
    while stack:
        form, level = stack.pop()
        if form is None:
            count = pdfium_c.FPDFPage_CountObjects(page.raw)
            get = functools.partial(pdfium_c.FPDFPage_GetObject, page.raw)
        else:
            count = pdfium_c.FPDFFormObj_CountObjects(form)
            get = functools.partial(pdfium_c.FPDFFormObj_GetObject, form)
        for k in range(count):
            obj = get(k)
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
                continue
            yield obj, kind, level
            if kind == pdfium_c.FPDF_PAGEOBJ_FORM and level < 15:
                stack.append((obj, level + 1))


def _bounds(obj: Any) -> tuple[float, float, float, float]:
    box = (ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float())
    pdfium_c.FPDFPageObj_GetBounds(obj, *box)
    return box[0].value, box[1].value, box[2].value, box[3].value


def _read_page(page: pdfium.PdfPage, number: int) -> PageText:
    left, bottom, right, top = page.get_bbox()
    out = PageText(number=number, width=right - left, height=top - bottom)
    fills = PageText(number=number, width=out.width, height=out.height)
    for obj, kind, level in _objects(page):
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE or kind == pdfium_c.FPDF_PAGEOBJ_FORM:
            x0, y0, x1, y1 = _bounds(obj)
            area = (x1 - x0) * (y1 - y0)
            if level == 0 and x1 - x0 > 20 and y1 - y0 > 15 and area < 0.6 * out.width * out.height:
                out.graphics.append((x0 - left, top - y1, x1 - left, top - y0))
            if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                out.n_images += 1
                cover = area / max(out.width * out.height, 1.0)
                out.image_cover = max(out.image_cover, min(cover, 1.0))
        elif kind == pdfium_c.FPDF_PAGEOBJ_PATH:
            out.n_paths += 1
            if out.n_paths > 3000:
                continue  # a vector figure; its rules are not a table's
            x0, y0, x1, y1 = _bounds(obj)
            w, h = x1 - x0, y1 - y0
            if h < 3 and w > 8:
                out.n_hlines += 1
                out.hrules.append((top - (y0 + y1) / 2, x0 - left, x1 - left))
            elif w < 3 and h > 8:
                out.n_vlines += 1
                out.vrules.append(((x0 + x1) / 2 - left, top - y1, top - y0))
            elif w > 1 and h > 1:
                out.n_rects += w > 8 and h > 8
                if level == 0:
                    _path_rules(obj, left, top, out, fills)
    out.hrules += fills.hrules  # filled boxes (row stripes, shaded cells) bound cells too
    out.vrules += fills.vrules
    textpage = page.get_textpage()
    try:
        cuts = sorted(out.vrules) if len(out.vrules) >= 2 else []
        frags, out.n_chars, marked = _fragments(textpage, left, top, number, cuts)
        out.fragments = notes.resolve(frags, marked, out.height)
        out.has_table_caption = any(TABLE_CAPTION.match(f.text) for f in out.fragments)
    finally:
        textpage.close()
    return out


def _path_rules(obj: Any, left: float, top: float, out: PageText, fills: PageText) -> None:
    """The axis-parallel line segments of a top-level path (a cell's box, a drawn grid);
    those of a filled, unstroked path go to `fills`."""
    n = pdfium_c.FPDFPath_CountSegments(obj)
    if not 2 <= n <= 400:
        return
    mode, stroke = ctypes.c_int(), ctypes.c_int()
    if pdfium_c.FPDFPath_GetDrawMode(obj, mode, stroke) and not stroke.value:
        out = fills
    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
        return
    fx, fy = ctypes.c_float(), ctypes.c_float()
    pts: list[tuple[float, float, int]] = []
    for k in range(n):
        seg = pdfium_c.FPDFPath_GetPathSegment(obj, k)
        pdfium_c.FPDFPathSegment_GetPoint(seg, fx, fy)
        x, y = m.a * fx.value + m.c * fy.value + m.e, m.b * fx.value + m.d * fy.value + m.f
        pts.append((x - left, top - y, pdfium_c.FPDFPathSegment_GetType(seg)))
        if pdfium_c.FPDFPathSegment_GetClose(seg):
            start = next((p for p in reversed(pts) if p[2] == pdfium_c.FPDF_SEGMENT_MOVETO), None)
            if start is not None:
                pts.append((start[0], start[1], pdfium_c.FPDF_SEGMENT_LINETO))
    for (ax, ay, _), (bx, by, kind) in itertools.pairwise(pts):
        if kind != pdfium_c.FPDF_SEGMENT_LINETO:
            continue
        if abs(ay - by) < 1.0 and abs(ax - bx) > 3:
            out.hrules.append(((ay + by) / 2, min(ax, bx), max(ax, bx)))
        elif abs(ax - bx) < 1.0 and abs(ay - by) > 3:
            out.vrules.append(((ax + bx) / 2, min(ay, by), max(ay, by)))


def _crosses(cuts: list[tuple[float, float, float]], a: float, b: float, y: float) -> bool:
    """A vertical rule runs between x=a and x=b at height y (a cell border between chars)."""
    k = bisect.bisect_left(cuts, (a,))
    while k < len(cuts) and cuts[k][0] <= b:
        if cuts[k][1] - 1 <= y <= cuts[k][2] + 1:
            return True
        k += 1
    return False


def _codes(raw: object, n: int) -> list[int]:
    """Every char's code point in one call (UTF-16 units; per char when surrogates occur)."""
    buf = (ctypes.c_ushort * (n + 1))()
    got = pdfium_c.FPDFText_GetText(raw, 0, n, ctypes.cast(buf, ctypes.POINTER(ctypes.c_ushort)))
    codes = buf[:n]
    if got - 1 == n and not any(0xD800 <= c <= 0xDFFF for c in codes):
        return [2 if c == 0xFFFE else c for c in codes]  # GetText spells the soft hyphen U+FFFE
    return [pdfium_c.FPDFText_GetUnicode(raw, i) for i in range(n)]


_SPACES = frozenset({0, 0xFFFE, 0x2, 0xAD, 0xA0, 0x3000, *range(9, 14), 32, *range(0x2000, 0x200C)})


def _fragments(
    textpage: pdfium.PdfTextPage,
    left: float,
    top: float,
    number: int,
    cuts: list[tuple[float, float, float]],
) -> tuple[list[Line], int, list[notes.Marked]]:
    """Runs of characters on one baseline without a wide gap (and those holding raised digits). The hot loop of PDF parsing:
    text comes in one call, each char costs a box, a size and a weight lookup; the angle is
    looked up only where a fragment starts (rotated text never continues a horizontal run)."""
    raw = textpage.raw
    n = textpage.count_chars()
    codes = _codes(raw, n)
    box_buf = bytearray(16)
    rect = pdfium_c.FS_RECTF.from_buffer(box_buf)  # read back with one unpack, not 4 getattrs
    unpack = struct.Struct("4f").unpack_from
    matrix = pdfium_c.FS_MATRIX()
    name_buf = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    get_box, get_size = pdfium_c.FPDFText_GetLooseCharBox, pdfium_c.FPDFText_GetFontSize
    get_weight, get_angle = pdfium_c.FPDFText_GetFontWeight, pdfium_c.FPDFText_GetCharAngle
    frags: list[Line] = []
    marked: list[notes.Marked] = []
    cur: _Frag | None = None
    space = False
    last_size, last_weight = -1.0, -2
    last_bold = False
    n_chars = 0
    two_pi = 2 * math.pi - 0.1
    for i in range(n):
        code = codes[i]
        if code == 10 or code == 13:
            _flush(cur, frags, number, raw, marked)
            cur = None
            space = False
            continue
        if code in _SPACES:
            if (code == 0x2 or code == 0xAD) and cur is not None:  # line-end (soft) hyphen
                cur.chars.append("-")
                cur.index.append(-1)
            else:
                space = cur is not None
            continue
        get_box(raw, i, rect)
        bl, bt, br, bb = unpack(box_buf)
        x0, x1 = bl - left, br - left
        y0, y1 = top - bt, top - bb
        h = y1 - y0 if y1 - y0 > 0.1 else 0.1
        size = get_size(raw, i)
        if size < 0.48 * h:
            size = h / 1.25  # scaled-up text matrix: trust the glyph box
        elif size > 1.28 * h and pdfium_c.FPDFText_GetMatrix(raw, i, matrix):
            scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
            size *= min(scale, 1.0)  # scaled-down text (a figure's embedded labels)
        size = round(size * 2) / 2
        weight = get_weight(raw, i)
        if cur is not None:
            c_top, c_bottom, c_x1 = cur.top, cur.bottom, cur.x1
            overlap = (c_bottom if c_bottom < y1 else y1) - (c_top if c_top > y0 else y0)
            base = c_bottom - c_top if c_bottom - c_top < h else h
            if (
                overlap < 0.45 * base
                or x0 - c_x1 > size
                or x0 < c_x1 - 2.5 * size
                or (cuts and _crosses(cuts, c_x1 - 0.5, x0 + 0.5, (y0 + y1) / 2))
            ):
                _flush(cur, frags, number, raw, marked)
                cur = None
                space = False
        if cur is None:
            angle = get_angle(raw, i)
            if 0.1 < angle < two_pi:
                continue  # rotated margin text (arXiv stamps, "Downloaded from …")
        n_chars += 1
        if size != last_size or weight != last_weight:
            pdfium_c.FPDFText_GetFontInfo(raw, i, name_buf, 128, ctypes.byref(flags))
            name = name_buf.value.decode("latin-1", "replace")
            last_bold = weight >= 600 or bool(BOLD_NAME.search(name))
            last_size, last_weight = size, weight
        ch = chr(code)
        if cur is None:
            cur = _Frag(x0, y0, x1, y1)
        else:
            chars = cur.chars
            if space or (
                x0 - cur.x1 > 0.18 * size and not (chars and is_cjk(ch) and is_cjk(chars[-1]))
            ):
                chars.append(" ")
                cur.index.append(-1)
            if x0 < cur.x0:
                cur.x0 = x0
            if x1 > cur.x1:
                cur.x1 = x1
            if cur.nchar <= 3 and h > cur.bottom - cur.top and chars[-1].isdigit():
                cur.top, cur.bottom = min(cur.top, y0), max(cur.bottom, y1)  # after a note number
        space = False
        cur.chars.append(ch)
        cur.index.append(i)
        sizes = cur.sizes
        sizes[size] = sizes.get(size, 0) + 1
        cur.bold += last_bold
        cur.nchar += 1
    _flush(cur, frags, number, raw, marked)
    return frags, n_chars, marked


_DIGIT = re.compile(r"\d")


def _flush(
    cur: _Frag | None, frags: list[Line], number: int, raw: object, marked: list[notes.Marked]
) -> None:
    if cur is None or cur.nchar == 0:
        return
    text = clean_text("".join(cur.chars))
    if text:
        size = max(cur.sizes.items(), key=lambda kv: kv[1])[0]
        line = Line(
            text, cur.x0, cur.top, cur.x1, cur.bottom, size, cur.bold >= 0.9 * cur.nchar, number
        )
        frags.append(line)
        if _DIGIT.search(text):
            runs = notes.raised_runs(raw, cur.chars, cur.index, size)
            if runs:
                marked.append(notes.Marked(line, cur.chars, runs))


def check_page_count(pdf: pdfium.PdfDocument, max_pages: int, path: Path) -> int:
    """Number of pages, refusing documents over the configured limit."""
    count = len(pdf)
    if count > max_pages:
        raise UnsupportedInput(
            f"{path.name}: {count} pages is over the limit of {max_pages} (ingest.max_pages)",
            path=str(path),
        )
    if count == 0:
        raise IngestError(f"{path.name}: PDF has no pages", path=str(path))
    return count
