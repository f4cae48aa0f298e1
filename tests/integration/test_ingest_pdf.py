"""PDF ingestion on real PDFs: generated fixtures and (marked `shared`) real papers."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from footnote.config import IngestSettings
from footnote.errors import EncryptedDocument, IngestError, UnsupportedInput
from footnote.examples import PAPERS_DIR
from footnote.ingest import parse_file
from footnote.types import Document

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = next(
    (p / "shared" / "data" for p in REPO.parents if (p / "shared" / "data").is_dir()),
    REPO.parent / "shared" / "data",
)
"""The nearest ancestor's shared/data (a git worktree sits one level deeper than the repo)."""
SHARED_PDFS = SHARED_DATA / "sci-pdfs" / "pdfs"
SETTINGS = IngestSettings()


def _load_makers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_pdfs", REPO / "tests/data/make_pdfs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pytest.importorskip("reportlab", reason="reportlab (test dependency) generates the PDFs")
MAKE = _load_makers()


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("pdfs")
    return {name: make(out / f"{name}.pdf") for name, make in MAKE.ALL.items()}


def _texts(doc: Document) -> list[str]:
    return [b.text for b in doc.blocks]


def _index(doc: Document, needle: str) -> int:
    return next(i for i, b in enumerate(doc.blocks) if needle in b.text)


def test_two_column_order_headers_and_page_numbers(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["two_column"], SETTINGS)
    text = "\n".join(_texts(doc))
    assert doc.source.pages == 3 and doc.source.kind == "pdf"
    assert "Journal of Layout Tests" not in text
    assert not any(b.text.strip().isdigit() for b in doc.blocks)
    assert doc.blocks[0].kind == "heading" and doc.blocks[0].text.startswith("A Study")
    for page in (1, 2, 3):
        left = _index(doc, f"P{page}.2 A second left paragraph")
        right = _index(doc, f"P{page}.0 The right column starts")
        assert left < right
    assert _index(doc, "P1.2 Another right") < _index(doc, "P2.0 The left column")
    para = doc.blocks[_index(doc, "P1.0 The left column")]
    assert para.text.endswith("ends right here.")
    assert para.section_path == ("1.1 Left Section",)
    assert para.bbox is not None and para.bbox[1] < para.bbox[3] < 842
    assert para.bbox[1] > 100  # top-left origin: near the top of the page


def test_hyphenation_and_ligatures(pdfs: dict[str, Path]) -> None:
    text = " ".join(_texts(parse_file(pdfs["hyphen_ligature"], SETTINGS)))
    assert "information from" in text and "infor-" not in text
    assert "state-of-the-art" in text
    if MAKE.DEJAVU.exists():
        assert "find the flow of effort and the office" in text


def test_ruled_table_with_caption(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["ruled_table"], SETTINGS)
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.table is not None
    assert table.table.header == (("Model", "Accuracy", "F1", "Params"),)
    assert table.table.rows[2] == ("Gamma", "93.4", "90.7", "1.3B")
    assert table.table.caption == "Table 1: Accuracy of the models."
    assert table.text == table.table.as_text()
    assert any(b.kind == "caption" and b.text.startswith("Table 1") for b in doc.blocks)


def test_grid_drawn_as_one_path_with_a_wrapped_cell(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["ruled_grid"], IngestSettings(pdf_tables="rules"))
    table = next(b.table for b in doc.blocks if b.table is not None)
    assert table.all_rows == (
        ("Region", "Revenue", "Note"),
        ("North", "4.1", "grew in the spring"),
        ("South", "3.7", "flat"),
    )


def test_pdf_tables_off_finds_no_ruled_grid(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["ruled_grid"], IngestSettings(pdf_tables="off"))
    assert not any(
        b.table is not None and ("North", "4.1", "grew in the spring") in b.table.all_rows
        for b in doc.blocks
    )


def test_numbered_formula(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["formula"], SETTINGS)
    formula = next(b for b in doc.blocks if b.kind == "formula")
    assert formula.formula_number == "1" and "L(w)" in formula.text
    assert [b.kind for b in doc.blocks] == ["paragraph", "formula", "paragraph"]


