"""The research page in a real browser against a real server and the fixture web: a question,
a budget and a chosen library paper; the proposed outline edited (a section removed, one
renamed, two reordered, one added) and confirmed; the live view per sub-question (evidence
cards, budget used, stop reason); the brief with its link into Review; the run among the
user's briefs. Without a web provider the page offers no web search."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import serving, upload  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

from footnote.eval.fixture_web import FixtureWeb

pytestmark = pytest.mark.integration
Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"
NOTE = (
    "# Veldmark recycling notes\n\n"
    "Our own survey puts Veldmark's battery recycling market at 2.4 billion euros in 2024.\n\n"
    "The survey expects the market to grow by 14% a year until 2030.\n"
)
OTHER = "# Unrelated memo\n\nThe canteen will serve soup on Fridays from March.\n"


STATES_SEEN = """
window.sqStatesSeen = [];
new MutationObserver((records) => {
  for (const r of records) for (const node of r.addedNodes) {
    if (node.nodeType !== 1) continue;
    for (const chip of node.querySelectorAll(".sq-state")) {
      const card = r.target.closest ? r.target.closest(".sq-card") : null;
      if (card) window.sqStatesSeen.push([card.dataset.sq, chip.textContent.trim()]);
    }
  }
}).observe(document, { subtree: true, childList: true });
"""
"""Records the state chip of every sub-question card each time the card is drawn."""


WIDEST = """
[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 8).map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)
"""
"""The elements that stick out past the window's right edge (for the failure message)."""


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


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


