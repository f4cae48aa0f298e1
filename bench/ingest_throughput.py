"""Pages/second of the structured `parse_file` against plain pypdfium2 text, in the same run.

Usage: python bench/ingest_throughput.py [folder_or_pdf ...]
(default: ../shared/data/sci-pdfs/pdfs and examples/ when present)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pypdfium2 as pdfium

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.ingest import parse_file

REPO = Path(__file__).resolve().parents[1]
DEFAULTS = [REPO.parent / "shared" / "data" / "sci-pdfs" / "pdfs", REPO / "examples"]


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


def main(argv: list[str]) -> None:
    """Print a per-file table and the totals with the ratio."""
    roots = [Path(a) for a in argv] or [d for d in DEFAULTS if d.exists()]
    files = sorted(p for r in roots for p in ([r] if r.is_file() else r.rglob("*.pdf")))
    settings = IngestSettings()
    tot_pages = 0
    tot_plain = tot_full = 0.0
    print(f"{'file':48} {'pages':>5} {'plain p/s':>10} {'full p/s':>10} {'blocks':>7}")
    for path in files:
        try:
            pages, t_plain = plain_pages(path)
            start = time.perf_counter()
            doc = parse_file(path, settings)
            t_full = time.perf_counter() - start
        except (IngestError, pdfium.PdfiumError) as exc:
            print(f"{path.name[:48]:48} skipped: {exc}")
            continue
        tot_pages += pages
        tot_plain += t_plain
        tot_full += t_full
        print(
            f"{path.name[:48]:48} {pages:5d} {pages / t_plain:10.1f} {pages / t_full:10.1f} "
            f"{len(doc.blocks):7d}"
        )
    if tot_pages:
        plain, full = tot_pages / tot_plain, tot_pages / tot_full
        print(f"\n{len(files)} files, {tot_pages} pages")
        print(f"plain pypdfium2 text : {plain:8.1f} pages/s")
        print(f"structured parse_file: {full:8.1f} pages/s")
        print(f"ratio full/plain     : {full / plain:8.3f}  (plain is {plain / full:.1f}x faster)")


if __name__ == "__main__":
    main(sys.argv[1:])
