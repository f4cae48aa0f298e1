"""A scripted compose + judge model behind a real OpenAI-compatible HTTP server on loopback, for
the surface suite (issue 30). Not a model: it answers footnote's own prompts by rule, so every
surface can be fed one supported, one weak and one unsupported sentence through the real gate.

- compose (`compose_parts`): three parts, each quoting the evidence item it names — SUPPORTED,
  WEAK and UNSUPPORTED; a revision (`compose_cite`) repeats the supported sentence;
- judge (`judge.md`): "Yes" for SUPPORTED, "Maybe" (P = 0.5: weak) for WEAK, "No" for
  UNSUPPORTED; anything else (answerability, probes) "Yes".
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer

QUESTION = (
    "What recall@10 did hybrid retrieval reach? How does hybrid retrieval index each paragraph? "
    "How does hybrid retrieval fuse the rankings?"
)
SUPPORTED = "Hybrid retrieval reached a recall@10 of 0.74."
WEAK = "Hybrid retrieval indexes every paragraph with BM25 and dense vectors."
UNSUPPORTED = "Hybrid retrieval fuses the rankings with BM25."
PARTS = (
    (SUPPORTED, "Hybrid retrieval reached a recall@10 of 0.74"),
    (WEAK, "indexes every paragraph with BM25 and dense vectors"),
    (UNSUPPORTED, "fuses the rankings with reciprocal rank fusion"),
)
_ITEM = re.compile(r"^\[(E\d+)\] \([^)]*\) (.*)$", re.M)
_CARD = re.compile(r"^\[(C\d+)\] \(.*?\) (.*)$", re.M)


def _alias(prompt: str, quote: str) -> str:
    """The evidence item whose text holds `quote` ("none" when none shown does)."""
    return next((a for a, text in _ITEM.findall(prompt) if quote in text), "none")


def reply(messages: list[dict[str, Any]]) -> str:
    """The scripted reply to a chat request."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    last = str(messages[-1].get("content") or "")
    if "Reply with a JSON object." in last:
        return '{"probe_ok": true}'
    if "Is the claim fully supported by the passage?" in last:
        claim = last.split("CLAIM:", 1)[-1]
        return "Maybe" if WEAK in claim else "No" if UNSUPPORTED in claim else "Yes"
    if "You write one section of a research brief" in text:
        cards = _CARD.findall(text)
        claims = [{"text": a, "cards": [label]} for a, q in PARTS
                  for label in [next((lb for lb, snip in cards if q in snip), "")] if label]  # fmt: skip
        return json.dumps({"claims": claims})
    if 'Answer it as a list of "parts"' in text:
        parts = [{"quote": q, "cite": _alias(text, q), "answer": a} for a, q in PARTS]
        return json.dumps({"parts": parts})
    if '"cite"' in text:
        quote = PARTS[0][1]
        return json.dumps({"quote": quote, "cite": _alias(text, quote), "answer": SUPPORTED})
    return "Yes"


class ScriptedModel:
    """The server on a free loopback port; `url` is a footnote model URL (`openai+…`)."""

    def __init__(self) -> None:
        self.server = LoopbackServer(
            lambda _path, body: reply(body.get("messages") or [{}]),
            model="scripted",
            usage=lambda text: (10, len(text.split())),
        )
        self.url = self.server.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.server.bodies

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
