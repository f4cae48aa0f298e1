"""Ingestion that one hostile file cannot starve: joining is linear, archives and paragraphs
are capped (#31). Speed itself is measured by `bench/ingest_joining.py`, never timed here."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.errors import UnsupportedInput
from footnote.ingest import cleanup, parse_file
from footnote.ingest.cleanup import join_lines
from footnote.ingest.pool import parse_many

_TAIL_BOUND = 200
"""Characters of the text joined so far that one join may look at (linear joining)."""


def _record_joins(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of the left side of every join (the real join runs)."""
    seen: list[int] = []
    real = cleanup._join_two

    def recording(left: str, right: str, vocabulary: set[str] | None) -> str:
        seen.append(len(left))
        return real(left, right, vocabulary)

    monkeypatch.setattr(cleanup, "_join_two", recording)
    return seen


def test_joining_lines_looks_at_a_bounded_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """16,000 letters in 2,000 lines: the unanchored hyphen regex ran over the whole growing
    paragraph at every line (quadratic and worse)."""
    seen = _record_joins(monkeypatch)
    lines = ["abcdefgh"] * 2000
    assert join_lines(lines) == " ".join(lines)
    assert len(seen) == 1999 and max(seen) <= _TAIL_BOUND


def test_joining_repairs_hyphens_across_the_bounded_tail() -> None:
    lines = [
        "a state-of-the-",
        "art model with infor-",
        "mation",
        *["word"] * 50,
        "co-",
        "operation",
    ]
    text = join_lines(lines)
    assert text.startswith("a state-of-the-art model with information word")
    assert text.endswith("word cooperation")


def test_continuation_paragraphs_are_joined_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """2,000 lower-case paragraphs that continue each other: each merge re-joined the whole
    paragraph merged so far."""
    seen = _record_joins(monkeypatch)
    path = tmp_path / "hostile.txt"
    words = [f"word{i:04d}" for i in range(2000)]
    path.write_text("\n\n".join(words), encoding="utf-8")
    doc = parse_file(path, IngestSettings(workers=1))
    assert " ".join(b.text for b in doc.blocks).split() == words
    assert seen and max(seen) <= _TAIL_BOUND


def _docx(path: Path, paragraphs: int = 3) -> Path:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    for i in range(paragraphs):
        d.add_paragraph(f"Paragraph number {i} of a small document about citations.")
    d.save(str(path))
    return path


def _pptx(path: Path, slides: int = 3) -> Path:
    pptx = pytest.importorskip("pptx")
    deck = pptx.Presentation()
    for i in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Slide {i}"
        slide.placeholders[1].text = f"The point made on slide {i}."
    deck.save(str(path))
    return path


def _xlsx(path: Path, rows: int = 3) -> Path:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    for i in range(rows):
        book.active.append((f"row {i}", i, i * 2))
    book.save(str(path))
    return path


def _epub(path: Path, chapters: int = 3) -> Path:
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    items = "".join(
        f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(chapters))
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Book</dc:title>'
        f"</metadata><manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        for i in range(chapters):
            z.writestr(
                f"c{i}.xhtml",
                '<html xmlns="http://www.w3.org/1999/xhtml"><body>'
                f"<h1>Chapter {i}</h1><p>The text of chapter {i}.</p></body></html>",
            )
    return path