def test_formula_latex_from_glyph_positions(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["formula_scripts"], SETTINGS)
    formulas = [b for b in doc.blocks if b.kind == "formula"]
    assert [f.latex for f in formulas] == ["a^{2}+b^{2}=c^{2}", r"x=\frac{p}{q}"]
    assert formulas[0].text.replace(" ", "") == "a2+b2=c2"  # the glyph text stays the text
    off = parse_file(pdfs["formula_scripts"], IngestSettings(formula_latex=False))
    assert [b.latex for b in off.blocks if b.kind == "formula"] == [None, None]
    doc = parse_file(pdfs["formula"], SETTINGS)
    numbered = next(b for b in doc.blocks if b.kind == "formula")
    assert numbered.formula_number == "1" and numbered.latex and "L(w)" in numbered.latex


def test_references_split_and_linked(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["references"], SETTINGS)
    refs = [b for b in doc.blocks if b.kind == "reference"]
    assert [r.text[:3] for r in refs] == ["[1]", "[2]", "[3]"]
    assert "Proceedings of the Conference" in refs[0].text
    assert all(r.section_path == ("References",) for r in refs)
    para = next(b for b in doc.blocks if "Prior work" in b.text)
    assert para.links == (refs[0].id, refs[1].id, refs[2].id)


def test_chinese_pdf(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["chinese"], SETTINGS)
    assert doc.source.lang == "zh"
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == ["第一章 引言", "第二章 方法"]
    para = doc.blocks[1]
    assert para.lang == "zh" and para.section_path == ("第一章 引言",)
    assert "组成。本文研究" in para.text and " " not in para.text


def test_encrypted_pdf(pdfs: dict[str, Path]) -> None:
    with pytest.raises(EncryptedDocument, match="pass --password"):
        parse_file(pdfs["encrypted"], SETTINGS)
    with pytest.raises(EncryptedDocument, match="wrong password"):
        parse_file(pdfs["encrypted"], SETTINGS, password="nope")
    doc = parse_file(pdfs["encrypted"], SETTINGS, password="secret")
    assert "confidential text" in doc.blocks[0].text
    doc2 = parse_file(pdfs["encrypted"], IngestSettings(pdf_password="secret"))
    assert doc2.blocks[0].text == doc.blocks[0].text


@pytest.mark.parametrize("name", ["truncated", "not_a_pdf"])
def test_broken_pdfs_raise_ingest_errors(pdfs: dict[str, Path], name: str) -> None:
    with pytest.raises(UnsupportedInput):
        parse_file(pdfs[name], SETTINGS)


def test_corrupt_body_is_an_ingest_error(tmp_path: Path) -> None:
    p = tmp_path / "corrupt.pdf"
    p.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 200 + b"\n%%EOF\n")
    with pytest.raises(IngestError):
        parse_file(p, SETTINGS)


def test_page_limit(pdfs: dict[str, Path]) -> None:
    with pytest.raises(UnsupportedInput, match="max_pages"):
        parse_file(pdfs["two_column"], IngestSettings(max_pages=2))


def test_image_only_pdf_warns_when_ocr_is_off(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["image_only"], IngestSettings(ocr="off"))
    assert doc.blocks == ()
    assert doc.source.warnings == ("no text layer on pages 1–3: needs OCR (ingest.ocr is off)",)
    assert doc.source.parser == ""


def test_front_matter_figures_and_one_off_footer(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["front_matter"], SETTINGS)
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == [
        "Learning Front Matter Layouts",
        "Abstract",
        "1 Introduction",
        "A Appendix",
        "A.1 Training Details",
        "B More Results",
    ]
    assert doc.source.title == "Learning Front Matter Layouts"
    authors = next(b for b in doc.blocks if "Ada Lovelace" in b.text)
    assert authors.kind == "paragraph" and authors.section_path == ()
    assert "Institute for Analytical Engines" in "\n".join(b.text for b in doc.blocks[:3])
    figure = next(b for b in doc.blocks if b.kind == "figure")
    assert figure.text.startswith("Figure 1: The encoder and the decoder of the model.\n")
    for label in ("Encoder block", "Decoder block", "hidden state", "Query paper"):
        assert label in figure.text
        assert not any(label in b.text for b in doc.blocks if b.kind != "figure")
    assert figure.section_path == ("1 Introduction",)
    assert (
        figure.bbox is not None
        and figure.bbox[3] < doc.blocks[_index(doc, "Figure 1:") + 1].bbox[1]
    )
    assert any(b.kind == "caption" and b.text.startswith("Figure 1:") for b in doc.blocks)
    text = "\n".join(_texts(doc))
    assert (
        "Proceedings of the Test Conference" not in text and "Association for Testing" not in text
    )
    details = next(b for b in doc.blocks if b.text == "A.1 Training Details")
    assert details.section_path == ("A Appendix", "A.1 Training Details")
    again = parse_file(pdfs["front_matter"], SETTINGS)
    assert [b.id for b in again.blocks] == [b.id for b in doc.blocks]


