"""OCR with Tesseract (Debian's `tesseract-ocr` + `tesseract-ocr-chi-sim`; models come with
the packages): a grey page image → words with boxes and confidences → positioned text lines in
PDF points, ready for the same layout pipeline as a text layer.

Tesseract runs as a subprocess (one thread each: `OMP_THREAD_LIMIT=1`), so pages can be read
in parallel by threads without holding the GIL.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, replace

import numpy as np

from footnote.errors import IngestError
from footnote.ingest.cleanup import clean_text
from footnote.ingest.raw import Line
from footnote.textnorm import is_cjk

_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class Word:
    """One recognised word, in image pixels, with Tesseract's confidence (0–100)."""

    text: str
    x0: int
    top: int
    x1: int
    bottom: int
    conf: float
    line: tuple[int, int, int]
    """(block, paragraph, line) numbers: words of one Tesseract line share them."""
    space_after: bool = True
    """False where Tesseract set no space after the word (within CJK text)."""


@functools.cache
def tesseract_version() -> str | None:
    """'5.3.0' when the `tesseract` binary runs here, else None."""
    exe = shutil.which("tesseract")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (out.stdout or out.stderr).decode("utf-8", "replace").split("\n", 1)[0]
    return first.split()[-1] if first.startswith("tesseract") else None


@functools.cache
def installed_languages() -> frozenset[str]:
    """Tesseract language packs installed here (e.g. eng, chi_sim)."""
    if tesseract_version() is None:
        return frozenset()
    out = subprocess.run(
        ["tesseract", "--list-langs"], capture_output=True, timeout=30, check=False
    )
    lines = out.stdout.decode("utf-8", "replace").splitlines()[1:]
    return frozenset(ln.strip() for ln in lines if ln.strip() and ln.strip() != "osd")


def usable_languages(wanted: str) -> str:
    """The '+'-joined subset of `wanted` that is installed ('' when none is)."""
    have = installed_languages()
    return "+".join(lang for lang in wanted.split("+") if lang in have)


def recognise(gray: np.ndarray, dpi: float, languages: str) -> list[Word]:
    """Words on a 2-D uint8 image (0 = black) read with the given '+'-joined languages."""
    h, w = gray.shape
    image = b"P5 %d %d 255\n" % (w, h) + np.ascontiguousarray(gray, dtype=np.uint8).tobytes()
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    with tempfile.TemporaryDirectory(prefix="footnote-ocr-") as tmp:
        base = os.path.join(tmp, "page")
        cmd = ["tesseract", "-", base, "-l", languages, "--psm", "3", "--dpi", str(round(dpi))]
        try:
            out = subprocess.run(
                [*cmd, "tsv", "txt"],
                input=image,
                capture_output=True,
                env=env,
                timeout=_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise IngestError(f"OCR took longer than {_TIMEOUT_S:.0f} s on one page") from None
        if out.returncode != 0:
            err = out.stderr.decode("utf-8", "replace").strip().splitlines()
            raise IngestError(f"tesseract failed: {err[-1] if err else out.returncode}")
        with open(base + ".tsv", encoding="utf-8", errors="replace") as f:
            tsv = f.read()
        with open(base + ".txt", encoding="utf-8", errors="replace") as f:
            txt = f.read()
    return _parse_tsv(tsv, txt)


def _parse_tsv(tsv: str, txt: str) -> list[Word]:
    """Words from the TSV; `space_after` from the plain-text rendering of the same lines, which
    knows where Tesseract saw spaces (the TSV does not, and CJK words join without them)."""
    words: list[Word] = []
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5":
            continue
        text = clean_text(cols[11])
        conf = float(cols[10])
        if not text or conf < 0:
            continue
        left, top, width, height = (int(c) for c in cols[6:10])
        key = (int(cols[2]), int(cols[3]), int(cols[4]))
        words.append(Word(text, left, top, left + width, top + height, conf, key))
    lines: dict[tuple[int, int, int], list[int]] = {}
    for i, w in enumerate(words):
        lines.setdefault(w.line, []).append(i)
    rendered = [clean_text(ln) for ln in txt.splitlines() if ln.strip()]
    if len(rendered) != len(lines):
        return words
    for idx, line in zip(lines.values(), rendered, strict=True):
        at = 0
        for i in idx:
            found = line.find(words[i].text, at)
            if found < 0:
                break
            at = found + len(words[i].text)
            if line[at : at + 1] != " ":
                words[i] = replace(words[i], space_after=False)
    return words


def to_lines(words: list[Word], scale: float, page: int) -> list[Line]:
    """Tesseract lines → text fragments in PDF points (`scale` = points per pixel).

    A line is cut where the gap between two words is wider than the line is tall (table cells,
    columns), the way a text layer's fragments are cut at wide gaps. Sizes are estimated from
    line heights and snapped to the page's body size when within 15 % of it.
    """
    by_line: dict[tuple[int, int, int], list[Word]] = {}
    for w in words:
        by_line.setdefault(w.line, []).append(w)
    frags: list[tuple[list[Word], float]] = []
    for group in by_line.values():
        group.sort(key=lambda w: w.x0)
        height = statistics.median(w.bottom - w.top for w in group)
        cur: list[Word] = [group[0]]
        for w in group[1:]:
            if w.x0 - cur[-1].x1 > 1.2 * max(height, 1):
                frags.append((cur, height))
                cur = []
            cur.append(w)
        frags.append((cur, height))
    if not frags:
        return []
    body = statistics.median(h for _, h in frags)
    out: list[Line] = []
    for ws, height in frags:
        if abs(height - body) <= 0.15 * body:
            height = body
        size = round(height * scale / 0.74 * 2) / 2  # a median word box is ~0.74 em tall
        text = ws[0].text
        for prev, w in itertools.pairwise(ws):
            cjk = is_cjk(prev.text[-1]) or is_cjk(w.text[0])
            joint = "" if cjk and not prev.space_after else " "
            text += joint + w.text
        n = sum(len(w.text) for w in ws)
        conf = sum(w.conf * len(w.text) for w in ws) / max(n, 1) / 100.0
        out.append(
            Line(
                text,
                min(w.x0 for w in ws) * scale,
                min(w.top for w in ws) * scale,
                max(w.x1 for w in ws) * scale,
                max(w.bottom for w in ws) * scale,
                max(size, 1.0),
                False,
                page,
                conf=round(conf, 3),
            )
        )
    return out
