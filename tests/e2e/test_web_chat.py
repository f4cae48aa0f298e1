"""Chat in a real browser against the real server and pipeline: streaming, footnotes, the
evidence board, the PDF with the cited block highlighted, feedback, reload, resume."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from playwright.sync_api import Page, Request, Route, expect

pytestmark = pytest.mark.integration

QUESTION = "How are entities linked to the knowledge base in the literature graph?"


def ask(page: Page, question: str) -> None:
    """Start a new conversation and send a question from the composer."""
    page.goto("/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill(question)
    box.press("Enter")


def wait_for_answer(page: Page) -> Any:
    """The assistant turn once its evidence board is shown (the run has finished)."""
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    return turn


def test_answer_streams_with_footnotes_evidence_pdf_and_feedback(
    page: Page, paper: dict[str, Any], api: Any, shots: Path
) -> None:
    ask(page, QUESTION)
    turn = page.locator("article.turn.assistant").last
    # The pipeline's progress is shown while it works, not a silent wait.
    expect(turn.locator(".progress .step", has_text="searching 1 source")).to_be_visible(
        timeout=60_000
    )
    turn = wait_for_answer(page)
    markers = turn.locator(".answer-text .fn-marker")
    assert markers.count() >= 1
    sentences = turn.locator(".answer-text .sentence")
    assert sentences.count() >= 1

    # The evidence board: verdicts, quotes, pages, section paths and the support score.
    board = turn.locator(".board")
    expect(board.get_by_role("heading", name="Evidence")).to_be_visible()
    expect(board.locator("[data-testid=support-score]")).to_have_text(re.compile(r"^\d+%$"))
    first = board.locator(".evidence").first
    expect(first.locator(".verdict")).to_have_text(re.compile("supported|weak|unsupported"))
    expect(first.locator(".quote")).not_to_be_empty()
    expect(first.locator(".section-path")).not_to_be_empty()
    page.screenshot(path=str(shots / "chat-answer-evidence.png"))

    # Hover and keyboard focus both show the footnote's quote, page and section.
    marker = markers.first
    evidence_id = marker.get_attribute("data-evidence")
    assert evidence_id
    marker.hover()
    tip = page.locator("#fn-tip")
    expect(tip).to_be_visible()
    expect(tip.locator(".quote")).not_to_be_empty()
    expect(tip).to_contain_text(re.compile(r"p\. \d+"))
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden()
    marker.focus()
    expect(tip).to_be_visible()
    assert marker.get_attribute("aria-describedby") == "fn-tip"
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()

    # Clicking the footnote opens the PDF at the cited page with the block highlighted.
    block = api("GET", f"/v1/blocks/{evidence_id}")
    marker.click()
    dialog = page.get_by_role("dialog", name=block["source_title"])
    expect(dialog).to_be_visible()
    pdf_page = dialog.locator(f".pdf-page[data-page='{block['page']}'][data-rendered]")
    expect(pdf_page).to_be_visible(timeout=30_000)
    expect(dialog.locator(".pdf-page-label")).to_have_text(f"Page {block['page']} of 8")
    highlight = pdf_page.locator(".pdf-highlight[role=mark]")
    expect(highlight).to_be_visible()
    assert highlight.get_attribute("data-bbox") == ",".join(str(v) for v in block["bbox"])
    page_box, mark_box = pdf_page.bounding_box(), highlight.bounding_box()
    assert page_box and mark_box
    assert page_box["x"] <= mark_box["x"] and mark_box["width"] < page_box["width"]
    # The box sits where the bbox says, relative to the rendered page (PDF points x zoom).
    scale = float(pdf_page.get_attribute("data-scale") or 0)
    x0, y0 = block["bbox"][0], block["bbox"][1]
    assert abs((mark_box["x"] - page_box["x"]) - (x0 * scale - 3)) < 4
    assert abs((mark_box["y"] - page_box["y"]) - (y0 * scale - 3)) < 4
    page.screenshot(path=str(shots / "pdf-highlight.png"))
    page.keyboard.press("ArrowRight")
    expect(dialog.locator(".pdf-page-label")).to_have_text(f"Page {block['page'] + 1} of 8")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    # Feedback: a thumb, then an optional comment; both are stored with the run.
    turn.get_by_role("button", name="Helpful", exact=True).click()
    expect(turn.get_by_role("button", name="Helpful", exact=True)).to_have_attribute(
        "aria-pressed", "true"
    )
    turn.get_by_role("textbox", name="What could be better?").fill("Clear and well cited.")
    turn.get_by_role("button", name="Send").click()
    # the comment form closes once the comment is stored ("Thank you" already shows after the thumb)
    expect(turn.get_by_role("textbox", name="What could be better?")).to_be_hidden()
    expect(turn.get_by_role("status").filter(has_text="Thank you")).to_be_visible()
    session_id = page.url.rsplit("/", 1)[-1]
    messages = api("GET", f"/v1/sessions/{session_id}/messages")
    reply = next(m for m in messages if m["role"] == "assistant")
    trace = api("GET", f"/v1/runs/{reply['run_id']}/trace")
    assert [f["rating"] for f in trace["feedback"]][-1] == 1
    assert trace["feedback"][-1]["comment"] == "Clear and well cited."

    # Reload: the conversation is listed and its answer comes back from the store.
    count = sentences.count()
    page.reload()
    session = page.locator(f".session[data-session='{session_id}']")
    expect(session).to_have_class(re.compile("current"))
    expect(session.get_by_role("link")).to_have_attribute("aria-current", "page")
    turn = wait_for_answer(page)
    assert turn.locator(".answer-text .sentence").count() == count
    assert turn.locator(".answer-text .fn-marker").count() == markers.count()


def test_dropped_stream_resumes_with_last_event_id_without_duplicates(
    page: Page, paper: dict[str, Any], api: Any
) -> None:
    seen: list[dict[str, str]] = []
    cut = {"done": False}

    def flaky(route: Route, request: Request) -> None:
        seen.append(dict(request.headers))
        if cut["done"]:
            route.continue_()
            return
        # First connection: deliver the events up to the first answer sentence, then drop.
        cut["done"] = True
        response = route.fetch()
        frames = response.text().replace("\r\n", "\n").split("\n\n")
        first_delta = next(i for i, f in enumerate(frames) if "event: answer_delta" in f)
        partial = "\n\n".join(frames[: first_delta + 1]) + "\n\n"
        route.fulfill(status=200, headers=dict(response.headers), body=partial)

    page.route(re.compile(r"/v1/runs/[^/]+/events"), flaky)
    ask(page, QUESTION)
    turn = wait_for_answer(page)
    assert len(seen) >= 2, "the client did not reconnect"
    resumed = seen[1].get("last-event-id")
    assert resumed and resumed.isdigit() and int(resumed) > 0

    rendered = [s.inner_text().strip() for s in turn.locator(".answer-text .sentence").all()]
    session_id = page.url.rsplit("/", 1)[-1]
    messages = api("GET", f"/v1/sessions/{session_id}/messages")
    answer = next(m for m in messages if m["role"] == "assistant")["data"]["answer"]
    assert len(rendered) == len(answer["sentences"])
    for text, sentence in zip(rendered, answer["sentences"], strict=True):
        assert text.startswith(sentence["text"][:40])
    assert len(set(rendered)) == len(rendered), "a sentence was shown twice"
    progress = [s.inner_text() for s in turn.locator(".progress .step").all()]
    assert len(progress) == len(set(progress)), "a status event was shown twice"


def test_refusal_shows_its_reason_and_the_nearest_passages(
    page: Page, paper: dict[str, Any], shots: Path
) -> None:
    ask(page, "What is the boiling point of mercury in Kelvin?")
    turn = page.locator("article.turn.assistant").last
    board = turn.locator(".board")
    expect(board.get_by_role("heading", name="Nearest passages")).to_be_visible(timeout=90_000)
    expect(board.locator(".chip.status")).to_have_text("No evidence")
    expect(turn.locator(".refusal")).to_contain_text("nothing relevant was found")
    nearest = board.locator(".nearest .evidence")
    assert nearest.count() >= 1
    expect(nearest.first.locator(".quote")).not_to_be_empty()
    expect(nearest.first.get_by_role("button", name=re.compile(r"Open page \d+"))).to_be_visible()
    assert turn.locator(".answer-text .fn-marker").count() == 0
    page.screenshot(path=str(shots / "chat-refusal.png"))


def test_conversations_can_be_renamed_and_deleted(page: Page, api: Any) -> None:
    session = api("POST", "/v1/sessions", {"title": "Scratch"})
    page.goto(f"/#/chat/{session['id']}")
    item = page.locator(f".session[data-session='{session['id']}']")
    item.get_by_role("button", name="Rename: Scratch").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("textbox").fill("Entity linking notes")
    dialog.get_by_role("button", name="Rename").click()
    expect(item.get_by_role("link")).to_have_text("Entity linking notes")
    expect(page.locator(".conversation-title")).to_have_text("Entity linking notes")
    assert api("GET", f"/v1/sessions/{session['id']}")["title"] == "Entity linking notes"

    item.get_by_role("button", name="Delete: Entity linking notes").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"#/chat$"))
    expect(page.locator(f".session[data-session='{session['id']}']")).to_have_count(0)
    assert all(s["id"] != session["id"] for s in api("GET", "/v1/sessions"))


def test_a_question_sent_while_the_conversation_list_loads_is_not_lost(
    page: Page, paper: dict[str, Any]
) -> None:
    """The composer is on screen before the conversation list has loaded; Enter then must send
    the question (it used to submit the form natively: the page reloaded, the question lost)."""
    held: list[Route] = []
    page.route("**/v1/sessions", lambda route: held.append(route)
               if route.request.method == "GET" and not held else route.continue_())  # fmt: skip
    page.goto("/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("What is the boiling point of mercury in Kelvin?")
    box.press("Enter")
    page.wait_for_timeout(300)  # a native submit would have reloaded the page by now
    assert held, "the conversation list was not requested"
    held[0].continue_()
    expect(page.locator("article.turn.user").last).to_contain_text("boiling point of mercury")
    expect(page).to_have_url(re.compile(r"#/chat/ses_"))
