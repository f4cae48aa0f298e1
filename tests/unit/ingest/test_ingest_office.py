"""DOCX, PPTX, EPUB, CSV and XLSX files generated here parse into the same kind of blocks."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest import SUPPORTED_SUFFIXES, parse_file

SETTINGS = IngestSettings(min_block_chars=0)
LONG = "The annotated corpus holds four hundred papers from open archives, checked twice."


def test_docx_headings_lists_tables_captions_and_core_properties(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.core_properties.title = "Annotating Papers"
    d.core_properties.author = "Ada Lovelace; Alan Turing"
    d.core_properties.created = dt.datetime(2023, 5, 17, 9, 30)
    d.add_heading("Annotating Papers", level=0)
    d.add_heading("1 Introduction", level=1)
    d.add_paragraph(LONG)
    d.add_heading("1.1 Data", level=2)
    d.add_paragraph("tables were checked twice", style="List Bullet")
    d.add_paragraph("figures were skipped", style="List Bullet")
    d.add_paragraph("Table 1: Papers per split.", style="Caption")
    t = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Split", "Papers"), ("train", "300"), ("test", "100")]):
        for c, text in enumerate(row):
            t.cell(r, c).text = text
    d.add_paragraph("After the table comes a closing paragraph about the splits.")
    path = tmp_path / "paper.docx"
    d.save(str(path))
    doc = parse_file(path, SETTINGS)
    assert doc.source.kind == "docx" and doc.source.title == "Annotating Papers"
    assert doc.source.authors == ("Ada Lovelace", "Alan Turing")
    assert doc.source.published_at == "2023-05-17"
    kinds = [(b.kind, b.text.split("\n")[0]) for b in doc.blocks]
    assert ("heading", "1 Introduction") in kinds and ("heading", "1.1 Data") in kinds
    lst = next(b for b in doc.blocks if b.kind == "list")
    assert lst.text == "- tables were checked twice\n- figures were skipped"
    assert lst.section_path == ("1 Introduction", "1.1 Data")
    assert doc.blocks[0].kind == "heading" and doc.blocks[0].text == "Annotating Papers"
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.table is not None and table.table.cell(1, 1) == "300"
    assert table.table.caption == "Table 1: Papers per split."
    assert [b.kind for b in doc.blocks].index("table") < next(
        i for i, b in enumerate(doc.blocks) if b.text.startswith("After the table")
    )


def test_pptx_slides_are_pages_with_titles_bullets_tables_and_notes(tmp_path: Path) -> None:
    pptx = pytest.importorskip("pptx")
    from pptx.util import Inches

    deck = pptx.Presentation()
    deck.core_properties.title = "Quarterly Review"
    s1 = deck.slides.add_slide(deck.slide_layouts[1])
    s1.shapes.title.text = "Revenue grew"
    body = s1.placeholders[1].text_frame
    body.text = "Revenue rose 12% in 2023"
    p = body.add_paragraph()
    p.text = "driven by the new product line"
    p.level = 1
    s1.notes_slide.notes_text_frame.text = "Mention the currency effect."
    s2 = deck.slides.add_slide(deck.slide_layouts[5])
    s2.shapes.title.text = "Costs by region"
    rows = [("Region", "Cost"), ("North", "4.1"), ("South", "3.7")]
    shape = s2.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(4), Inches(1.5))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            shape.table.cell(r, c).text = text
    path = tmp_path / "deck.pptx"
    deck.save(str(path))
    doc = parse_file(path, SETTINGS)
    assert doc.source.kind == "pptx" and doc.source.pages == 2
    assert doc.source.title == "Quarterly Review"
    heads = [(b.text, b.page) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Revenue grew", 1), ("Costs by region", 2)]
    text = {b.text: b for b in doc.blocks}
    assert "Revenue rose 12% in 2023" in text
    assert text["Revenue rose 12% in 2023"].section_path == ("Revenue grew",)
    assert any("new product line" in b.text and b.kind == "list" for b in doc.blocks)
    assert text["Mention the currency effect."].page == 1
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.page == 2 and table.table is not None and table.table.cell(2, 1) == "3.7"
    assert table.bbox is not None and table.bbox[0] == pytest.approx(72.0)  # 1 inch, in points


def _epub(path: Path) -> Path:
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>A Small Book</dc:title>'
        "<dc:creator>Mary Shelley</dc:creator><dc:date>1818-01-01</dc:date>"
        "<dc:identifier>doi:10.1234/book.5678</dc:identifier></metadata><manifest>"
        '<item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>'
        '</manifest><spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>'
    )

    def chapter(title: str, para: str) -> str:
        return (
            '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>'
            f"{title}</title></head><body><h1>{title}</h1><p>{para}</p></body></html>"
        )

    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", container)
        z.writestr("OEBPS/content.opf", opf)
        z.writestr("OEBPS/text/ch1.xhtml", chapter("Letter 1", "You will rejoice to hear."))
        z.writestr("OEBPS/text/ch2.xhtml", chapter("Letter 2", "How slowly the time passes."))
    return path


def test_epub_spine_order_chapters_and_dublin_core(tmp_path: Path) -> None:
    doc = parse_file(_epub(tmp_path / "book.epub"), SETTINGS)
    assert doc.source.kind == "epub" and doc.source.title == "A Small Book"
    assert doc.source.authors == ("Mary Shelley",) and doc.source.published_at == "1818-01-01"
    assert doc.source.doi == "10.1234/book.5678"
    blocks = [(b.kind, b.text, b.page) for b in doc.blocks]
    assert blocks == [
        ("heading", "Letter 1", 1),
        ("paragraph", "You will rejoice to hear.", 1),
        ("heading", "Letter 2", 2),
        ("paragraph", "How slowly the time passes.", 2),
    ]
    assert doc.blocks[3].section_path == ("Letter 2",)


def test_csv_and_xlsx_become_addressable_tables(tmp_path: Path) -> None:
    csv_path = tmp_path / "scores.csv"
    lines = ["model;f1;params"] + [f"m{i};0.{50 + i};{i}M" for i in range(45)]
    csv_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = parse_file(csv_path, SETTINGS)
    tables = [b.table for b in doc.blocks if b.table is not None]
    assert doc.source.kind == "csv" and len(tables) == 2  # 45 rows: cut at 40, header repeated
    assert tables[0].header == (("model", "f1", "params"),) == tables[1].header
    assert tables[1].cell(1, 1) == "0.90" and len(tables[1].rows) == 5
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Results"
    for row in [("Model", "Accuracy"), ("Alpha", 91.2), ("Beta", 88)]:
        sheet.append(row)
    book.create_sheet("Empty")
    other = book.create_sheet("Costs")
    other.append(("Item", "EUR"))
    other.append(("GPU", 1200.5))
    path = tmp_path / "book.xlsx"
    book.save(str(path))
    doc = parse_file(path, SETTINGS)
    assert doc.source.kind == "xlsx"
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["Results", "Costs"]
    results, costs = (b for b in doc.blocks if b.kind == "table")
    assert results.table is not None and results.table.cell(2, 1) == "88"
    assert results.section_path == ("Results",) and results.page == 1
    assert costs.table is not None and costs.table.cell(1, 1) == "1200.5" and costs.page == 3


def test_new_suffixes_are_supported() -> None:
    assert {".docx", ".pptx", ".epub", ".tex", ".csv", ".tsv", ".xlsx"} <= SUPPORTED_SUFFIXES