def test_pdf_metadata_from_info_and_first_page(pdfs: dict[str, Path]) -> None:
    s = parse_file(pdfs["identifiers"], SETTINGS).source
    assert s.title == "Compilers for Everyone"
    assert s.authors == ("Grace Hopper", "Ada Lovelace")
    assert s.published_at == "2021-03-12"
    assert s.doi == "10.18653/v1/2021.test-main.42" and s.arxiv_id == "2103.01234v2"
    fm = parse_file(pdfs["front_matter"], SETTINGS).source
    assert fm.authors == ("Ada Lovelace", "Alan Turing")  # no Info entry: the author lines


def test_stable_ids(pdfs: dict[str, Path]) -> None:
    a = parse_file(pdfs["two_column"], SETTINGS)
    b = parse_file(pdfs["two_column"], SETTINGS)
    assert [x.id for x in a.blocks] == [x.id for x in b.blocks]
    assert len({x.id for x in a.blocks}) == len(a.blocks)


def _shared(name: str) -> Path:
    path = SHARED_PDFS / name
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.mark.shared
def test_real_paper_structure() -> None:
    doc = parse_file(_shared("N18-3011.pdf"), SETTINGS)
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert doc.source.title == "Construction of the Literature Graph in Semantic Scholar"
    for h in (
        "Abstract",
        "1 Introduction",
        "2.1 Node Types",
        "6 Conclusion and Future Work",
        "References",
    ):
        assert h in heads
    refs = [b for b in doc.blocks if b.kind == "reference"]
    assert len(refs) >= 20
    assert sum(1 for b in doc.blocks if b.links) >= 10
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert any(t.table and t.table.caption.startswith("Table 1") for t in tables)
    assert not any("Proceedings of NAACL-HLT" in b.text for b in doc.blocks)


def test_specter_title_block_and_figures() -> None:
    doc = parse_file(PAPERS_DIR / "specter.pdf", SETTINGS)
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads[:3] == [doc.source.title, "Abstract", "1 Introduction"]
    assert not any(
        h.startswith(("Arman Cohan", "†Allen", "Query paper", "Transformer (", "Triplet"))
        for h in heads
    )
    top = [s.title for s in doc.sections]
    assert "Arman Cohan†∗ Sergey Feldman†∗" not in top and "Triplet loss" not in " ".join(top)
    figures = [b for b in doc.blocks if b.kind == "figure"]
    assert [f.text.split("\n")[0][:9] for f in figures] == ["Figure 1:", "Figure 2:"]
    assert "Transformer (initialized with SciBERT)" in figures[0].text
    assert figures[0].section_path == ("2 Model", "2.1 Overview")
    assert not any(
        "Association for Computational Linguistics" in b.text for b in doc.blocks if b.page == 1
    )


@pytest.mark.shared
def test_garbled_text_layer_is_flagged_or_read_by_ocr() -> None:
    off = parse_file(_shared("olmo-page-1.pdf"), IngestSettings(ocr="off"))
    assert any("garbled" in w and "needs OCR" in w for w in off.source.warnings)
    doc = parse_file(_shared("olmo-page-1.pdf"), SETTINGS)
    if doc.source.parser:  # tesseract is installed: the page is read from its image instead
        assert not any("garbled" in w for w in doc.source.warnings)
        assert "Accelerating the Science of Language Models" in doc.blocks[0].text


@pytest.mark.shared
def test_chinese_paper() -> None:
    doc = parse_file(_shared("elegantpaper-cn.pdf"), SETTINGS)
    assert doc.source.lang == "zh"
    assert any(b.kind == "heading" for b in doc.blocks)


@pytest.mark.shared
@pytest.mark.slow
def test_all_shared_pdfs_parse() -> None:
    if not SHARED_PDFS.exists():
        pytest.skip(f"shared data not present: {SHARED_PDFS}")
    for path in sorted(SHARED_PDFS.glob("*.pdf")):
        doc = parse_file(path, SETTINGS)
        assert doc.source.pages >= 1


