"""The README's screenshots, taken by the browser suite: every picture the README (and the docs)
embed under docs/ is written here, from a real `footnote serve` — the chat and the PDF on the
bundled paper through the real pipeline, the review page on a research run over the fixture web,
the graph page on the bundled movies graph (only its `cypher` and `compose` models scripted).

`pytest tests/e2e -k readme_screenshot --readme-screenshots` writes them over docs/; without the
option they go to test-output/readme/ (same relative paths) so a run never touches the repo.
Each picture is palette-quantised and must stay under `MAX_BYTES` (they are committed)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import PAPER, ROOT, serving, upload  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect
from test_web_graph import ASK_AFTER, _ask_movies, movies_server  # noqa: F401 - a fixture
from test_web_review import review_server  # noqa: F401 - a fixture

pytestmark = pytest.mark.integration
PIL = pytest.importorskip("PIL.Image")
MAX_BYTES = 200_000
QUESTION = "How large is the literature graph in Semantic Scholar?"
PICTURES = {
    "docs/screenshots/chat-evidence.png": "the chat answer with footnotes and the evidence board",
    "docs/screenshots/pdf-highlight.png": "a citation opened in the PDF, its block highlighted",
    "docs/img/review-claim-snapshot.png": "a claim opened on the review page, its saved page",
    "docs/img/review-conflicts.png": "conflicts resolved by the analyst",
    "docs/img/review-signed.png": "the brief signed off, its version hash and coverage",
    "docs/img/graph-answer.png": "a graph answer beside its rows, the Cypher with its values",
}
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")


def embedded_pictures() -> set[str]:
    """The repo paths of the PNGs under docs/ that README.md and docs/*.md embed."""
    found = set()
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for link in _IMAGE.findall(md.read_text(encoding="utf-8")):
            if "://" not in link:
                path = (md.parent / link).resolve()
                if path.is_relative_to(ROOT / "docs"):
                    found.add(path.relative_to(ROOT).as_posix())
    return found


@pytest.fixture(scope="module")
def out_root(request: pytest.FixtureRequest) -> Path:
    """The repo itself with --readme-screenshots, else test-output/readme/."""
    write_docs = request.config.getoption("--readme-screenshots", default=False)
    return ROOT if write_docs else ROOT / "test-output" / "readme"


def save(page: Page, out_root: Path, name: str, **shot: Any) -> Path:
    """A screenshot quantised to a 256-colour palette (text stays sharp, the file small)."""
    assert name in PICTURES, f"{name} is not a picture the README embeds"
    image = PIL.open(io.BytesIO(page.screenshot(**shot))).convert("RGB")
    path = out_root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=256).save(path, optimize=True)
    assert path.stat().st_size < MAX_BYTES, (name, path.stat().st_size)
    return path


def test_readme_screenshots_cover_every_embedded_picture() -> None:
    """The README's pictures are exactly the ones this module writes (none left stale)."""
    assert embedded_pictures() == set(PICTURES)


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh server (no other test's conversations in the sidebar) with the bundled paper."""
    root = tmp_path_factory.mktemp("readme-chat")
    with serving(root / "ws", root / "server.log") as url:
        upload(url, PAPER)
        yield url


def test_readme_screenshot_chat_and_pdf(page: Page, chat_server: str, out_root: Path) -> None:
    page.goto(f"{chat_server}/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill(QUESTION)
    box.press("Enter")
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    expect(turn.locator(".answer-text .fn-marker").first).to_be_visible()
    expect(turn.locator(".board .evidence .verdict").first).to_have_text("supported")
    page.mouse.move(0, 0)
    save(page, out_root, "docs/screenshots/chat-evidence.png")
    marker = turn.locator(".answer-text .fn-marker").first
    marker.click()
    dialog = page.get_by_role("dialog")
    expect(dialog.locator(".pdf-page[data-rendered] .pdf-highlight[role=mark]")).to_be_visible(
        timeout=30_000
    )
    save(page, out_root, "docs/screenshots/pdf-highlight.png")


def test_readme_screenshot_review(
    page: Page,
    review_server: tuple[str, str],  # noqa: F811 - the imported fixture
    out_root: Path,
) -> None:
    url, run_id = review_server
    page.goto(f"{url}/#/review/{run_id}")
    rows = page.locator(".review-claim")
    expect(rows.first).to_be_visible()
    first = rows.nth(0)
    first.locator(".claim-toggle").click()
    first.get_by_role("button", name="Show in the saved page").first.click()
    expect(first.locator("mark.snapshot-span")).to_be_visible()
    save(page, out_root, "docs/img/review-claim-snapshot.png")
    first.locator(".claim-toggle").focus()
    page.keyboard.press("a")
    expect(first.locator(".chip.decision-approve")).to_be_visible()
    first.locator(".claim-toggle").click()  # closed again
    for n in range(rows.count()):
        row = rows.nth(n)
        if row.locator(".chip.key-figure").count():
            row.locator(".claim-toggle").focus()
            page.keyboard.press("x")
            expect(row.locator(".chip.key-figure.ticked")).to_be_visible()
    conflicts = page.locator(".review-conflict")
    one, two = conflicts.nth(0), conflicts.nth(1)
    one.locator("input[type=radio]").first.check()
    one.get_by_label("Note", exact=True).fill("The second source counts lithium-ion only.")
    one.get_by_role("button", name="Save resolution").click()
    expect(one.locator(".chip.resolved")).to_be_visible()
    two.get_by_label("Keep both values side by side").check()
    two.get_by_role("button", name="Save resolution").click()
    expect(two.locator(".chip.resolved")).to_be_visible()
    page.locator("#conflicts-h").evaluate("h => h.scrollIntoView({block: 'start'})")
    page.mouse.move(0, 0)
    save(page, out_root, "docs/img/review-conflicts.png")
    # decide every origin the merge left undecided (sign-off waits for them too)
    origins = page.locator(".review-origin")
    for n in range(origins.count()):
        box = origins.nth(n)
        box.get_by_label("Reason").fill("Separate surveys.")
        box.get_by_role("button", name="Independent").click()
        expect(box.locator(".origin-decided")).to_have_text("decided: independent")
    sample = page.locator(".review-sample .page-link")
    for n in range(sample.count()):
        sample.nth(n).click()
    sign = page.locator("#sign-off")
    expect(sign).to_be_enabled()
    sign.click()
    expect(page.locator(".review-state")).to_have_text("signed off")
    expect(page.locator("#toasts .toast")).to_have_count(0, timeout=10_000)
    page.locator("#review-h1").evaluate("h => h.scrollIntoView({block: 'end'})")
    save(page, out_root, "docs/img/review-signed.png")


def test_readme_screenshot_graph(
    page: Page,
    movies_server: str,  # noqa: F811 - the imported fixture
    out_root: Path,
) -> None:
    _ask_movies(page, movies_server, ASK_AFTER)
    expect(page.locator("#graph-progress")).to_contain_text("2 of 2 sentences passed")
    expect(page.locator(".graph-table tbody tr.cited")).to_have_count(4)
    expect(page.locator("#graph-params dd")).to_have_text(['"Tom Hanks"'])
    page.mouse.move(0, 0)
    save(page, out_root, "docs/img/graph-answer.png")
