"""Issue #34 item 3 in a real browser: while an answer is still being checked, the chat shows the
passages found (marked as not yet checked) and the sentences that already passed; the answer's
checked board replaces the found one at the end.

A real `footnote serve` and the real ask pipeline (retrieval, cite composer, checks); the model is
the scripted compose + judge server on loopback (`tests/integration/scripted_model.py`), whose
judge is held on the second sentence until the test has looked — so "before the answer's end"
is a state the test waits for, not a race.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import FAST_ENV, serving, upload  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
import scripted_model
from live import PAPER
from scripted_model import QUESTION, SUPPORTED, WEAK, ScriptedModel

pytestmark = pytest.mark.integration


class Held:
    """The scripted model with its judge held on the weak sentence until `release`."""

    def __init__(self) -> None:
        self.judging_weak = threading.Event()
        self.release = threading.Event()
        self.original = scripted_model.reply

    def reply(self, messages: list[dict[str, Any]]) -> str:
        last = str(messages[-1].get("content") or "")
        if "Is the claim fully supported by the passage?" in last and WEAK in last:
            self.judging_weak.set()
            self.release.wait(120)
        return self.original(messages)


@pytest.fixture(scope="module")
def held_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Held]]:
    root = tmp_path_factory.mktemp("ask-stream")
    held = Held()
    scripted_model.reply = held.reply
    saved = dict(FAST_ENV)
    try:
        with ScriptedModel() as model:
            ws = root / "ws"
            ws.mkdir()
            (ws / "config.toml").write_text(
                f'[models.compose]\nurl = "{model.url}"\nexternal = false\n'
                f'[models.judge]\nurl = "{model.url}"\nexternal = false\n'
                '[ask]\nmode = "cite"\nuse_judge = true\n',
                encoding="utf-8",
            )
            for key in ("FOOTNOTE_ASK__MODE", "FOOTNOTE_ASK__USE_JUDGE"):
                FAST_ENV.pop(key)  # the scripted composer and judge, not extractive answers
            with serving(ws, root / "server.log") as url:
                FAST_ENV.update(saved)
                paper = root / "study.md"
                paper.write_text(PAPER, encoding="utf-8")
                upload(url, paper)
                yield url, held
                held.release.set()
    finally:
        FAST_ENV.update(saved)
        scripted_model.reply = held.original


def test_the_board_and_checked_sentences_show_before_the_answer_ends(
    page: Page, held_server: tuple[str, Held], shots: Path
) -> None:
    url, held = held_server
    page.goto(f"{url}/#/chat")
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill(QUESTION)
    box.press("Enter")
    turn = page.locator("article.turn.assistant").last
    found = turn.locator("[data-testid=evidence-found] .passage")
    expect(found.first).to_be_visible(timeout=90_000)
    expect(turn.locator(".board")).to_contain_text("Not checked yet")
    expect(turn.locator(".answer-text .sentence").first).to_contain_text(SUPPORTED, timeout=60_000)

    # the run is still going: the weak sentence is being judged, the answer has not ended
    assert held.judging_weak.is_set() and not held.release.is_set()
    expect(turn.locator(".board .chip.status")).to_have_count(0)
    expect(turn.locator(".answer-text .sentence")).to_have_count(1)
    expect(turn.locator(".answer-text .caret")).to_have_count(1)
    expect(found.filter(has_text="0.74").first).to_be_visible()
    turn.screenshot(path=str(shots / "chat-streaming.png"))

    held.release.set()
    expect(turn.locator(".board .chip.status")).to_have_text("Answered", timeout=60_000)
    expect(turn.locator("[data-testid=evidence-found]")).to_have_count(0)
    expect(turn.locator(".board .evidence").first).to_be_visible()
    weak = turn.locator(".answer-text .sentence.insufficient")
    expect(weak).to_contain_text(WEAK)
    texts = [s.inner_text() for s in turn.locator(".answer-text .sentence").all()]
    assert texts[0].startswith(SUPPORTED) and len(texts) == len(set(texts))
    turn.screenshot(path=str(shots / "chat-streamed-answer.png"))
