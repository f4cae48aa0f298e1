"""The web app's conversation controls in a real browser: the sources a conversation searches
(one paper or the library, kept with the conversation), agent mode, a rating that is still
shown after a reload, and failed uploads that can be dismissed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import upload
from playwright.sync_api import Page, Route, expect

pytestmark = pytest.mark.integration

NOTES = """# Harbour survey

## Findings

The harbour survey counted 412 moored sailing boats in the inner basin.
"""


@pytest.fixture(scope="module")
def notes(server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("notes") / "harbour-survey.md"
    path.write_text(NOTES, encoding="utf-8")
    return upload(server, path)


def test_a_conversation_searches_the_chosen_source(
    page: Page, paper: dict[str, Any], notes: dict[str, Any], shots: Path
) -> None:
    page.goto("/#/chat")
    scope = page.get_by_role("combobox", name="Search in")
    expect(scope.locator("option", has_text="Whole library")).to_have_count(1)
    expect(scope.locator(f"option[value='{notes['id']}']")).to_have_count(1)
    scope.select_option(notes["id"])
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("How many moored sailing boats did the harbour survey count?")
    with page.expect_request("**/messages") as sent:
        box.press("Enter")
    body = json.loads(sent.value.post_data or "{}")
    assert body["sources"] == [notes["id"]] and body["mode"] == "ask"
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    expect(turn.locator(".answer-text")).to_contain_text("412")
    page.screenshot(path=str(shots / "chat-scope.png"))

    # the choice stays with the conversation
    page.reload()
    expect(page.get_by_role("combobox", name="Search in")).to_have_value(notes["id"])
    page.get_by_role("combobox", name="Search in").select_option("")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("What does the literature graph connect?")
    with page.expect_request("**/messages") as sent:
        box.press("Enter")
    assert json.loads(sent.value.post_data or "{}")["sources"] == []
    expect(page.locator("article.turn.assistant").last.locator(".board")).to_be_visible(
        timeout=90_000
    )


def test_agent_mode_is_sent_with_the_question(page: Page, paper: dict[str, Any]) -> None:
    page.goto("/#/chat")
    agent = page.get_by_role("checkbox", name="Agent")
    expect(agent).not_to_be_checked()
    agent.check()
    bodies: list[dict[str, Any]] = []

    def capture(route: Route) -> None:
        # what the page sends is checked here; the agent run itself is tested on the server
        bodies.append(json.loads(route.request.post_data or "{}"))
        route.fulfill(status=503, content_type="application/json", body=json.dumps(
            {"error": {"code": "unavailable", "message": "agent model busy", "detail": None}}))  # fmt: skip

    page.route("**/v1/sessions/*/messages", capture)
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("Which entities does the literature graph link?")
    box.press("Enter")
    expect(page.get_by_text("agent model busy")).to_be_visible()
    assert bodies and bodies[0]["mode"] == "agent"
    page.unroute("**/v1/sessions/*/messages")
    page.reload()
    expect(page.get_by_role("checkbox", name="Agent")).to_be_checked()


def test_a_rating_is_shown_after_reload(page: Page, paper: dict[str, Any]) -> None:
    page.goto("/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("How are entities linked in the literature graph?")
    box.press("Enter")
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    turn.get_by_role("button", name="Not helpful", exact=True).click()
    expect(turn.get_by_text("Thank you for the feedback.")).to_be_visible()
    page.reload()
    turn = page.locator("article.turn.assistant").last
    expect(turn.get_by_role("button", name="Not helpful", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(turn.get_by_role("button", name="Helpful", exact=True)).to_have_attribute(
        "aria-pressed", "false"
    )
    expect(turn.get_by_text("Your rating is saved.")).to_be_visible()


def test_failed_uploads_can_be_dismissed(page: Page, tmp_path: Path) -> None:
    broken = tmp_path / "scrambled.pdf"
    broken.write_bytes(b"not a PDF, just bytes")
    page.goto("/#/library")
    page.locator("#file-input").set_input_files([broken])
    row = page.locator(".upload-queue .upload-item[data-file='scrambled.pdf']")
    expect(row).to_contain_text("Could not add", timeout=60_000)
    row.get_by_role("button", name="Dismiss: scrambled.pdf").click()
    expect(row).to_have_count(0)
