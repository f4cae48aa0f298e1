"""A slow OpenAI-compatible chat server (a real HTTP process on loopback) for the fault suite:
it streams a fixed answer word by word, `--delay` seconds apart, so a test can kill it, or the
footnote process using it, in the middle of a run. Not a model: the faults are what is tested."""

from __future__ import annotations

import argparse
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = "Hybrid retrieval reached a recall of 0.74 on the benchmark, ahead of BM25 at 0.61."


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--delay", type=float, default=0.3)
    args = ap.parse_args()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_a: object) -> None:
            pass

        def _json(self, body: dict[str, object]) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._json({"object": "list", "data": [{"id": "slow", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            words = ANSWER.split(" ")
            if not body.get("stream"):
                time.sleep(args.delay)
                self._json({"id": "c", "object": "chat.completion", "created": 0, "model": "slow",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": ANSWER}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": len(words),
                                      "total_tokens": 10 + len(words)}})  # fmt: skip
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for i, w in enumerate(words):
                piece = w if i == 0 else " " + w
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0,
                         "model": "slow", "choices": [{"index": 0, "delta": {"content": piece},
                                                       "finish_reason": None}]}  # fmt: skip
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(args.delay)
            last = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "slow",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # fmt: skip
            self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
