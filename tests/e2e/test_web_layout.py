"""Language (English / Chinese), phone width, dark theme and keyboard access, in a real browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from playwright.sync_api import Browser, BrowserContext, Page, expect

pytestmark = pytest.mark.integration

QUESTION = "Which node types does the literature graph contain?"


@pytest.fixture(scope="module")
def answered(browser: Browser, base_url: str, paper: dict[str, Any]) -> str:
    """A conversation with one finished answer; returns its URL."""
    context = browser.new_context(base_url=base_url, locale="en-US")
    page = context.new_page()
    page.goto("/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill(QUESTION)
    box.press("Enter")
    expect(page.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    url = page.url
    context.close()
    return url


@pytest.fixture()
def make_context(browser: Browser, base_url: str) -> Iterator[Any]:
    opened: list[BrowserContext] = []

    def make(**options: Any) -> Page:
        context = browser.new_context(base_url=base_url, **options)
        opened.append(context)
        return context.new_page()

    yield make
    for context in opened:
        context.close()


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1"))


def test_chinese_interface_follows_the_browser_and_can_be_switched(
    make_context: Any, answered: str, shots: Path
) -> None:
    page = make_context(locale="zh-CN", viewport={"width": 1440, "height": 900})
    page.goto(answered)
    expect(page.get_by_role("link", name="文献库")).to_be_visible()
    expect(page.get_by_role("textbox", name="就你的论文提问…")).to_be_visible()
    board = page.locator(".board").last
    expect(board.get_by_role("heading", name="证据")).to_be_visible()
    expect(board.locator(".verdict").first).to_have_text("支持")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.screenshot(path=str(shots / "chat-chinese.png"))

    page.get_by_role("combobox", name="语言").select_option("en")
    expect(page.get_by_role("link", name="Library")).to_be_visible()
    page.reload()  # the choice is remembered
    expect(page.get_by_role("link", name="Library")).to_be_visible()


def test_phone_width_is_usable(make_context: Any, answered: str, shots: Path) -> None:
    page = make_context(
        locale="en-US",
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        reduced_motion="reduce",
    )
    page.goto(answered)
    expect(page.locator(".board .evidence").first).to_be_visible(timeout=30_000)
    assert no_horizontal_scroll(page)
    sessions = page.get_by_role("navigation", name="Conversations")
    toggle = page.get_by_role("button", name="Conversations")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.screenshot(path=str(shots / "phone-chat.png"))
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(sessions.get_by_role("link", name="New conversation")).to_be_in_viewport()
    page.screenshot(path=str(shots / "phone-sessions.png"))
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.goto("/#/library")
    expect(page.get_by_role("table")).to_be_visible()
    assert no_horizontal_scroll(page)
    page.screenshot(path=str(shots / "phone-library.png"))


def test_dark_theme_and_keyboard(make_context: Any, answered: str, shots: Path) -> None:
    page = make_context(
        locale="en-US", color_scheme="dark", viewport={"width": 1280, "height": 820}
    )
    page.goto(answered)
    expect(page.locator(".board .evidence").first).to_be_visible(timeout=30_000)
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background != "rgb(247, 246, 242)", "prefers-color-scheme: dark is ignored"
    page.screenshot(path=str(shots / "chat-dark.png"))

    # Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # Every button and form control has an accessible name.
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('button, select, textarea, input:not([type=file])')]
            .filter(el => !el.hidden && el.offsetParent !== null)
            .filter(el => !(el.getAttribute('aria-label') || el.textContent.trim()
                            || el.labels?.length))
            .map(el => el.outerHTML.slice(0, 80))"""
    )
    assert unnamed == []
    # Tab order reaches a footnote marker, and focusing it shows its tooltip.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('fn-marker')"):
            break
    else:
        pytest.fail("no footnote marker is reachable with Tab")
    expect(page.locator("#fn-tip")).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog").locator(".pdf-page[data-rendered]")).to_be_visible(
        timeout=30_000
    )
