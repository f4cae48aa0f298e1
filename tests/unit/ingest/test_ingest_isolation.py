"""Large files are parsed out of the server's process at a lower OS priority (#31, fairness):
`ingest.isolate_above_kb` decides by size on disk, or by what a zip-based format declares it
unpacks to; small files stay in this process. Real worker processes, no fakes."""

from __future__ import annotations

import importlib.util
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest.pool import (
    ISOLATED_NICE,
    PAGES_PER_TASK,
    ParseResult,
    isolates,
    parse_many,
)

REPO = Path(__file__).resolve().parents[3]


def _text(path: Path, kilobytes: int) -> Path:
    line = "Field notes on river otters at one station, with the water temperature.\n\n"
    path.write_text(line * (kilobytes * 1024 // len(line) + 1), encoding="utf-8")
    return path


def _one(results: Iterator[ParseResult]) -> ParseResult:
    (result,) = results
    return result


def _niceness(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


def test_a_file_over_the_threshold_is_parsed_in_a_lower_priority_worker(tmp_path: Path) -> None:
    big, small = _text(tmp_path / "big.txt", 100), _text(tmp_path / "small.md", 3)
    settings = IngestSettings(workers=1, isolate_above_kb=64)
    parsed = list(parse_many([big, small], settings))
    assert [r.path for r in parsed] == [big, small]
    assert all(r.document is not None and r.document.blocks for r in parsed)
    assert parsed[0].pid != os.getpid()
    assert _niceness(parsed[0].pid) == min(19, _niceness(0) + ISOLATED_NICE)  # still warm
    assert parsed[1].pid == os.getpid()


def test_isolate_above_kb_is_the_threshold(tmp_path: Path) -> None:
    big = _text(tmp_path / "big.txt", 100)
    for kb, elsewhere in ((64, True), (200, False), (0, False)):
        got = list(parse_many([big], IngestSettings(workers=1, isolate_above_kb=kb)))
        assert got[0].document is not None
        assert (got[0].pid != os.getpid()) is elsewhere, kb


def test_the_same_document_either_way(tmp_path: Path) -> None:
    big = _text(tmp_path / "big.txt", 100)
    inside = _one(parse_many([big], IngestSettings(workers=1, isolate_above_kb=0)))
    outside = _one(parse_many([big], IngestSettings(workers=1, isolate_above_kb=64)))
    assert inside.document is not None and outside.document is not None
    assert inside.document.blocks == outside.document.blocks
    assert inside.document.source.sha256 == outside.document.source.sha256


def test_an_archive_counts_by_what_it_declares_it_unpacks_to(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    made = docx.Document()
    for i in range(3000):  # about 400 KB of XML, well under 1 MiB: no zip-bomb ratio applies
        made.add_paragraph(f"Otters were counted at station {i % 7}.")
    path = tmp_path / "packed.docx"
    made.save(str(path))
    with zipfile.ZipFile(path) as z:
        unpacked = sum(i.file_size for i in z.infolist())
    assert path.stat().st_size < 64 * 1024 < unpacked < 1024 * 1024
    assert isolates(path, IngestSettings(isolate_above_kb=64))
    assert not isolates(path, IngestSettings(isolate_above_kb=1024))
    got = _one(parse_many([path], IngestSettings(workers=1, isolate_above_kb=64)))
    assert got.document is not None and got.pid != os.getpid()


def test_the_worker_is_kept_warm_between_files(tmp_path: Path) -> None:
    first, second = _text(tmp_path / "one.txt", 100), _text(tmp_path / "two.txt", 120)
    settings = IngestSettings(workers=1, isolate_above_kb=64)
    a = _one(parse_many([first], settings))
    b = _one(parse_many([second], settings))
    assert a.document is not None and b.document is not None
    assert a.pid == b.pid != os.getpid()


def test_the_time_limit_applies_to_a_large_file_and_its_worker_is_replaced(
    tmp_path: Path,
) -> None:
    slow = tmp_path / "slow.txt"  # seconds of parsing on any machine
    slow.write_text("".join(f"Sentence {i} of a long text.\n" for i in range(80_000)), "utf-8")
    big = _text(tmp_path / "big.txt", 100)
    settings = IngestSettings(workers=1, isolate_above_kb=64, file_timeout_s=1.0)
    stopped, after = list(parse_many([slow, big], settings))
    assert stopped.document is None and "ingest.file_timeout_s" in str(stopped.error)
    assert after.document is not None and after.pid not in (0, os.getpid())


def test_a_long_pdf_in_the_worker_still_has_page_readers(tmp_path: Path) -> None:
    pytest.importorskip("reportlab", reason="reportlab (test dependency) generates the PDFs")
    spec = importlib.util.spec_from_file_location("make_pdfs", REPO / "tests/data/make_pdfs.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    path = make.two_column(tmp_path / "long.pdf", pages=2 * PAGES_PER_TASK + 3)
    assert path.stat().st_size > 1024  # isolated at a threshold of 1 KiB
    inside = _one(parse_many([path], IngestSettings(workers=1, isolate_above_kb=0)))
    outside = _one(parse_many([path], IngestSettings(workers=2, isolate_above_kb=1)))
    assert inside.document is not None and outside.document is not None
    assert outside.pid != os.getpid()
    assert [(b.id, b.text) for b in inside.document.blocks] == [
        (b.id, b.text) for b in outside.document.blocks
    ]
