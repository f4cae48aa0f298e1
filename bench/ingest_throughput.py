"""Pages/second and peak memory of PDF ingestion against plain pypdfium2 text, in one run.

(1) born-digital PDFs: plain `get_text_range()` per page (the baseline) vs the structured
    `parse_file` one file after another, and a folder through the process pool
    (`ingest.workers`, default one per core), each with the ratio to plain;
(2) scanned PDFs: a 6-page scan made here from a real paper, read with OCR;
(3) peak RSS of a subprocess parsing a generated 1,000-page two-column PDF, against a
    subprocess doing plain extraction of the same file.
Usage: python bench/ingest_throughput.py [folder_or_pdf ...] [--no-ocr] [--no-rss]
(default: ../shared/data/sci-pdfs/pdfs and examples/ when present)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pypdfium2 as pdfium

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.examples import EXAMPLES_DIR
from footnote.ingest import parse_file
from footnote.ingest.pool import parse_many, worker_count

REPO = Path(__file__).resolve().parents[1]
DATA = next(
    (p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data",
)
DEFAULTS = [DATA / "sci-pdfs" / "pdfs", EXAMPLES_DIR]
NO_OCR = IngestSettings(ocr="off")


def plain_pages(path: Path) -> tuple[int, float]:
    """Baseline: open and pull each page's text with get_text_range()."""
    start = time.perf_counter()
    pdf = pdfium.PdfDocument(path)
    n = len(pdf)
    for i in range(n):
        page = pdf[i]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    pdf.close()
    return n, time.perf_counter() - start


def born_digital(files: list[Path]) -> None:
    """Per file and in total: plain, structured sequential, structured through the pool."""
    print(f"{'file':48} {'pages':>5} {'plain p/s':>10} {'full p/s':>10} {'blocks':>7}")
    pages, t_plain, t_full, ok = 0, 0.0, 0.0, []
    for path in files:
        try:
            n, tp = plain_pages(path)
            start = time.perf_counter()
            doc = parse_file(path, NO_OCR)
            tf = time.perf_counter() - start
        except (IngestError, pdfium.PdfiumError) as exc:
            print(f"{path.name[:48]:48} skipped: {exc}")
            continue
        ok.append(path)
        pages, t_plain, t_full = pages + n, t_plain + tp, t_full + tf
        print(f"{path.name[:48]:48} {n:5d} {n / tp:10.1f} {n / tf:10.1f} {len(doc.blocks):7d}")
    if not pages:
        return
    start = time.perf_counter()
    pooled = sum(1 for r in parse_many(ok, NO_OCR) if r.document is not None)
    t_pool = time.perf_counter() - start
    plain, full, pool = pages / t_plain, pages / t_full, pages / t_pool
    print(f"\n{len(ok)} files, {pages} pages (OCR off: born-digital text layers)")
    print(f"plain pypdfium2 text           : {plain:8.1f} pages/s")
    print(f"structured, one file at a time : {full:8.1f} pages/s   ratio {full / plain:.3f}")
    print(
        f"structured, folder, {worker_count(NO_OCR)} workers  : {pool:8.1f} pages/s   "
        f"ratio {pool / plain:.3f}   ({pooled} files)"
    )


def scanned(tmp: Path) -> None:
    """OCR pages/s on a scan of a real paper's first pages, and the no-OCR baseline."""
    sys.path.insert(0, str(REPO / "bench"))
    from ocr_quality import scan_page

    src = DATA / "sci-pdfs" / "pdfs" / "N18-3011.pdf"
    if not src.exists():
        return
    parts = [scan_page(src, p, tmp / f"s{p}.pdf") for p in range(1, 7)]
    merged = pdfium.PdfDocument.new()
    for part in parts:
        merged.import_pages(pdfium.PdfDocument(str(part)))
    out = tmp / "scan6.pdf"
    merged.save(str(out))
    for label, settings in (("no OCR (baseline)", NO_OCR), ("OCR", IngestSettings())):
        start = time.perf_counter()
        doc = parse_file(out, settings)
        t = time.perf_counter() - start
        print(f"scanned, {label:18}: {6 / t:8.2f} pages/s  {len(doc.blocks):4d} blocks")


_BIG = """
import sys
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas
c = Canvas(sys.argv[1], pagesize=A4)
line = "Layout analysis of long documents keeps memory bounded, page after page, line by line."
for p in range(1000):
    c.setFont("Helvetica-Bold", 12)
    c.drawString(60, 800, f"{p + 1} Section heading of page {p + 1}")
    c.setFont("Helvetica", 9)
    for col in (60, 310):
        y = 780
        for k in range(60):
            c.drawString(col, y, line[: 40 + (k % 5)])
            y -= 11.5
    c.showPage()
c.save()
"""
_RSS = (
    "import resource, sys\n"
    "from pathlib import Path\n"
    "if sys.argv[2] == 'plain':\n"
    "    import pypdfium2 as p\n"
    "    d = p.PdfDocument(sys.argv[1])\n"
    "    for i in range(len(d)):\n"
    "        pg = d[i]; t = pg.get_textpage(); t.get_text_range(); t.close(); pg.close()\n"
    "else:\n"
    "    from footnote.config import IngestSettings\n"
    "    from footnote.ingest import parse_file\n"
    "    doc = parse_file(Path(sys.argv[1]), IngestSettings(ocr='off'))\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def peak_rss(tmp: Path) -> None:
    """Peak RSS (MiB) parsing a 1,000-page PDF, structured vs plain, each in its own process."""
    big = tmp / "big.pdf"
    subprocess.run([sys.executable, "-c", _BIG, str(big)], check=True)
    for label in ("plain", "structured"):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _RSS, str(big), label], capture_output=True, text=True
        )
        t = time.perf_counter() - start
        if out.returncode != 0:
            print(f"1,000-page PDF, {label}: failed: {out.stderr[-300:]}")
            continue
        rss = int(out.stdout.split()[-1]) / 1024
        print(f"1,000-page PDF, {label:10}: peak RSS {rss:7.1f} MiB, {1000 / t:7.1f} pages/s")


def main(argv: list[str]) -> None:
    """Print all three measurements."""
    flags = {a for a in argv if a.startswith("--")}
    roots = [Path(a) for a in argv if not a.startswith("--")] or [d for d in DEFAULTS if d.exists()]
    files = sorted(p for r in roots for p in ([r] if r.is_file() else r.rglob("*.pdf")))
    born_digital(files)
    with tempfile.TemporaryDirectory() as tmp:
        if "--no-ocr" not in flags:
            print()
            scanned(Path(tmp))
        if "--no-rss" not in flags:
            print()
            peak_rss(Path(tmp))


if __name__ == "__main__":
    main(sys.argv[1:])
