"""The research form in a real browser: a question, the proposed outline edited (a section
removed, a title changed) and confirmed, progress while it runs, then the brief."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import serving  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

from footnote.eval.fixture_web import FixtureWeb

pytestmark = pytest.mark.integration
Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"


@pytest.fixture(scope="module")
def research_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("research-web")
    web = FixtureWeb()
    ws = root / "ws"
    ws.mkdir()
    (ws / "config.toml").write_text(
        f'[research]\nsearch_url = "searxng+{web.base}"\nallowed_domains = ["example"]\n'
        'allow_loopback = true\nresolve = {"*.example" = "127.0.0.1"}\nwriter = "extractive"\n'
        'select = "rules"\n[models.judge]\nurl = ""\n',
        encoding="utf-8",
    )
    try:
        with serving(ws, root / "server.log") as url:
            yield url
    finally:
        web.stop()


def test_outline_edit_confirm_and_brief(page: Page, research_server: str) -> None:
    page.goto(f"{research_server}/#/research")
    page.get_by_label("Research question").first.fill(Q)
    page.locator("#research-propose").click()
    items = page.locator(".outline-item")
    expect(items).to_have_count(6)
    for n in range(2, 6):  # keep the first two sections
        items.nth(n).get_by_label("Keep this section").uncheck()
    items.nth(0).get_by_label("Section title").fill("How big it is")
    page.locator("#research-confirm").click()
    expect(page.get_by_text("Brief ready.")).to_be_visible(timeout=60_000)
    brief = page.locator("#research-result article")
    expect(brief.get_by_role("heading", name="How big it is")).to_be_visible()
    expect(brief.get_by_role("heading", name="Checklist")).to_be_visible()
    expect(page.locator("#research-progress li").first).to_contain_text("sq-size")
    expect(brief.get_by_role("heading", name="Drivers and constraints")).to_have_count(0)
