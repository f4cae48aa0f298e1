"""Using every core (`ingest.workers`, one per core by default): a folder's files are parsed
in a process pool, results in the order the files were given; a long PDF's pages are read by
a pool of page readers. A file over `ingest.isolate_above_kb` is parsed by a warm worker process
at a lower OS priority, a small one in this process. With `ingest.file_timeout_s` or
`ingest.file_memory_mb` set, each file is parsed by a guarded worker process: one that runs out
of time is stopped, one that runs out of memory fails, the file is reported failed and the next
one goes on."""

from __future__ import annotations

import atexit
import contextlib
import math
import multiprocessing
import os
import signal
import threading
import time
import zipfile
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
ARCHIVE_SUFFIXES = frozenset({".docx", ".pptx", ".xlsx", ".epub"})
"""Zip-based formats, whose declared unpacked size counts for `isolates`."""
ISOLATED_NICE = 10
"""How much lower the OS priority of a worker that parses a large file is (`os.nice`)."""
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

    Each worker of a folder reads OCR pages one at a time (`workers=1` inside), so processes and
    Tesseract threads do not oversubscribe the cores. Parsed one at a time, a large file
    (`isolates`) is parsed by a warm worker process at a lower priority (`ISOLATED_NICE`), so
    it shares neither this process (its interpreter lock) nor the CPU evenly with the small
    files of other users; with a time or memory limit set every file is parsed by a warm
    guarded worker.
    """
    guarded = settings.file_timeout_s > 0 or settings.file_memory_mb > 0
    workers = min(worker_count(settings), len(paths))
    if workers <= 1:
        for path in paths:
            large = isolates(path, settings)
            if large or guarded:
                nice = ISOLATED_NICE if large else 0
                yield parse_isolated(path, settings, password, nice=nice)
            else:
                yield _parse_one(path, settings, password)
        return
    if guarded:
        yield from _parse_guarded(paths, settings, password)
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


def _guarded_worker(conn: Connection, memory_mb: int, nice: int, grouped: bool) -> None:
    """A worker: imports first (not counted against the time limit), then its process group
    (`grouped`: one of its own), priority (`nice`: lowered by that much) and memory limit, then
    one file at a time, `(path, settings, password)`, until told to stop."""
    import footnote.ingest  # noqa: F401  (the parsers, loaded before the clock starts)

    if grouped:
        os.setpgrp()  # its page readers die with it (`_Guard.stop`)
    if nice > 0:
        os.nice(nice)
    if memory_mb > 0:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn.send(None)
    while (task := conn.recv()) is not None:
        conn.send(_parse_one(*task))


class _Guard:
    """One guarded worker process and the file it is parsing. A `grouped` worker may start page
    readers of its own (`ingest.workers`), so it is no daemon and is stopped with its group; a
    daemon parses with `workers = 1`."""

    def __init__(self, context: Any, memory_mb: int, nice: int = 0, grouped: bool = False) -> None:
        self.conn, child = context.Pipe()
        self.key, self.grouped = (memory_mb, nice), grouped
        self.proc = context.Process(
            target=_guarded_worker, args=(child, memory_mb, nice, grouped), daemon=not grouped
        )
        self.proc.start()
        child.close()
        self.ready = self.dead = False
        self.task: tuple[int, Path] | None = None
        self.deadline = math.inf

    def assign(
        self, task: tuple[int, Path], settings: IngestSettings, password: str | None,
        deadline: float,
    ) -> None:  # fmt: skip
        """Send one file to the worker."""
        self.task, self.deadline = task, deadline
        self.conn.send((task[1], settings, password))

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
            self.dead = True  # replaced: a worker that ran out of memory is not reused
            return _failure(path, f"it needs more memory; {_memory(settings)}")
        return got

    def stop(self) -> None:
        """End the worker (killed: it may be stuck in a parser), with its page readers."""
        if self.grouped and self.proc.pid is not None:
            with contextlib.suppress(OSError):  # its own group, once it has made it
                if os.getpgid(self.proc.pid) == self.proc.pid:
                    os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.kill()
        self.proc.join()
        self.conn.close()


class _WarmGuards:
    """Guarded workers kept between files (a start costs over a second: the parsers' imports),
    by memory limit and niceness; a worker serves one file at a time. Every one is stopped at
    exit (they are no daemons, so nothing else would)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[int, int], list[_Guard]] = {}
        self._live: set[_Guard] = set()
        self._lock = threading.Lock()
        self._closing = False

    def take(self, memory_mb: int, nice: int) -> _Guard:
        """An idle worker, or a new one (perhaps still starting)."""
        with self._lock:
            idle = self._idle.get((memory_mb, nice), [])
            while idle:
                guard = idle.pop()
                if guard.proc.is_alive():
                    return guard
                self._live.discard(guard)
                guard.stop()
            if not self._closing:  # registered after multiprocessing's own: it runs first
                self._closing = True
                atexit.register(self.close)
            guard = _Guard(multiprocessing.get_context("forkserver"), memory_mb, nice, True)
            self._live.add(guard)
            return guard

    def give(self, guard: _Guard, keep: int) -> None:
        """A worker back after its file: kept (at most `keep` idle alike), else stopped (also
        one whose file is still in hand: the caller gave up on it)."""
        with self._lock:
            if not guard.dead and guard.task is None and guard.proc.is_alive():
                idle = self._idle.setdefault(guard.key, [])
                if len(idle) < keep:
                    idle.append(guard)
                    return
            self._live.discard(guard)
        guard.stop()

    def close(self) -> None:
        """Stop every worker, idle or busy (at exit)."""
        with self._lock:
            guards = list(self._live)
            self._live.clear()
            self._idle.clear()
        for g in guards:
            g.stop()


