"""OCR of scanned PDFs with the real Tesseract (Debian tesseract-ocr, -eng, -chi-sim)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from footnote.config import IngestSettings
from footnote.ingest import parse_file
from footnote.ingest.ocr import installed_languages, tesseract_version
from footnote.types import Document

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    tesseract_version() is None or not {"eng", "chi_sim"} <= installed_languages(),
    reason="tesseract-ocr with eng and chi_sim is not installed (scripts/setup installs it)",
)
pytest.importorskip("reportlab", reason="reportlab (test dependency) generates the PDFs")


def _load_makers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_pdfs", REPO / "tests/data/make_pdfs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKE = _load_makers()


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("scans")
    names = ("two_column", "scanned_page", "scanned_chinese", "scanned_with_note")
    return {name: MAKE.ALL[name](out / f"{name}.pdf") for name in names}


def _text(doc: Document) -> str:
    return "\n".join(b.text for b in doc.blocks)


def test_scanned_page_reads_like_its_text_layer(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["scanned_page"], IngestSettings())
    assert doc.source.parser.startswith("tesseract ")
    assert any("read by OCR" in w for w in doc.source.warnings)
    assert not any("needs OCR" in w for w in doc.source.warnings)
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads[:3] == [
        "A Study of Two Column Reading Order",
        "1.1 Left Section",
        "1.2 Right Section",
    ]
    texts = [b.text for b in doc.blocks]
    left = next(i for i, t in enumerate(texts) if t.startswith("P1.2 A second left paragraph"))
    right = next(i for i, t in enumerate(texts) if t.startswith("P1.0 The right column starts"))
    assert left < right
    para = doc.blocks[right]
    assert para.text == (
        "P1.0 The right column starts here and must come after the whole left column has been read."
    )
    assert para.section_path == ("1.2 Right Section",)
    assert para.ocr_confidence is not None and para.ocr_confidence > 0.8
    assert para.page == 1 and para.bbox is not None
    assert 290 < para.bbox[0] < 330 and 130 < para.bbox[1] < 180  # where the text was drawn


def test_text_layer_where_ocr_read_nothing_is_kept(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["scanned_with_note"], IngestSettings())
    assert doc.source.parser
    notes = [b for b in doc.blocks if b.text == "Archive copy, shelf 42"]
    assert len(notes) == 1 and notes[0].ocr_confidence is None  # from the text layer
    assert any(b.text.startswith("P1.0 The right column") for b in doc.blocks)


def test_scanned_chinese_pdf(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["scanned_chinese"], IngestSettings())
    assert doc.source.lang == "zh"
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == ["第一章 引言", "第二章 方法"]
    assert "知识图谱是一种用图结构表示知识的方法，它由实体和关系组成。本文研究" in _text(doc)
    assert all(b.ocr_confidence is not None for b in doc.blocks)


def test_ocr_languages_setting_changes_what_is_read(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["scanned_chinese"], IngestSettings(ocr_languages="eng"))
    assert "知识图谱" not in _text(doc)
    assert doc.source.parser.split()[2] == "eng"


def test_ocr_off_leaves_scans_unread(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["scanned_page"], IngestSettings(ocr="off"))
    assert doc.blocks == () and doc.source.parser == ""
    assert doc.source.warnings == ("no text layer on pages 1: needs OCR (ingest.ocr is off)",)


def test_ocr_always_reads_born_digital_pages_from_their_image(pdfs: dict[str, Path]) -> None:
    plain = parse_file(pdfs["two_column"], IngestSettings())
    assert all(b.ocr_confidence is None for b in plain.blocks) and plain.source.parser == ""
    read = parse_file(pdfs["two_column"], IngestSettings(ocr="always"))
    assert read.source.parser and all(b.ocr_confidence is not None for b in read.blocks)
    assert read.source.id != plain.source.id and read.source.pages == 3


def test_ocr_dpi_setting_changes_confidence(pdfs: dict[str, Path]) -> None:
    coarse = parse_file(pdfs["scanned_page"], IngestSettings(ocr_dpi=72))
    fine = parse_file(pdfs["scanned_page"], IngestSettings(ocr_dpi=200))
    assert "72dpi" in coarse.source.parser and "200dpi" in fine.source.parser

    def mean(doc: Document) -> float:
        confs = [b.ocr_confidence or 0.0 for b in doc.blocks]
        return sum(confs) / len(confs)

    assert mean(fine) > mean(coarse)


def test_scan_reingested_once_ocr_is_on_becomes_a_new_version(
    pdfs: dict[str, Path], tmp_path: Path
) -> None:
    from footnote.workspace import Workspace

    scan = pdfs["scanned_page"]
    with Workspace.open(tmp_path / "ws", overrides={"ingest": {"ocr": "off"}}) as ws:
        first = ws.ingest([scan], index=False).results[0]
        assert first.outcome == "added" and first.blocks == 0
        again = ws.ingest([scan], index=False).results[0]
        assert again.outcome == "unchanged"
    with Workspace.open(tmp_path / "ws") as ws:
        read = ws.ingest([scan], index=False).results[0]
        assert read.outcome == "new_version" and read.blocks > 5
        assert read.source is not None and read.source.version == 2
        assert read.source.parser.startswith("tesseract")
        assert ws.ingest([scan], index=False).results[0].outcome == "unchanged"
        assert [r.source.version for r in ws.store.list_sources()] == [2]
    with Workspace.open(tmp_path / "fresh") as ws:  # read with OCR the first time: no re-read
        assert ws.ingest([scan], index=False).results[0].outcome == "added"
        assert ws.ingest([scan], index=False).results[0].outcome == "unchanged"
