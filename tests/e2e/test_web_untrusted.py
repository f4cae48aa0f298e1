"""Document text is untrusted in the browser (#31 finding 10): a block holding a Markdown image
becomes part of a checked answer, yet the reader's browser never fetches it (no `<img>`, and
the app's Content-Security-Policy allows no remote image), and the app still works under it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import serving, upload
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.integration


class Pixel:
    """A loopback server counting requests for a tracking pixel."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        pixel = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_a: Any) -> None:
                return

            def do_GET(self) -> None:
                pixel.hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/gif")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def pixel() -> Iterator[Pixel]:
    p = Pixel()
    yield p
    p.httpd.shutdown()
    p.httpd.server_close()


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own: the session's shared one keeps its library as other tests expect."""
    root = tmp_path_factory.mktemp("untrusted")
    with serving(root / "ws", root / "server.log") as url:
        yield url


def test_an_image_in_document_text_is_never_loaded(
    page: Page, own_server: str, pixel: Pixel, tmp_path: Path
) -> None:
    src = f"http://localhost:{pixel.port}/pixel"
    notes = tmp_path / "tracker-notes.txt"
    notes.write_text(
        f"Tracker survey\n\nThe ZEBRAQUARTZ tracker weighs 4417 grams ![seen]({src}) in the survey.\n",
        encoding="utf-8",
    )
    source = upload(own_server, notes)
    page.goto(own_server + "/#/chat")
    page.get_by_role("combobox", name="Search in").select_option(source["id"])
    box = page.get_by_role("textbox", name="Ask about your papers")
    box.fill("How much does the ZEBRAQUARTZ tracker weigh?")
    box.press("Enter")
    turn = page.locator("article.turn.assistant").last
    expect(turn.locator(".board .evidence").first).to_be_visible(timeout=90_000)
    expect(turn.locator(".answer-text")).to_contain_text("4417")
    expect(turn.locator(".answer-text")).to_contain_text("[image: seen]")
    assert page.locator("img[src*='localhost']").count() == 0
    page.wait_for_timeout(500)
    assert pixel.hits == []
