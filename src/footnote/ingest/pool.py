"""Using every core (`ingest.workers`, one per core by default): a folder's files are parsed
in a process pool, results in the order the files were given; a long PDF's pages are read by
a pool of page readers."""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from footnote.config import IngestSettings
from footnote.errors import IngestError
from footnote.ingest.pdf.file import PageText, read_pages
from footnote.types import Document

_PAGE_POOL: ProcessPoolExecutor | None = None
_PAGE_POOL_SIZE = 0
PAGES_PER_TASK = 16
"""Below twice this many pages a PDF is read in this process (starting workers costs more)."""


def _page_pool(workers: int) -> ProcessPoolExecutor:
    """One pool of page readers for the life of the process (started on first use)."""
    global _PAGE_POOL, _PAGE_POOL_SIZE
    if _PAGE_POOL is None or workers != _PAGE_POOL_SIZE:
        if _PAGE_POOL is not None:
            _PAGE_POOL.shutdown(cancel_futures=True)
        context = multiprocessing.get_context("forkserver")
        _PAGE_POOL = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        _PAGE_POOL_SIZE = workers
        atexit.register(_PAGE_POOL.shutdown, cancel_futures=True)
    return _PAGE_POOL


def _read_range(data: bytes, password: str | None, start: int, stop: int) -> list[PageText]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data, password=password or None)
    try:
        return read_pages(doc, range(start, stop))
    finally:
        doc.close()


def read_pages_parallel(
    data: bytes, password: str | None, count: int, workers: int
) -> list[PageText] | None:
    """A long PDF's pages read by `workers` processes in chunks, in page order; None when the
    document is too short for that to pay."""
    if workers <= 1 or count < 2 * PAGES_PER_TASK:
        return None
    pool = _page_pool(workers)
    step = max(PAGES_PER_TASK, -(-count // (4 * workers)))
    futures = [
        pool.submit(_read_range, data, password, a, min(a + step, count))
        for a in range(0, count, step)
    ]
    return [page for f in futures for page in f.result()]


@dataclass(frozen=True)
class ParseResult:
    """One file's parse: the document or the error, and the process that parsed it."""

    path: Path
    document: Document | None
    error: IngestError | None
    pid: int


def _parse_one(path: Path, settings: IngestSettings, password: str | None) -> ParseResult:
    from footnote.ingest import parse_file

    try:
        return ParseResult(path, parse_file(path, settings, password=password), None, os.getpid())
    except IngestError as exc:
        return ParseResult(path, None, exc, os.getpid())


def worker_count(settings: IngestSettings) -> int:
    """`ingest.workers`, 0 meaning one per CPU core."""
    return max(1, settings.workers or os.cpu_count() or 1)


def parse_many(
    paths: Sequence[Path], settings: IngestSettings, *, password: str | None = None
) -> Iterator[ParseResult]:
    """Parse `paths` in worker processes (in this one when one worker or one file suffices).

    Each worker reads OCR pages one at a time (`workers=1` inside), so processes and
    Tesseract threads do not oversubscribe the cores.
    """
    workers = min(worker_count(settings), len(paths))
    if workers <= 1:
        for path in paths:
            yield _parse_one(path, settings, password)
        return
    inner = settings.model_copy(update={"workers": 1})
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[ParseResult]] = deque()
        for path in paths:  # a bounded window: parsed documents wait for a slow consumer
            pending.append(pool.submit(_parse_one, path, inner, password))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
