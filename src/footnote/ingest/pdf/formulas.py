"""LaTeX for PDF formulas by rules on glyph positions (no model): Unicode math symbols become
commands, raised or lowered smaller glyphs become `^{…}` / `_{…}`, glyphs stacked over and
under ∑ ∫ ∏ become limits, and a full-size line over another one beside the main line becomes
`\\frac{…}{…}`. Matrices, roots and multi-line alignments are left as glyph text only.

The glyph text of the block stays its text; the LaTeX goes to `RawBlock.latex`.
"""

from __future__ import annotations

import ctypes
import re
import struct
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from footnote.ingest.cleanup import join_surrogates
from footnote.ingest.pdf.file import BOLD_NAME
from footnote.ingest.raw import RawBlock, union_bbox

# fmt: off
SYMBOLS = {
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon",
    "ϵ": r"\epsilon", "ζ": r"\zeta", "η": r"\eta", "θ": r"\theta", "ι": r"\iota",
    "κ": r"\kappa", "λ": r"\lambda", "μ": r"\mu", "ν": r"\nu", "ξ": r"\xi", "π": r"\pi",
    "ρ": r"\rho", "σ": r"\sigma", "τ": r"\tau", "υ": r"\upsilon", "φ": r"\phi", "ϕ": r"\phi",
    "χ": r"\chi", "ψ": r"\psi", "ω": r"\omega", "Γ": r"\Gamma", "Δ": r"\Delta",
    "Θ": r"\Theta", "Λ": r"\Lambda", "Ξ": r"\Xi", "Π": r"\Pi", "Σ": r"\Sigma",
    "Φ": r"\Phi", "Ψ": r"\Psi", "Ω": r"\Omega", "∑": r"\sum", "∏": r"\prod", "∫": r"\int",
    "∮": r"\oint", "∂": r"\partial", "∇": r"\nabla", "∞": r"\infty", "≤": r"\leq",
    "≥": r"\geq", "≠": r"\neq", "≈": r"\approx", "≡": r"\equiv", "∝": r"\propto",
    "±": r"\pm", "∓": r"\mp", "×": r"\times", "÷": r"\div", "·": r"\cdot", "⋅": r"\cdot",
    "∈": r"\in", "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "∪": r"\cup",
    "∩": r"\cap", "∀": r"\forall", "∃": r"\exists", "¬": r"\neg", "∧": r"\wedge",
    "∨": r"\vee", "→": r"\rightarrow", "←": r"\leftarrow", "↔": r"\leftrightarrow",
    "⇒": r"\Rightarrow", "⇔": r"\Leftrightarrow", "√": r"\sqrt", "‖": r"\|", "ℓ": r"\ell",
    "⟨": r"\langle", "⟩": r"\rangle", "−": "-", "∗": "*", "′": r"\prime",
}
# fmt: on
_LIMIT_OPS = {"∑", "∏", "∫", "∮", "⋃", "⋂"}
_FUNCS = ("sin", "cos", "tan", "log", "ln", "exp", "lim", "max", "min", "det", "arg", "sup")


@dataclass
class Glyph:
    """One character of a formula with its box (top-left origin) and font size."""

    ch: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False

    @property
    def base(self) -> float:
        """The baseline, estimated from the box bottom (a loose box holds the descent)."""
        return self.bottom - 0.22 * self.size

    @property
    def mid(self) -> float:
        return (self.top + self.bottom) / 2


def absorb_limits(blocks: list[RawBlock]) -> list[RawBlock]:
    """Tiny blocks right above or below a formula (limits, numerators) join it."""
    out = list(blocks)
    for f in [b for b in out if b.kind == "formula" and b.bbox is not None]:
        for b in list(out):
            if b is f or b.bbox is None or f.bbox is None or b.page != f.page:
                continue
            if len(b.text.replace(" ", "")) > 4 or b.kind in ("table", "figure", "caption"):
                continue
            fb, bb = f.bbox, b.bbox
            height = max(fb[3] - fb[1], 4.0)
            overlap = min(bb[2], fb[2]) - max(bb[0], fb[0])
            gap = max(fb[1] - bb[3], bb[1] - fb[3])
            if overlap > 0 and gap < 0.8 * height:
                f.text = f"{f.text} {b.text}" if bb[1] > fb[1] else f"{b.text} {f.text}"
                f.bbox = union_bbox(fb, bb)
                out.remove(b)
    return out