@pytest.fixture(scope="module")
def library(research_server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("papers")
    out = {}
    for name, text in (("veldmark-notes.md", NOTE), ("canteen.md", OTHER)):
        (folder / name).write_text(text, encoding="utf-8")
        out[name] = upload(research_server, folder / name)["id"]
    return out


def test_outline_budget_sources_live_view_and_review_link(
    page: Page, research_server: str, library: dict[str, str], shots: Path
) -> None:
    page.add_init_script(STATES_SEEN)
    page.goto(f"{research_server}/#/research")
    page.get_by_label("Research question").first.fill(Q)
    page.locator("#research-budget-tokens").fill("6000")
    page.locator("#research-budget-minutes").fill("3")
    expect(page.locator("#research-web")).to_be_checked()  # a provider is configured
    page.get_by_label("Only the papers I pick").check()
    page.locator("#research-papers").get_by_label("Veldmark recycling notes").check()
    page.screenshot(path=str(shots / "research-form.png"), full_page=True)
    page.locator("#research-propose").click()

    items = page.locator(".outline-item")
    expect(items).to_have_count(6)
    for _ in range(3):  # keep the first three sections
        items.nth(3).get_by_role("button", name="Remove section").click()
    expect(items).to_have_count(3)
    items.nth(0).get_by_label("Section title").fill("How big it is")
    items.nth(2).get_by_role("button", name="Move section up").click()  # third before second
    page.locator("#research-add-section").click()
    expect(items).to_have_count(4)
    items.nth(3).get_by_label("Section title").fill("Our own survey")
    items.nth(3).get_by_label("What the section must answer").fill(
        "What does our own survey say about the recycling market?"
    )
    titles = [items.nth(n).get_by_label("Section title").input_value() for n in range(4)]
    assert titles[0] == "How big it is" and titles[3] == "Our own survey"
    page.screenshot(path=str(shots / "research-outline.png"), full_page=True)
    page.locator("#research-confirm").click()

    cards = page.locator(".sq-card")
    expect(cards).to_have_count(4, timeout=30_000)
    expect(page.get_by_text("Brief ready.")).to_be_visible(timeout=90_000)
    seen = page.evaluate("window.sqStatesSeen")  # every state each card went through, in order
    by_card: dict[str, list[str]] = {}
    for sq, text in seen:
        by_card.setdefault(sq, []).append(text)
    assert len(by_card) == 4
    for states in by_card.values():  # drawn as the events came: waiting → investigating → stop
        assert states[0] == "waiting" and "investigating" in states, states
        assert states.index("investigating") < len(states) - 1
    # the live view per sub-question: evidence found, budget used, why it stopped
    expect(cards.first).to_contain_text("How big it is")
    for n in range(4):
        assert cards.nth(n).locator(".sq-state").inner_text() in (
            "done", "token budget spent", "call budget spent", "time budget spent",
            "search budget spent", "fetch budget spent",
        )  # fmt: skip
        expect(cards.nth(n).locator(".sq-use")).to_contain_text("tokens")
    found = [int(cards.nth(n).locator(".sq-cards").inner_text()) for n in range(4)]
    assert sum(found) > 0
    expect(cards.nth(3)).to_contain_text("Our own survey")
    expect(page.locator("#research-run-budget")).to_contain_text("6,000 tokens")
    review = page.locator("#research-review")
    run_id = page.url.rsplit("/", 1)[-1]
    expect(review).to_have_attribute("href", f"#/review/{run_id}")
    brief = page.locator("#research-result article")
    expect(brief.get_by_role("heading", name="How big it is")).to_be_visible()
    expect(brief.get_by_role("heading", name="Checklist")).to_be_visible()
    expect(brief.get_by_role("heading", name="Drivers and constraints")).to_have_count(0)
    mine = page.locator(f'.research-run[data-run="{run_id}"]')
    expect(mine.locator(".review-link")).to_be_visible()
    page.screenshot(path=str(shots / "research-live.png"), full_page=True)

    run = _get(f"{research_server}/v1/research/{run_id}")
    assert run["options"]["budget_tokens"] == 6000 and run["options"]["budget_minutes"] == 3
    assert run["options"]["source_ids"] == [library["veldmark-notes.md"]]
    order = [i["title"] for i in run["outline"]["items"]]
    assert order[0] == "How big it is" and order[3] == "Our own survey" and len(order) == 4
    library_cards = [
        c for c in _get(f"{research_server}/v1/research/{run_id}/cards") if c["block_id"]
    ]
    assert library_cards and all(
        c["source_id"] == library["veldmark-notes.md"] for c in library_cards
    )

    # reopened later, the run's page replays the same view from its stream
    page.goto(f"{research_server}/#/research")
    page.locator(f'.research-run[data-run="{run_id}"] .run-question').click()
    expect(page.locator(".sq-card")).to_have_count(4, timeout=30_000)
    expect(page.locator("#research-review")).to_be_visible(timeout=30_000)
    page.locator("#research-result article").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "research-brief.png"))
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: one column, nothing wider
    page.locator(".research-live").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "research-phone.png"))
    fits = page.evaluate("document.querySelector('main').scrollWidth <= window.innerWidth")
    assert fits, page.evaluate(WIDEST)
    for section in ("Chat", "Library", "Research", "Review", "Graph"):  # the top bar fits too
        expect(page.locator(".nav").get_by_role("link", name=section)).to_be_in_viewport(ratio=1)
    page.set_viewport_size({"width": 1440, "height": 900})
    # the Chinese interface names states, stop reasons and coverage in Chinese
    page.locator(".lang-select").select_option("zh")
    expect(page.locator(".sq-card")).to_have_count(4, timeout=30_000)
    expect(page.locator("#research-review")).to_be_visible(timeout=30_000)
    for text in page.locator(".sq-card .sq-state").all_inner_texts():
        assert text in (
            "完成",
            "Token 预算用尽",
            "调用预算用尽",
            "时间预算用尽",
            "检索预算用尽",
            "抓取预算用尽",
        )
    expect(page.locator(".research-live h2")).to_have_text("各子问题进度")
    page.screenshot(path=str(shots / "research-live-zh.png"))
    page.locator(".lang-select").select_option("en")
    mine.locator(".review-link").click()
    expect(page).to_have_url(f"{research_server}/#/review/{run_id}")


def test_no_web_search_offered_without_a_provider(
    page: Page, tmp_path_factory: pytest.TempPathFactory, shots: Path
) -> None:
    root = tmp_path_factory.mktemp("research-noweb")
    (root / "ws").mkdir()
    (root / "ws" / "config.toml").write_text('[models.judge]\nurl = ""\n', encoding="utf-8")
    with serving(root / "ws", root / "server.log") as url:
        page.goto(f"{url}/#/research")
        expect(page.locator("#research-no-web")).to_be_visible()
        expect(page.locator("#research-web")).to_have_count(0)
        page.get_by_label("Research question").first.fill(Q)
        page.locator("#research-propose").click()
        expect(page.get_by_role("alert")).to_contain_text("upload papers")
        page.screenshot(path=str(shots / "research-no-web.png"), full_page=True)
