"""Tables keep their labels: row-label columns of a table set across both columns of a page,
and header rows read as paths (a group name over its sub-headers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest import parse_file
from footnote.ingest.pdf.headers import labelled_cells, structure
from footnote.types import Block, Table

SHARED_PDFS = next(
    (
        p / "shared" / "data" / "sci-pdfs" / "pdfs"
        for p in Path(__file__).resolve().parents
        if (p / "shared/data").is_dir()
    ),
    Path("/nonexistent"),
)


def _tables(name: str, page: int) -> list[Table]:
    path = SHARED_PDFS / name
    if not path.is_file():
        pytest.skip(f"shared data not present: {path}")
    doc = parse_file(path, IngestSettings(workers=1))
    return [b.table for b in doc.blocks if b.page == page and b.table is not None]


@pytest.mark.shared
def test_full_width_table_keeps_its_row_label_columns() -> None:
    """SciBERT Table 1: Field/Task/Dataset sit left of the gutter, the numbers right of it."""
    cells = [c for t in _tables("1903.10676.pdf", 1) for c in labelled_cells(t)]
    assert ("JNLPBA (Collier and Kim, 2004)", ("BERT-Base", "Frozen"), "74.05") in [
        (r.split(" / ")[-1], p, v) for r, p, v in cells
    ]
    assert any(r == "NER / JNLPBA (Collier and Kim, 2004)" for r, _, _ in cells)
    assert any(
        r == "Average" and p == ("BERT-Base", "Finetune") and v == "77.16" for r, p, v in cells
    )


def test_two_level_header_reads_as_paths() -> None:
    grid = [
        ["", "", "Full", "", "", "Subset", ""],
        ["Model", "", "", "", "", "", ""],
        ["", "P", "R", "F1", "P", "R", "F1"],
        ["CRF", "40.6", "38.3", "39.1", "81.2", "76.7", "78.9"],
        ["NN", "42.0", "36.5", "37.6", "84.1", "73.0", "78.2"],
    ]
    table = structure(grid)
    assert table.header == (
        ("", "Full", "Full", "Full", "Subset", "Subset", "Subset"),
        ("Model", "P", "R", "F1", "P", "R", "F1"),
    )
    assert ("NN", ("Subset", "F1"), "78.2") in labelled_cells(table)


def test_a_header_over_no_sub_header_spans_nothing() -> None:
    grid = [
        ["Task", "SOTA", "BERT", "", "Ours", ""],
        ["", "", "Frozen", "Tuned", "Frozen", "Tuned"],
        ["NER", "88.8", "85.0", "86.7", "88.7", "90.0"],
    ]
    table = structure(grid)
    assert table.header[0] == ("Task", "SOTA", "BERT", "BERT", "Ours", "Ours")
    assert ("NER", ("SOTA",), "88.8") in labelled_cells(table)


def test_text_only_table_has_one_header_row() -> None:
    table = structure([["Substance", "Limit"], ["Lead (Pb)", "1000 ppm (0.10 weight %)"]])
    assert table.header == (("Substance", "Limit"),)
    assert labelled_cells(table) == [("Lead (Pb)", ("Limit",), "1000 ppm (0.10 weight %)")]


def _blocks(name: str) -> list[Block]:
    path = SHARED_PDFS / name
    if not path.is_file():
        pytest.skip(f"shared data not present: {path}")
    return list(parse_file(path, IngestSettings(workers=1)).blocks)


@pytest.mark.shared
def test_table_header_rows_are_not_section_headings() -> None:
    """A bold row of column names (gaps between its cells) and a group row inside a table."""
    heads = {b.text for b in _blocks("2206.10883v3.pdf") if b.kind == "heading"}
    assert "Source Target Source →Target" not in heads and "Tiny" not in heads
    assert "3.3 Dataset characterization" in heads and "4 Experiments" in heads
    heads = {b.text for b in _blocks("2203.00130v1.pdf") if b.kind == "heading"}
    assert not any(h.startswith(("Barrier Description", "Source Question")) for h in heads)
    assert "7 RESULTS" in heads


@pytest.mark.shared
def test_authors_and_affiliations_are_not_sections() -> None:
    """CiteSee (ACM layout): names and affiliations set larger than the body text."""
    blocks = _blocks("2302.07302v1.pdf")
    heads = [b.text for b in blocks if b.kind == "heading"]
    assert "Andrew Head Kyle Lo" not in heads and "Daniel S. Weld" not in heads
    assert not any(h.startswith("Allen Institute") for h in heads)
    assert "ABSTRACT" in heads and "1 INTRODUCTION" in heads
    assert all("Weld" not in p for b in blocks for p in b.section_path)


@pytest.mark.shared
def test_ruled_tables_sit_on_their_own_page() -> None:
    """papermage's appendix tables are on pages 13 and up, not page 1."""
    tables = [b for b in _blocks("papermage.pdf") if b.kind == "table"]
    assert tables and not [b for b in tables if b.page == 1]


@pytest.mark.shared
def test_two_level_header_of_an_unruled_table_is_kept() -> None:
    """papermage Table 2: "Full" and "Grobid Subset" over P, R, F1; "Model" between them."""
    cells = [c for t in _tables("papermage.pdf", 5) for c in labelled_cells(t)]
    assert ("GrobidNN", ("Grobid Subset", "F1"), "78.2") in cells
    assert ("RoBERTa", ("Full", "R"), "80.0") in cells


@pytest.mark.shared
def test_a_ruled_frame_over_column_groups_is_not_a_second_table() -> None:
    """papermage Table 3: rules around each model's columns made a garbled 2-cell copy."""
    tables = _tables("papermage.pdf", 13)
    assert len(tables) == 1
    assert ("Author", ("RoBERTa", "R"), "73.5") in labelled_cells(tables[0])


OLMOCR_PDFS = SHARED_PDFS.parent.parent / "olmocr-bench-sample" / "pdfs"


@pytest.mark.shared
def test_merged_ruled_cell_sits_under_its_column_and_header_rows_above_are_kept() -> None:
    """olmOCR earnings: "3,423" fills a cell merged with the "$" column; "Year Ended" over
    the three dates, above the ruled grid."""
    path = OLMOCR_PDFS / "earnings.pdf"
    if not path.is_file():
        pytest.skip(f"shared data not present: {path}")
    doc = parse_file(path, IngestSettings(workers=1))
    cells = [c for b in doc.blocks if b.table is not None for c in labelled_cells(b.table)]
    assert ("Research and development", ("Year Ended", "Jan 26, 2025"), "3,423") in cells
    assert ("Total", ("Year Ended", "Jan 29, 2023"), "2,710") in cells


@pytest.mark.shared
def test_stacked_ruled_rows_split_and_unruled_side_columns_join_the_table() -> None:
    """OTSL Table 1: each ruled row stacks an OTSL and an HTML line; "# enc-layers" and
    "Inference time" stand outside the rules and were stored as a second table."""
    tables = _tables("2305.03393v1-pg9.pdf", 1)
    assert len(tables) == 1
    cells = labelled_cells(tables[0])
    assert ("6 / 6 / HTML", ("TEDs", "simple"), "0.969") in cells
    assert ("6 / 6 / OTSL", ("Inference", "time (secs)"), "2.73") in cells