_WARM = _WarmGuards()


def isolates(path: Path, settings: IngestSettings) -> bool:
    """Whether `path` is large enough to be parsed in a worker process at a lower priority
    (`ingest.isolate_above_kb`): its size on disk, or for a DOCX, PPTX, XLSX or EPUB the size
    its parts declare they unpack to, is over it."""
    limit = settings.isolate_above_kb * 1024
    if limit <= 0:
        return False
    try:
        size = path.stat().st_size
        if size <= limit and path.suffix.lower() in ARCHIVE_SUFFIXES:
            with zipfile.ZipFile(path) as book:  # reads the directory only
                size = max(size, sum(i.file_size for i in book.infolist()))
    except (OSError, zipfile.BadZipFile, ValueError):
        return False  # the parser reports it
    return size > limit


def parse_isolated(
    path: Path, settings: IngestSettings, password: str | None, *, nice: int
) -> ParseResult:
    """One file parsed by a warm guarded worker of niceness `nice`, within the time and memory
    limits that are set (`ingest.file_timeout_s`, `ingest.file_memory_mb`)."""
    guard = _WARM.take(settings.file_memory_mb, nice)
    try:
        while not guard.ready:  # starting: not counted against the time limit
            guard.poll(True, time.monotonic(), settings)
            if guard.dead:
                return _failure(path, f"the parser process failed to start; {_memory(settings)}")
        limit = settings.file_timeout_s
        now = time.monotonic()
        try:
            guard.assign((0, path), settings, password, now + limit if limit > 0 else math.inf)
        except OSError:  # it ended while idle
            guard.dead = True
            return _failure(path, f"the parser process ended; {_memory(settings)}")
        while True:
            left = None if guard.deadline == math.inf else max(guard.deadline - now, 0)
            readable = bool(wait([guard.conn], left))
            now = time.monotonic()
            result = guard.poll(readable, now, settings)
            if result is not None:
                return result
    finally:
        _WARM.give(guard, worker_count(settings))


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
    memory = settings.file_memory_mb
    guards = [_Guard(context, memory) for _ in range(min(worker_count(settings), len(paths)))]
    at = 0
    try:
        while at < len(paths):
            now = time.monotonic()
            for g in guards:
                if g.ready and g.task is None and todo:
                    limit = settings.file_timeout_s
                    deadline = now + limit if limit > 0 else math.inf
                    g.assign(todo.popleft(), inner, password, deadline)
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
                    guards[k] = _Guard(context, memory)
            while at in done:
                yield done.pop(at)
                at += 1
    finally:
        for g in guards:
            g.stop()
