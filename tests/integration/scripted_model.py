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
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_a: object) -> None:
                return

            def _json(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                content = reply(body.get("messages") or [{}])
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for piece in (content, ""):
                        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0,
                                 "model": "scripted",
                                 "choices": [{"index": 0, "delta": {"content": piece} if piece else {},
                                              "finish_reason": None if piece else "stop"}]}  # fmt: skip
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                words = len(content.split())
                self._json({"id": "c", "object": "chat.completion", "created": 0, "model": "scripted",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": content}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": words,
                                      "total_tokens": 10 + words}})  # fmt: skip

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = int(self.httpd.server_address[1])
        self.url = f"openai+http://127.0.0.1:{port}/v1?model=scripted"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
