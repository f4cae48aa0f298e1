"""Web login in a real browser (issue #15): against a server with API keys, the app asks for a
key once, keeps it for the tab's session (reload included), sends it on every call (JSON, the
upload, the SSE stream, the PDF), and forgets it on sign-out; another user's key shows
another user's library."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import FAST_ENV, serving
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.integration
NOTES = "# Glacier notes\n\n## Results\n\nThe glacier retreated 41 metres in 2023.\n"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """`footnote serve` with two users' keys; yields its URL and the keys."""
    root = tmp_path_factory.mktemp("keyed")
    env = {**os.environ, **FAST_ENV, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    cli = [sys.executable, "-c", "from footnote.cli import main; main()"]
    keys = {}
    for user, group in (("alice", "team-a"), ("bob", "team-b")):
        out = subprocess.run([*cli, "keys", "add", user, "-g", group, "-w", str(root / "ws")],
                             env=env, capture_output=True, text=True, check=True)  # fmt: skip
        keys[user] = out.stdout.strip().splitlines()[-1]
    with serving(root / "ws", root / "server.log") as url:
        yield url, keys


def sign_in(page: Page, key: str) -> None:
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()


def test_sign_in_once_every_call_carries_the_key_sign_out(
    browser: Browser, keyed: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, keys = keyed
    page = browser.new_page(base_url=url)
    calls: list[tuple[str, str | None]] = []
    page.on("request", lambda r: calls.append((r.url, r.headers.get("authorization")))
            if "/v1/" in r.url and "/v1/health" not in r.url else None)  # fmt: skip
    page.goto("/#/library")
    sign_in(page, "fn_not-a-key")
    expect(page.get_by_role("alert")).to_have_text("That key was not accepted.")
    page.get_by_label("API key").fill(keys["alice"])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Library", level=1)).to_be_visible()

    notes = tmp_path / "glacier-notes.md"
    notes.write_text(NOTES)
    page.locator("#file-input").set_input_files([notes])
    row = page.locator(".upload-queue .upload-item[data-file='glacier-notes.md']")
    expect(row.locator(".upload-state")).to_have_text("Added", timeout=120_000)
    expect(page.get_by_role("table").locator("tr", has_text="Glacier notes")).to_be_visible()

    page.reload()  # kept for the tab's session: no second sign-in
    expect(page.get_by_role("heading", name="Library", level=1)).to_be_visible()
    page.goto("/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("How far did the glacier retreat in 2023?")
    box.press("Enter")
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)

    sent = [(u, a) for u, a in calls if "/v1/sessions?limit=1" not in u]
    assert sent and all(a == f"Bearer {keys['alice']}" for _u, a in sent), sent
    assert any("/events" in u for u, _a in sent) and any(
        u.endswith("/v1/sources") for u, _a in sent
    )

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('footnote.apiKey')") is None

    sign_in(page, keys["bob"])  # another user: not alice's library
    page.goto("/#/library")
    expect(page.get_by_role("heading", name="Library", level=1)).to_be_visible()
    expect(page.get_by_text("Glacier notes")).to_have_count(0)
    page.close()
