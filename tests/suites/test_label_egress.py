"""Licence-label suite (issue #17): a `no-external-model` source goes through every stage of a
research run — library search, the licensed database, card selection, synthesis, the support
judge, same-story attribution, the brief and its exports — while every model role that can be
bound to a remote model (`understand`, `compose`, `judge`, and `embed` for a second library) is
bound to an OpenAI-compatible server on loopback, marked external. The server's request log
must hold 0 bytes of the labelled text; an unlabelled control source in the same run must
reach it (so the zero is not a server nobody called). Real pipeline, real HTTP, real SQLite."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from openai_recorder import Recorder
from suite_support import tally

from footnote.eval.fixture_web import FixtureWeb
from footnote.pipelines.research.markdown import brief_markdown
from footnote.serialize import brief_to_dict
from footnote.workspace import Workspace
from footnote.workspace.research import (
    confirm_outline,
    research_store,
    run_research,
    start_research,
)

pytestmark = pytest.mark.integration
T = tally("label_egress")

LABELLED = (
    "# Orvanta client memo\n\n"
    "The Veldmark battery recycling market was worth EUR 731 million in 2023 according to the "
    "Orvanta internal survey of recyclers.\n\n"
    "Orvanta expects the Veldmark battery recycling market to grow by 17.3% a year until 2030, "
    "driven by the quellfast collection scheme.\n"
)
CONTROL = (
    "# Public digest\n\n"
    "The Veldmark battery recycling market size reached EUR 640 million in 2023 according to the "
    "public digest of recyclers.\n\n"
    "The public digest expects the Veldmark battery recycling market to grow by 9.1% a year "
    "until 2030.\n"
)
QUESTION = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"
LICENSED_TEXT = (
    "Licensed analysis: the Veldmark battery recycling market will grow by 14.6% a year, "
    "Zentrivo estimates, with collection rates rising to 58% by 2026."
)


WORD = re.compile(r"\w+(?:[.,]\w+)*%?")


def shingles(text: str, n: int = 4) -> set[str]:
    words = WORD.findall(text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def _public_shingles() -> set[str]:
    """Shingles of every unlabelled text the run may legitimately send (the control, the
    question, the fixture web): a labelled shingle that is also one of these proves nothing."""
    from footnote.eval.fixture_web import DATA

    out = shingles(CONTROL) | shingles(QUESTION)
    for page in DATA.rglob("*.html"):
        out |= shingles(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))
    return out


def leaked(text: str, sent: list[str]) -> int:
    """Bytes of `text` found in what was sent: its own 4-word shingles (none that an unlabelled
    text shares) that occur in any request, each counted once."""
    hay = " ".join(" ".join(WORD.findall(s.lower())) for s in sent)
    own = shingles(text) - (_public_shingles() if text is not CONTROL else set())
    return sum(len(s) for s in own if s in hay)


class Licensed:
    """A licensed-database API on loopback (the LicensedDatabase adapter's format)."""

    def __init__(self) -> None:
        doc = {"id": "lic-9", "title": "Veldmark Recycling Monitor", "text": LICENSED_TEXT,
               "published_at": "2024-07-01", "url": "https://licensed.example/doc/lic-9"}  # fmt: skip
        body = json.dumps({"documents": [doc]}).encode()

        class H(BaseHTTPRequestHandler):
            def log_message(self, *_a: Any) -> None:
                return

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Recorder, Licensed, FixtureWeb]]:
    rec, lic, web = Recorder(), Licensed(), FixtureWeb()
    yield rec, lic, web
    rec.stop()
    lic.stop()
    web.stop()


