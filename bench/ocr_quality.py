"""OCR character error rate and scanned pages/s, against a baseline in the same run.

Scans are made here from real born-digital pages of the shared PDFs (each page rendered to a
200 dpi grey image and placed alone in a PDF, the way a scanner would), then ingested with OCR
(current settings) and without (baseline: `ingest.ocr = off`, what ingestion did before). The
reference text is the same page's own text layer read by the same pipeline, so the CER counts
OCR errors, not layout differences. The MinerU textbook page has a broken text layer and a
human-cleaned transcript: there the baseline is its text layer and the reference the transcript.
CER = Levenshtein(ours, reference) / len(reference) over NFKC, lower-cased text without spaces.
Usage: python bench/ocr_quality.py
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium

from footnote.config import IngestSettings
from footnote.ingest import parse_file

REPO = Path(__file__).resolve().parents[1]
DATA = next(
    (p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data",
)
PDFS = DATA / "sci-pdfs" / "pdfs"
PAGES = [
    ("N18-3011.pdf", 1, "en"),
    ("N18-3011.pdf", 3, "en"),
    ("2020.acl-main.447.pdf", 2, "en"),
    ("2203.00130v1.pdf", 5, "en"),
    ("elegantpaper-cn.pdf", 2, "zh"),
    ("ucasthesis-template-guide-zh.pdf", 19, "zh"),
    ("mineru_research_report_1f978cd81fb7260c8f7644039ec2c054.pdf", 1, "zh"),
]
OFF = IngestSettings(ocr="off")
OCR = IngestSettings()


def levenshtein(a: str, b: str) -> int:
    """Edit distance, one numpy row at a time (the insert run is a cumulative minimum)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    bv = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    idx = np.arange(len(b) + 1)
    prev = idx.copy()
    for i, ch in enumerate(a, start=1):
        sub = prev[:-1] + (bv != ord(ch))
        cur = np.empty_like(prev)
        cur[0] = i
        cur[1:] = np.minimum(sub, prev[1:] + 1)
        cur = np.minimum.accumulate(cur - idx) + idx
        prev = cur
    return int(prev[-1])


def flat(text: str) -> str:
    """NFKC, lower case, no whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).lower())


def cer(ours: str, ref: str) -> float:
    """Character error rate of `ours` against `ref`."""
    a, b = flat(ours), flat(ref)
    return levenshtein(a, b) / max(len(b), 1)


def scan_page(src: Path, page: int, out: Path, dpi: int = 200) -> Path:
    """One page of `src` as an image-only PDF (no text layer)."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    pdf = pdfium.PdfDocument(str(src))
    p = pdf[page - 1]
    w, h = p.get_size()
    image = p.render(scale=dpi / 72, grayscale=True).to_pil()
    c = Canvas(str(out), pagesize=(w, h))
    c.drawImage(ImageReader(image), 0, 0, width=w, height=h)
    c.showPage()
    c.save()
    return out


def one_page(src: Path, page: int, out: Path) -> Path:
    """Page `page` of `src` alone, text layer kept (the reference)."""
    doc = pdfium.PdfDocument(str(src))
    single = pdfium.PdfDocument.new()
    single.import_pages(doc, [page - 1])
    single.save(str(out))
    return out


def text_of(path: Path, settings: IngestSettings) -> tuple[str, float]:
    start = time.perf_counter()
    doc = parse_file(path, settings)
    return "\n".join(b.text for b in doc.blocks), time.perf_counter() - start


def main() -> None:
    """Print per-page CER (baseline vs OCR) and scanned pages/s."""
    if not PDFS.exists():
        raise SystemExit(f"shared data not found at {PDFS}")
    print(f"{'page':52} {'lang':4} {'chars':>6} {'CER no-OCR':>10} {'CER OCR':>8} {'s/page':>7}")
    total_time = 0.0
    pages = 0
    sums = {"en": [0, 0.0], "zh": [0, 0.0]}
    with tempfile.TemporaryDirectory() as tmp:
        for name, page, lang in PAGES:
            src = PDFS / name
            if not src.exists():
                continue
            ref, _ = text_of(one_page(src, page, Path(tmp) / "ref.pdf"), OFF)
            scan = scan_page(src, page, Path(tmp) / "scan.pdf")
            base, _ = text_of(scan, OFF)
            ours, seconds = text_of(scan, OCR)
            total_time += seconds
            pages += 1
            rate = cer(ours, ref)
            sums[lang][0] += 1
            sums[lang][1] += rate
            label = f"{name[:40]} p{page}"
            print(
                f"{label:52} {lang:4} {len(flat(ref)):6d} {cer(base, ref):10.3f} {rate:8.3f} "
                f"{seconds:7.2f}"
            )
        textbook = DATA / "sci-pdfs" / "groundtruth"
        gt = textbook / "mineru_ordinary_textbook_1d9a847603a5e37e379738316820850d.gt.md"
        pdf = PDFS / "mineru_ordinary_textbook_1d9a847603a5e37e379738316820850d.pdf"
        if gt.exists() and pdf.exists():
            ref = re.sub(r"\$[^$]*\$|[#*|`>-]", "", gt.read_text(encoding="utf-8"))
            layer, _ = text_of(pdf, OFF)
            read, seconds = text_of(pdf, IngestSettings(ocr="always"))
            print(
                f"{'mineru textbook (broken text layer) vs transcript':52} zh   "
                f"{len(flat(ref)):6d} {cer(layer, ref):10.3f} {cer(read, ref):8.3f} {seconds:7.2f}"
                "   (baseline: its text layer; formulas removed from the reference)"
            )
    for lang, (n, s) in sums.items():
        if n:
            print(f"mean CER with OCR, {lang}: {s / n:.3f} over {n} pages (no OCR: 1.000)")
    if pages:
        print(f"scanned pages/s (OCR, {OCR.ocr_dpi} dpi): {pages / total_time:.2f}")


if __name__ == "__main__":
    main()
    sys.exit(0)
