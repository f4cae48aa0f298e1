"""Using every core (`ingest.workers`, one per core by default): a folder's files are parsed
in a process pool, results in the order the files were given; a long PDF's pages are read by
a pool of page readers. With `ingest.file_timeout_s` or `ingest.file_memory_mb` set, each file
is parsed by a guarded worker process: one that runs out of time is stopped, one that runs out
of memory fails, the file is reported failed and the next one goes on."""

from __future__ import annotations

import atexit
import math
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

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
    if settings.file_timeout_s > 0 or settings.file_memory_mb > 0:
        yield from _parse_guarded(paths, settings, password)
        return
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


def _guarded_worker(conn: Connection, settings: IngestSettings, password: str | None) -> None:
    """A worker: imports first (not counted against the time limit), then the memory limit,
    then one file at a time until told to stop."""
    import footnote.ingest  # noqa: F401  (the parsers, loaded before the clock starts)

    if settings.file_memory_mb > 0:
        import resource

        limit = settings.file_memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn.send(None)
    while (path := conn.recv()) is not None:
        conn.send(_parse_one(path, settings, password))


class _Guard:
    """One guarded worker process and the file it is parsing."""

    def __init__(self, context: Any, settings: IngestSettings, password: str | None) -> None:
        self.conn, child = context.Pipe()
        self.proc = context.Process(
            target=_guarded_worker, args=(child, settings, password), daemon=True
        )
        self.proc.start()
        child.close()
        self.ready = self.dead = False
        self.task: tuple[int, Path] | None = None
        self.deadline = math.inf

    def assign(self, task: tuple[int, Path], deadline: float) -> None:
        """Send one file to the worker."""
        self.task, self.deadline = task, deadline
        self.conn.send(task[1])

    def poll(self, readable: bool, now: float, settings: IngestSettings) -> ParseResult | None:
        """The result of the file in hand when it is done, failed or out of time (`dead`
        then says the process must be replaced)."""
        if readable:
            try:
                got = self.conn.recv()
            except (EOFError, OSError):
                got, self.dead = None, True
            if not self.ready and not self.dead:
                self.ready = True
                return None
        elif self.task is None or now < self.deadline:
            return None
        else:
            self.dead = True
            why = f"parsing took over {settings.file_timeout_s:g} s (ingest.file_timeout_s)"
            return _failure(self.task[1], why)
        if self.task is None:
            return None
        path = self.task[1]
        self.task, self.deadline = None, math.inf
        if self.dead:
            self.proc.join(1)
            code = self.proc.exitcode
            return _failure(
                path, f"the parser process ended (exit code {code}); {_memory(settings)}"
            )
        assert isinstance(got, ParseResult)
        if got.error is not None and "MemoryError" in str(got.error):
            return _failure(path, f"it needs more memory; {_memory(settings)}")
        return got

    def stop(self) -> None:
        """End the worker (killed: it may be stuck in a parser)."""
        self.proc.kill()
        self.proc.join()
        self.conn.close()


def _memory(settings: IngestSettings) -> str:
    return f"ingest.file_memory_mb is {settings.file_memory_mb or 'unlimited'}"


def _failure(path: Path, why: str) -> ParseResult:
    return ParseResult(path, None, IngestError(f"{path.name}: {why}", path=str(path)), 0)


def _parse_guarded(
    paths: Sequence[Path], settings: IngestSettings, password: str | None
) -> Iterator[ParseResult]:
    """Files parsed by guarded workers, results in the order given."""
    context = multiprocessing.get_context("forkserver")
    inner = settings.model_copy(update={"workers": 1})
    todo = deque(enumerate(paths))
    done: dict[int, ParseResult] = {}
    guards = [
        _Guard(context, inner, password) for _ in range(min(worker_count(settings), len(paths)))
    ]
    at = 0
    try:
        while at < len(paths):
            now = time.monotonic()
            for g in guards:
                if g.ready and g.task is None and todo:
                    limit = settings.file_timeout_s
                    g.assign(todo.popleft(), now + limit if limit > 0 else math.inf)
            soonest = min(g.deadline for g in guards)
            ready = wait(
                [g.conn for g in guards], None if soonest == math.inf else max(soonest - now, 0)
            )
            now = time.monotonic()
            for k, g in enumerate(guards):
                task = g.task
                result = g.poll(g.conn in ready, now, settings)
                if result is not None and task is not None:
                    done[task[0]] = result
                if g.dead:
                    if not g.ready and todo:  # it died starting: fail a file, so that work ends
                        index, path = todo.popleft()
                        done[index] = _failure(
                            path, f"the parser process failed to start; {_memory(settings)}"
                        )
                    g.stop()
                    guards[k] = _Guard(context, inner, password)
            while at in done:
                yield done.pop(at)
                at += 1
    finally:
        for g in guards:
            g.stop()