def attach_latex(doc: pdfium.PdfDocument, blocks: list[RawBlock]) -> None:
    """Set `latex` on formula blocks from the glyphs inside their boxes."""
    by_page: dict[int, list[RawBlock]] = {}
    for b in blocks:
        if b.kind == "formula" and b.bbox is not None and not b.latex:
            by_page.setdefault(b.page, []).append(b)
    for number, formulas in by_page.items():
        boxes = [_grown(f.bbox) for f in formulas if f.bbox]
        glyphs = _glyphs(doc, number, boxes)
        for f, (x0, y0, x1, y1) in zip(formulas, boxes, strict=True):
            inside = [
                g
                for g in glyphs
                if x0 - 1 <= (g.x0 + g.x1) / 2 <= x1 + 1 and y0 - 1 <= g.mid <= y1 + 1
            ]
            latex = join_surrogates(to_latex(inside))
            if latex:
                f.latex = latex


def _grown(box: tuple[float, float, float, float] | None) -> tuple[float, float, float, float]:
    """A formula's box grown by 40 % of its height up and down: a row's box is its longest
    fragment's, and a denominator or lower limit hangs below it."""
    assert box is not None
    pad = 0.4 * (box[3] - box[1])
    return (box[0], box[1] - pad, box[2], box[3] + pad)


def _glyphs(
    doc: pdfium.PdfDocument, number: int, boxes: list[tuple[float, float, float, float]]
) -> list[Glyph]:
    page = doc[number - 1]
    textpage = page.get_textpage()
    try:
        left, _, _, top = page.get_bbox()
        raw = textpage.raw
        buf = bytearray(16)
        rect = pdfium_c.FS_RECTF.from_buffer(buf)
        unpack = struct.Struct("4f").unpack_from
        name, flags = ctypes.create_string_buffer(128), ctypes.c_int()
        out = []
        for i in range(textpage.count_chars()):
            pdfium_c.FPDFText_GetLooseCharBox(raw, i, rect)
            bl, bt, br, bb = unpack(buf)
            x0, x1, y0, y1 = bl - left, br - left, top - bt, top - bb
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if not any(b[0] - 1 <= cx <= b[2] + 1 and b[1] - 1 <= cy <= b[3] + 1 for b in boxes):
                continue
            code = pdfium_c.FPDFText_GetUnicode(raw, i)
            if code < 33 or code in (0xFFFE, 0xA0):
                continue
            size = pdfium_c.FPDFText_GetFontSize(raw, i)
            if size < 0.48 * (y1 - y0):
                size = (y1 - y0) / 1.25
            pdfium_c.FPDFText_GetFontInfo(raw, i, name, 128, ctypes.byref(flags))
            bold = bool(BOLD_NAME.search(name.value.decode("latin-1", "replace")))
            out.append(Glyph(chr(code), x0, y0, x1, y1, size, bold))
        return out
    finally:
        textpage.close()
        page.close()


