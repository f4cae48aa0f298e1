"""Artefacts of the PDF text layer repaired at ingest, on the shared papers where they occur:
footnote markers glued to the text before them, small capitals split from their first letter."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.examples import PAPERS_DIR
from footnote.ingest import parse_file
from footnote.types import Document

SHARED_PDFS = next(
    (
        p / "shared" / "data" / "sci-pdfs" / "pdfs"
        for p in Path(__file__).resolve().parents
        if (p / "shared/data").is_dir()
    ),
    Path("/nonexistent"),
)
SETTINGS = IngestSettings(workers=1)


def _doc(name: str) -> Document:
    path = SHARED_PDFS / name
    if not path.is_file():
        pytest.skip(f"shared data not present: {path}")
    return parse_file(path, SETTINGS)


def _text(doc: Document, page: int) -> str:
    return "\n".join(b.text for b in doc.blocks if b.page == page)


@pytest.mark.shared
def test_note_markers_glued_to_words_and_urls_are_removed() -> None:
    doc = _doc("papermage.pdf")
    page1, page2 = _text(doc, 1), _text(doc, 2)
    assert "github.com/allenai/papermage1" not in page1
    assert "github.com/allenai/papermage" in page1
    assert "1 We use code snippets" in page1  # the note keeps its own number, set apart
    assert "sequence labeling models to perform" in page2
    assert "models3" not in page2


@pytest.mark.shared
def test_note_marker_after_a_full_stop() -> None:
    doc = _doc("2304.02623v1.pdf")
    page1 = _text(doc, 1)
    assert "AI-assisted writing. The language" in page1
    assert "writing.1" not in page1
    assert "2 https://platform.openai.com/examples" in page1


@pytest.mark.shared
def test_note_markers_glued_to_version_numbers() -> None:
    """S2ORC: "SCIENCEPARSE v3.0.0⁹ and GROBID v0.5.5¹⁰" (ingestion test only)."""
    page3 = _text(_doc("2020.acl-main.447.pdf"), 3)
    assert "SCIENCEPARSE v3.0.0 and GROBID v0.5.5 (Lopez, 2009)" in page3
    assert "v3.0.09" not in page3 and "v0.5.510" not in page3


@pytest.mark.shared
def test_note_marker_drawn_as_a_superior_figure() -> None:
    """The marker's glyph is a superior "1" at the body size (fontspec): told by its box."""
    page4 = _text(_doc("elegantpaper-cn.pdf"), 4)
    assert "GB/T 7714-2015。" in page4
    assert "7714-20151" not in page4


@pytest.mark.shared
def test_raised_numbers_without_a_note_keep_their_digits() -> None:
    """Citation numbers set as superscripts point to the references, not to a note on the
    page: they are not removed on the digits' looks alone."""
    page2 = _text(_doc("pdftotext_two_column_issue.pdf"), 2)
    assert "pregnancies.2,3" in page2 and "levels.4" in page2


@pytest.mark.shared
def test_small_capitals_after_a_note_number_stay_one_word() -> None:
    """ "¹¹Our evaluations suggest SCIENCEPARSE": the small capitals after "S" were read as
    another fragment because the line's box was the raised note number's."""
    page3 = _text(_doc("2020.acl-main.447.pdf"), 3)
    assert "11 Our evaluations suggest SCIENCEPARSE outperforms GROBID" in page3
    assert "S CIENCEPARSE" not in page3


@pytest.mark.shared
def test_a_note_is_one_block_with_its_line_end_hyphen_repaired() -> None:
    """The note's first line ("¹We use … core de-") was its own block, so "de- signs" stayed
    broken where the next line was joined to another block."""
    doc = _doc("papermage.pdf")
    notes = [b.text for b in doc.blocks if b.kind == "footnote" and b.page == 1]
    assert any(
        t.startswith("1 We use code snippets to illustrate our toolkit’s core designs and")
        for t in notes
    )
    assert "de- signs" not in _text(doc, 1)


@pytest.mark.shared
def test_consecutive_notes_are_separate_blocks() -> None:
    doc = _doc("papermage.pdf")
    notes = [b.text for b in doc.blocks if b.kind == "footnote" and b.page == 2]
    assert any(t.startswith("3 https://grobid.readthedocs.io") and " 4 " not in t for t in notes)
    assert any(t.startswith("4 Most research in NLP requires") for t in notes)


def test_real_hyphens_are_kept() -> None:
    """Compounds broken at a line end and suspended hyphens keep their hyphen."""
    text = "\n".join(b.text for b in parse_file(PAPERS_DIR / "specter.pdf", SETTINGS).blocks)
    assert "token- and sentence-level" in text
    assert "state-of-the-art" in text and "stateoftheart" not in text