def test_no_labelled_byte_reaches_an_external_model(
    tmp_path: Path, servers: tuple[Recorder, Licensed, FixtureWeb], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec, lic, web = servers
    monkeypatch.setenv("LIC_SUITE_KEY", "k")
    external = {"url": rec.url}
    ws = Workspace.open(tmp_path / "ws", overrides={
        "models": {"understand": external, "compose": external, "judge": external,
                   "embed": {"url": "local:wordllama"}},
        "research": {"search_url": f"searxng+{web.base}", "allowed_domains": ["example"],
                     "allow_loopback": True, "resolve": {"*.example": "127.0.0.1"},
                     "select": "model", "writer": "model", "licensed_url": lic.base,
                     "licensed_api_key_env": "LIC_SUITE_KEY"},
    })  # fmt: skip
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "orvanta.md").write_text(LABELLED, encoding="utf-8")
    (docs / "digest.md").write_text(CONTROL, encoding="utf-8")
    ws.ingest([docs / "orvanta.md"], labels=("no-external-model",))
    ws.ingest([docs / "digest.md"])
    run_id, _outline = start_research(ws, QUESTION)
    items = [i for i in json.loads(json.dumps(research_store(ws).get_artifact(run_id, "outline")))["items"]
             if i["id"] in ("size", "growth")]  # fmt: skip
    confirm_outline(ws, run_id, {"items": items})

    async def go() -> list[Any]:
        return [e async for e in run_research(ws, run_id)]

    import asyncio

    events = asyncio.run(go())
    brief = events[-1].brief
    exported = [brief_markdown(brief), json.dumps(brief_to_dict(brief))]
    sent = rec.prompts()

    # the labelled sources were in every stage
    labelled_cards = [c for c in brief.cards if "no-external-model" in c.labels]
    stages = {
        "search": any("Orvanta" in c.snippet for c in labelled_cards),
        "licensed": any("Zentrivo" in c.snippet for c in labelled_cards),
        "cards": bool(labelled_cards),
        "synthesis": any(i in {c.id for c in labelled_cards} for s in brief.sections
                         for cl in s.claims for i in cl.card_ids),
        "judge": any(set(s.bound_cards) & {c.id for c in labelled_cards} for s in brief.sections),
        "export": all("Orvanta" in e for e in exported),
    }  # fmt: skip
    assert all(stages.values()), stages
    # nothing of it left the process; the unlabelled control did (the server was used)
    bytes_out = leaked(LABELLED, sent) + leaked(LICENSED_TEXT, sent)
    control_out = leaked(CONTROL, sent)
    T.add(tried=len(stages), blocked=len(stages) if bytes_out == 0 else 0, lost=bytes_out)
    print(f"\nlabel egress: labelled bytes sent {bytes_out}, control bytes sent {control_out}, "
          f"{len(rec.requests)} requests to the external model")  # fmt: skip
    assert bytes_out == 0
    assert control_out > 0 and "orvanta" not in " ".join(sent).lower()
    # the refusals are visible: notes on the sections that used the labelled cards
    notes = " ".join(n for s in brief.sections for n in s.notes)
    assert "LicenceRefused" in notes or "judge not used" in notes or "cards' own sentences" in notes
    ws.close()


def test_an_external_embedder_never_sees_labelled_text(
    tmp_path: Path, servers: tuple[Recorder, Licensed, FixtureWeb]
) -> None:
    """The search stage with `embed` bound to the external server: the labelled document is
    refused before anything is sent; the control is embedded there."""
    rec, _lic, _web = servers
    before = len(rec.requests)
    ws = Workspace.open(tmp_path / "ws2", overrides={"models": {"embed": {"url": rec.url}}})
    docs = tmp_path / "docs2"
    docs.mkdir()
    (docs / "orvanta.md").write_text(LABELLED, encoding="utf-8")
    (docs / "digest.md").write_text(CONTROL, encoding="utf-8")
    refused = ws.ingest([docs / "orvanta.md"], labels=("no-external-model",))
    assert [r.outcome for r in refused.results] == ["failed"]
    assert "no-external-model" in str(refused.failed[0])
    assert not ws.ingest([docs / "digest.md"]).failed
    sent = [json.dumps(b) for b in rec.requests[before:]]
    bytes_out = leaked(LABELLED, sent)
    T.add(tried=1, blocked=int(bytes_out == 0), lost=bytes_out)
    assert bytes_out == 0 and leaked(CONTROL, sent) > 0
    ws.close()
