"""Settings of document ingestion (`ingest.*`): readers, limits and the caps that keep one
hostile file from starving the others."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from footnote.config.base import _Section


class IngestSettings(_Section):
    """Limits and behaviour of document ingestion."""

    max_file_mb: float = Field(100.0, gt=0, description="Refuse files larger than this many MiB.")
    max_pages: int = Field(2000, gt=0, description="Refuse PDFs with more pages than this.")
    max_block_chars: int = Field(
        1500, gt=100, description="Split paragraphs longer than this at sentence boundaries."
    )
    min_block_chars: int = Field(
        40, ge=0, description="Merge paragraph fragments shorter than this into a neighbour."
    )
    max_paragraph_chars: int = Field(
        200_000,
        ge=1000,
        description="Cut a paragraph longer than this at a space before it is split into "
        "blocks (`max_block_chars`): bounds the work and memory one paragraph of a hostile "
        "file can cost.",
    )
    max_unpacked_mb: float = Field(
        256.0,
        gt=0,
        description="Refuse a DOCX, PPTX, XLSX or EPUB whose parts unpack to more than this "
        "many MiB in all (checked before anything is unpacked).",
    )
    max_unpack_ratio: float = Field(
        100.0,
        gt=1,
        description="Refuse a DOCX, PPTX, XLSX or EPUB with a part over 1 MiB unpacked that is "
        "packed more than this many times tighter (a zip bomb: 300 KB holding 100 MB of XML; "
        "documents pack about 5-20 times).",
    )
    max_zip_entries: int = Field(
        10_000, ge=1, description="Refuse a DOCX, PPTX, XLSX or EPUB with more parts than this."
    )
    max_elements: int = Field(
        500_000,
        ge=1,
        description="Refuse a DOCX, PPTX, XLSX or EPUB with more paragraphs, table or sheet "
        "cells, slide shapes or chapters than this.",
    )
    pdf_password: str = Field("", description="Password tried for encrypted PDFs.")
    default_labels: tuple[str, ...] = Field(
        (), description="Labels given to every ingested source (e.g. `no-external-model`)."
    )
    default_acl_groups: tuple[str, ...] = Field(
        (), description="ACL groups given to every ingested source; empty means public."
    )
    pdf_parser: Literal["builtin", "docling-parse", "grobid"] = Field(
        "builtin",
        description="PDF reader: `builtin` (pypdfium2 characters), `docling-parse` (its line "
        "cells; `pip install docling-parse`), `grobid` (a GROBID server at `grobid_url`: TEI "
        "sections, references and header metadata, no page positions).",
    )
    parsers: dict[str, Literal["builtin", "docling-parse", "grobid"]] = Field(
        default_factory=dict,
        description='Per-source PDF reader: file-name glob → reader (e.g. `{"*-scan.pdf" = '
        '"docling-parse"}`); the first matching glob wins, else `pdf_parser`.',
    )
    grobid_url: str = Field(
        "", description="GROBID server URL (e.g. `http://localhost:8070`) for `grobid`."
    )
    pdf_tables: Literal["rules", "pdfplumber", "off"] = Field(
        "rules",
        description="Ruled tables in PDFs: `rules` builds them from the rules pypdfium2 reads "
        "with the text (fast), `pdfplumber` re-parses candidate pages with pdfplumber's line "
        "strategy (about 0.5 s a page), `off` finds none (unruled tables are still found).",
    )
    unruled_tables: bool = Field(
        True,
        description="Find tables without rules or caption from text alignment: runs of rows "
        "whose cells are mostly numbers, with their header and section rows (captioned "
        "aligned tables are found either way).",
    )
    formula_latex: bool = Field(
        True,
        description="Write LaTeX for PDF formulas from glyph positions (rules, no model); the "
        "glyph text stays the block's text either way.",
    )
    ocr: Literal["auto", "off", "always"] = Field(
        "auto",
        description="OCR with Tesseract: `auto` reads pages without a usable text layer "
        "(scans, garbled glyph maps), `always` reads every page from its image, `off` never.",
    )
    ocr_languages: str = Field(
        "chi_sim+eng",
        description="Tesseract language packs, '+'-joined, main one first. When the first page "
        "read holds no CJK, later pages are read with the Latin ones only (faster), and again "
        "with all of them where that reads poorly.",
    )
    ocr_dpi: int = Field(
        200, ge=72, le=600, description="Resolution pages are rendered at for OCR."
    )
    file_timeout_s: float = Field(
        0.0,
        ge=0,
        description="Parse each file in a worker process that is stopped after this many "
        "seconds, the file reported failed and the next one parsed; the worker is kept warm "
        "for the next file (0: no limit, files are parsed as `isolate_above_kb` and `workers` "
        "say).",
    )
    file_memory_mb: int = Field(
        0,
        ge=0,
        description="Limit each file's worker process to this many MiB of address space; a "
        "file that needs more is reported failed (0: no limit).",
    )
    isolate_above_kb: float = Field(
        64.0,
        ge=0,
        description="Parse a file larger than this many KiB (a DOCX, PPTX, XLSX or EPUB also "
        "when its parts declare they unpack to more) in a worker process kept warm between "
        "files, at a lower OS priority (nice +10), so it shares neither the server's process "
        "nor the CPU evenly with other users' small files; smaller files are parsed in this "
        "process (0: every file in this process).",
    )
    workers: int = Field(
        0,
        ge=0,
        description="Parallel workers: OCR pages of one PDF, and files of a folder ingest "
        "(0: one per CPU core).",
    )