def _bomb(path: Path, megabytes: int = 100) -> Path:
    """A DOCX whose document.xml unpacks to `megabytes` MB of paragraphs (packs to ~300 KB)."""
    base = _docx(path.with_name("base.docx"))
    para = b"<w:p><w:r><w:t>" + b"zip " * 250 + b"</w:t></w:r></w:p>"
    megabyte = para * (1_000_000 // len(para))
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            if info.filename != "word/document.xml":
                z.writestr(info, src.read(info))
                continue
            with z.open("word/document.xml", "w", force_zip64=True) as out:
                out.write(
                    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document '
                    b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                    b"<w:body>"
                )
                for _ in range(megabytes):
                    out.write(megabyte)
                out.write(b"</w:body></w:document>")
    return path


def test_a_docx_zip_bomb_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """A few hundred KB holding 100 MB of XML ran for over 10 minutes."""
    path = _bomb(tmp_path / "bomb.docx")
    assert path.stat().st_size < 1_000_000
    with pytest.raises(UnsupportedInput, match=r"ingest\.max_unpack_ratio"):
        parse_file(path, IngestSettings(workers=1))


def test_max_unpack_ratio_is_a_setting(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "bomb.docx", megabytes=2)
    with pytest.raises(UnsupportedInput, match=r"ingest\.max_unpack_ratio"):
        parse_file(path, IngestSettings(workers=1))
    assert parse_file(path, IngestSettings(workers=1, max_unpack_ratio=1e6)).blocks


def test_max_unpacked_mb_caps_what_an_archive_unpacks_to(tmp_path: Path) -> None:
    path = _docx(tmp_path / "small.docx")
    assert parse_file(path, IngestSettings(workers=1)).blocks
    with pytest.raises(UnsupportedInput, match=r"ingest\.max_unpacked_mb"):
        parse_file(path, IngestSettings(workers=1, max_unpacked_mb=0.01))


def test_max_zip_entries_caps_the_parts_of_an_archive(tmp_path: Path) -> None:
    path = _epub(tmp_path / "book.epub", chapters=20)
    assert parse_file(path, IngestSettings(workers=1)).blocks
    with pytest.raises(UnsupportedInput, match=r"ingest\.max_zip_entries"):
        parse_file(path, IngestSettings(workers=1, max_zip_entries=10))


@pytest.mark.parametrize("make", [_docx, _pptx, _xlsx, _epub])
def test_max_elements_caps_each_archive_format(
    make: Callable[[Path, int], Path], tmp_path: Path
) -> None:
    suffix = {_docx: ".docx", _pptx: ".pptx", _xlsx: ".xlsx", _epub: ".epub"}[make]
    path = make(tmp_path / f"many{suffix}", 40)
    assert parse_file(path, IngestSettings(workers=1)).blocks
    with pytest.raises(UnsupportedInput, match=r"ingest\.max_elements"):
        parse_file(path, IngestSettings(workers=1, max_elements=30))


def test_max_paragraph_chars_cuts_a_long_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text(" ".join(f"word{i:05d}" for i in range(1000)), encoding="utf-8")
    whole = parse_file(path, IngestSettings(workers=1, max_block_chars=100_000))
    assert len(whole.blocks) == 1
    cut = parse_file(
        path, IngestSettings(workers=1, max_block_chars=100_000, max_paragraph_chars=2000)
    )
    assert len(cut.blocks) == 5 and all(len(b.text) <= 2000 for b in cut.blocks)
    assert " ".join(b.text for b in cut.blocks) == whole.blocks[0].text


def test_file_timeout_s_stops_a_slow_parse_and_goes_on(tmp_path: Path) -> None:
    slow = tmp_path / "slow.txt"  # seconds of parsing on any machine
    slow.write_text("".join(f"Sentence {i} of a long text.\n" for i in range(80_000)), "utf-8")
    note = tmp_path / "note.md"
    note.write_text("# A note\n\nShort text that parses in milliseconds.\n", encoding="utf-8")
    paths = [slow, note]
    limited = list(parse_many(paths, IngestSettings(workers=1, file_timeout_s=1.0)))
    assert [r.path for r in limited] == paths
    assert limited[0].document is None and limited[0].error is not None
    assert "ingest.file_timeout_s" in str(limited[0].error)
    assert limited[1].document is not None and limited[1].pid != os.getpid()
    whole = list(parse_many([note], IngestSettings(workers=1)))
    assert whole[0].document is not None and whole[0].pid == os.getpid()


def test_file_memory_mb_limits_the_worker(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("A sentence of words. " * 20_000, encoding="utf-8")
    starved = list(parse_many([path], IngestSettings(workers=1, file_memory_mb=1)))
    assert starved[0].document is None and "ingest.file_memory_mb" in str(starved[0].error)
    roomy = list(parse_many([path], IngestSettings(workers=1, file_memory_mb=8192)))
    assert roomy[0].document is not None and roomy[0].pid != os.getpid()