def test_unruled_number_table_without_caption(pdfs: dict[str, Path]) -> None:
    doc = parse_file(pdfs["number_table"], SETTINGS)
    table = next(b.table for b in doc.blocks if b.table is not None)
    assert table.header == (("Indicator", "2021", "2022E", "2023E"),)
    assert ("Revenue (m)", "1,567", "3,684", "5,056") in table.rows
    assert ("Margins", "", "", "") in table.rows  # a section row inside the table
    assert ("Net margin", "11.0%", "12.8%", "14.2%") in table.rows
    plain = parse_file(pdfs["number_table"], IngestSettings(unruled_tables=False))
    assert not any(b.table is not None for b in plain.blocks)
    assert any(b.text.startswith("The closing paragraph") for b in doc.blocks)


def test_docling_parse_reader_behind_the_same_pipeline(pdfs: dict[str, Path]) -> None:
    pytest.importorskip("docling_parse", reason="docling-parse (optional extra) not installed")
    builtin = parse_file(pdfs["two_column"], SETTINGS)
    docling = parse_file(pdfs["two_column"], IngestSettings(pdf_parser="docling-parse"))
    assert docling.source.parser == "docling-parse" and builtin.source.parser == ""
    assert docling.source.id != builtin.source.id  # another reading: another version
    heads = [b.text for b in docling.blocks if b.kind == "heading"]
    assert heads == [b.text for b in builtin.blocks if b.kind == "heading"]
    para = next(b for b in docling.blocks if b.text.startswith("P1.0 The left column"))
    assert para.text.endswith("ends right here.") and para.bbox is not None


def test_parsers_glob_picks_the_reader_per_source(pdfs: dict[str, Path]) -> None:
    pytest.importorskip("docling_parse", reason="docling-parse (optional extra) not installed")
    settings = IngestSettings(parsers={"two_*.pdf": "docling-parse"})
    assert parse_file(pdfs["two_column"], settings).source.parser == "docling-parse"
    assert parse_file(pdfs["ruled_table"], settings).source.parser == ""


def test_grobid_reader_needs_a_server_url(pdfs: dict[str, Path]) -> None:
    with pytest.raises(IngestError, match="grobid_url"):
        parse_file(pdfs["two_column"], IngestSettings(pdf_parser="grobid"))


@pytest.mark.shared
def test_grobid_tei_becomes_blocks() -> None:
    from footnote.ingest.grobid import parse_tei

    tei = SHARED_DATA / "sci-pdfs" / "groundtruth" / "N18-3011.grobid.tei.xml"
    if not tei.exists():
        pytest.skip(f"shared data not present: {tei}")
    parsed = parse_tei(tei.read_bytes())
    assert parsed.meta.title == "Construction of the Literature Graph in Semantic Scholar"
    assert parsed.meta.authors[:2] == ["Waleed Ammar", "Dirk Groeneveld"]
    heads = [b.text for b in parsed.blocks if b.kind == "heading"]
    assert heads[:4] == [
        "Abstract",
        "1 Introduction",
        "2 Structure of The Literature Graph",
        "2.1 Node Types",
    ]
    assert sum(1 for b in parsed.blocks if b.kind == "reference") >= 20


def test_grobid_server_when_one_is_given(pdfs: dict[str, Path]) -> None:
    import os

    url = os.environ.get("FOOTNOTE_TEST_GROBID_URL", "")
    if not url:
        pytest.skip("no GROBID server (set FOOTNOTE_TEST_GROBID_URL to run this test)")
    doc = parse_file(pdfs["two_column"], IngestSettings(pdf_parser="grobid", grobid_url=url))
    assert doc.source.parser == "grobid" and doc.blocks


def test_long_pdf_pages_read_in_worker_processes_give_the_same_document(tmp_path: Path) -> None:
    from footnote.ingest.pool import PAGES_PER_TASK

    path = MAKE.two_column(tmp_path / "long.pdf", pages=2 * PAGES_PER_TASK + 3)
    one = parse_file(path, IngestSettings(workers=1))
    two = parse_file(path, IngestSettings(workers=2))
    assert one.source.pages == two.source.pages == 2 * PAGES_PER_TASK + 3
    assert [(b.id, b.text, b.bbox) for b in one.blocks] == [
        (b.id, b.text, b.bbox) for b in two.blocks
    ]