def to_latex(glyphs: list[Glyph]) -> str:
    """LaTeX for one formula's glyphs ('' when there is nothing to write)."""
    if not glyphs:
        return ""
    font = max(g.size for g in glyphs)
    full = [g for g in glyphs if g.size >= 0.85 * font]
    base = _main_baseline(full)
    heights = sorted(g.bottom - g.top for g in full)
    main_size = min(font, heights[len(heights) // 2] * 1.2)  # box heights beat font sizes
    parts: list[tuple[float, str]] = []
    used: set[int] = set()
    ops = [g for g in full if g.ch in _LIMIT_OPS and abs(g.base - base) < 0.5 * main_size]
    for op in ops:  # limits stacked over and under an operator
        over = [g for g in glyphs if _stacked(g, op) and g.bottom <= op.top + 0.2 * op.size]
        under = [g for g in glyphs if _stacked(g, op) and g.top >= op.bottom - 0.2 * op.size]
        used |= {id(g) for g in over + under} | {id(op)}
        tex = SYMBOLS[op.ch]
        if under:
            tex += "_{" + _run(under) + "}"
        if over:
            tex += "^{" + _run(over) + "}"
        parts.append((op.x0, tex))
    off_line = [g for g in full if id(g) not in used and abs(g.base - base) > 0.3 * main_size]
    for num, den in _fractions(off_line, base):
        used |= {id(g) for g in num + den}
        parts.append((min(g.x0 for g in num + den), r"\frac{" + _run(num) + "}{" + _run(den) + "}"))
    rest = sorted((g for g in glyphs if id(g) not in used), key=lambda g: g.x0)
    parts += _scripts(rest, base, main_size, font)
    parts.sort(key=lambda p: p[0])
    return _functions("".join(t for _, t in parts))


def _main_baseline(full: list[Glyph]) -> float:
    counts: dict[float, int] = {}
    for g in full:
        key = round(g.base)
        counts[key] = counts.get(key, 0) + 1
    return float(max(counts.items(), key=lambda kv: kv[1])[0])


def _stacked(g: Glyph, op: Glyph) -> bool:
    cx = (g.x0 + g.x1) / 2
    return (
        g is not op
        and op.x0 - 0.4 * op.size <= cx <= op.x1 + 0.4 * op.size
        and (g.bottom <= op.top + 0.2 * op.size or g.top >= op.bottom - 0.2 * op.size)
    )


def _fractions(off: list[Glyph], base: float) -> list[tuple[list[Glyph], list[Glyph]]]:
    above = [g for g in off if g.base < base]
    below = [g for g in off if g.base > base]
    out = []
    for group in _clusters(above):
        x0, x1 = min(g.x0 for g in group), max(g.x1 for g in group)
        den = [g for g in below if min(g.x1, x1) - max(g.x0, x0) > -2]
        if den:
            below = [g for g in below if g not in den]
            out.append((group, den))
    return out


def _clusters(glyphs: list[Glyph]) -> list[list[Glyph]]:
    out: list[list[Glyph]] = []
    for g in sorted(glyphs, key=lambda g: g.x0):
        if out and g.x0 - out[-1][-1].x1 < 0.6 * g.size:
            out[-1].append(g)
        else:
            out.append([g])
    return out


def _scripts(glyphs: list[Glyph], base: float, size: float, font: float) -> list[tuple[float, str]]:
    """Glyphs on the main line, with raised/lowered runs as ^{…}/_{…}."""
    out: list[tuple[float, str]] = []
    run: list[Glyph] = []
    level = 0

    def flush() -> None:
        if run:
            text = _run(run)
            tex = text if level == 0 else ("^{" if level > 0 else "_{") + text + "}"
            out.append((run[0].x0, tex))
            run.clear()

    for g in glyphs:
        shift = (base - g.base) / size
        small = g.size < 0.85 * font
        now = 1 if shift > 0.25 and (small or shift > 0.45) else -1 if shift < -0.1 and small else 0
        if now != level:
            flush()
            level = now
        run.append(g)
    flush()
    return out


def _run(glyphs: list[Glyph]) -> str:
    parts = []
    for g in sorted(glyphs, key=lambda g: g.x0):
        tex = SYMBOLS.get(g.ch, g.ch)
        if g.bold and g.ch.isalpha() and g.ch.isascii():
            tex = r"\mathbf{" + tex + "}"  # a vector or matrix
        parts.append(tex + (" " if tex.startswith("\\") and tex[-1].isalpha() else ""))
    return "".join(parts).strip()


_FUNC_RE = re.compile(r"(?<![\\A-Za-z])(" + "|".join(_FUNCS) + r")(?![A-Za-z])")


def _functions(tex: str) -> str:
    """`sin` → `\\sin` and the like, where the name stands alone."""
    return _FUNC_RE.sub(lambda m: "\\" + m.group(1) + " ", tex).replace("  ", " ")
