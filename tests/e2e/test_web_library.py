"""The library in a real browser: upload several files (picker and drag and drop) with
progress and plain-words errors, the list, a source's sections and tables, deletion."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from playwright.sync_api import Page, expect

from footnote.examples import PAPERS_DIR
from footnote.ingest import SUPPORTED_SUFFIXES

pytestmark = pytest.mark.integration

PAPER = PAPERS_DIR / "literature-graph-semantic-scholar.pdf"
TITLE = "Construction of the Literature Graph in Semantic Scholar"
NOTES = """# Field notes

## Results

| System | Recall@10 |
|---|---|
| BM25 | 0.61 |
| Hybrid | 0.74 |

Hybrid retrieval reached a recall@10 of 0.74.
"""


def drop_file(page: Page, name: str, text: str) -> None:
    """Drag and drop a file onto the drop zone (a real DataTransfer with a File)."""
    page.locator("[data-testid=dropzone]").evaluate(
        """(zone, [name, text]) => {
            const data = new DataTransfer();
            data.items.add(new File([text], name, { type: "text/markdown" }));
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true }));
            }
        }""",
        [name, text],
    )


def test_upload_list_open_and_delete(page: Page, tmp_path: Path, api: Any, shots: Path) -> None:
    assert ".md" in SUPPORTED_SUFFIXES
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"this is not a PDF at all")
    page.goto("/#/library")
    expect(page.get_by_role("heading", name="Library", level=1)).to_be_visible()

    # Several files at once: each gets its own row, progress and outcome in plain words.
    page.locator("#file-input").set_input_files([PAPER, broken])
    queue = page.locator(".upload-queue")
    paper_row = queue.locator(f".upload-item[data-file='{PAPER.name}']")
    broken_row = queue.locator(".upload-item[data-file='broken.pdf']")
    expect(paper_row.locator("progress")).to_be_attached()
    expect(paper_row.locator(".upload-state")).to_have_text(
        re.compile("Added|Already in the library"), timeout=120_000
    )
    expect(broken_row.locator(".upload-state")).to_contain_text("Could not add", timeout=60_000)
    assert "Error:" not in broken_row.inner_text()  # plain words, no exception class names

    # Drag and drop.
    drop_file(page, "field-notes.md", NOTES)
    notes_row = queue.locator(".upload-item[data-file='field-notes.md']")
    expect(notes_row.locator(".upload-state")).to_have_text("Added", timeout=60_000)

    # The list: title, pages, language, labels.
    table = page.get_by_role("table")
    row = table.locator("tr", has_text=TITLE)
    expect(row).to_be_visible()
    expect(row.locator("td[data-label=Pages]")).to_have_text("8")
    expect(row.locator("td[data-label=Language]")).to_have_text("English")
    expect(row.locator("td[data-label=Labels]")).to_have_text("none")
    page.screenshot(path=str(shots / "library.png"))

    # A source's own page: the section tree and the tables, with jumps into the PDF.
    row.get_by_role("link", name=TITLE).click()
    expect(page.get_by_role("heading", name=TITLE, level=1)).to_be_visible()
    tree = page.locator(".tree").first
    expect(
        tree.locator(".tree-title", has_text="Structure of The Literature Graph")
    ).to_be_visible()
    page.screenshot(path=str(shots / "source.png"), full_page=True)
    tree.locator(".page-link").first.click()
    dialog = page.get_by_role("dialog")
    expect(dialog.locator(".pdf-page[data-rendered]")).to_be_visible(timeout=30_000)
    expect(dialog.locator(".pdf-highlight[role=mark]")).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    notes_id = next(s["id"] for s in api("GET", "/v1/sources") if s["title"] == "Field notes")
    page.goto(f"/#/library/{notes_id}")
    tables = page.locator(".table-view")
    expect(tables).to_have_count(1)
    expect(tables.get_by_role("cell", name="0.74")).to_be_visible()

    # Delete, after a confirmation.
    page.get_by_role("link", name="Back to library").click()
    page.get_by_role("button", name="Delete: Field notes").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(table.locator("tr", has_text="Field notes")).to_have_count(0)
    assert all(s["title"] != "Field notes" for s in api("GET", "/v1/sources"))
