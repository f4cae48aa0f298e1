"""Ingestion fairness (#31): user A's small upload while user B floods the server with hostile files.

A real `footnote serve` process on loopback (SQLite workspace, the WordLlama embedder, no LLM:
ingestion is the parser and the embedder) with two keyed users. User A uploads a one-page
document (a different one each time, about 3,000 characters) `--uploads` times, one after the
other, and times each from the POST to `ready`: first on the idle server (the baseline, same
process, same run), then while user B keeps uploading hostile files without waiting: a 96 KB
`.txt` that is one paragraph of short lines, and a DOCX whose `word/document.xml` inflates to
about 100 MB (built here). Printed: A's p50 and p95 idle and loaded, the loaded/idle ratios
(target: p95 within 2x), and what happened to B's files.

    .venv/bin/python bench/ingest_fairness.py [--uploads 24] [--workers 2] [--flood 400]
                                              [--file-timeout 0]
"""

from __future__ import annotations

import argparse
import io
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import httpx

CONFIG = """[models.embed]
url = "local:wordllama"

[models.summarise]
url = ""

[models.judge]
url = ""

[ask]
mode = "extractive"
use_judge = false
"""
LOREM = (
    "Field notes on the survey of river otters record the counts at each station, the water "
    "temperature and the time of day, with remarks on the weather and the observers present. "
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_page(n: int) -> bytes:
    """A one-page markdown document, different for each `n`."""
    paras = [f"Station {n}-{i}: {LOREM * 2}" for i in range(8)]
    return (f"# Survey sheet {n}\n\n" + "\n\n".join(paras) + "\n").encode()


def hostile_txt(n: int) -> bytes:
    """96 KB of short lines with no blank line: one paragraph."""
    return ("\n".join(f"w{n:04d}{i:06d}" for i in range(96_000 // 12)) + "\n").encode()


def hostile_docx(n: int) -> bytes:
    """A small DOCX whose document.xml inflates to about 100 MB."""
    run = "<w:p><w:r><w:t>ab</w:t></w:r></w:p>"
    body = run * (100_000_000 // len(run))
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats'
        f'.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>{n}</w:t></w:r></w:p>{body}'
        "</w:body></w:document>"
    )
    types = (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.'
        'openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="'
        'application/xml"/><Override PartName="/word/document.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats'
        '.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
        'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
        'Target="word/document.xml"/></Relationships>'
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", types)
        z.writestr("_rels/.rels", rels)
        z.writestr("word/document.xml", xml)
    return buf.getvalue()


class Server:
    """`footnote serve` on a fresh workspace with keys for users a and b."""

    def __init__(self, root: Path, workers: int, file_timeout_s: float) -> None:
        from footnote.workspace import Workspace

        ws_dir = root / "ws"
        ws_dir.mkdir(parents=True)
        (ws_dir / "config.toml").write_text(CONFIG, encoding="utf-8")
        ws = Workspace.open(ws_dir)
        self.keys = {user: ws.auth.add_key(user, ()) for user in ("a", "b")}
        ws.close()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "FOOTNOTE_SERVER__INGEST_WORKERS": str(workers),
               "FOOTNOTE_SERVER__MAX_UPLOAD_MB_PER_DAY": "100000",
               "FOOTNOTE_INGEST__FILE_TIMEOUT_S": str(file_timeout_s)}  # fmt: skip
        self.log = (root / "server.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "footnote.cli", "serve", "--host", "127.0.0.1",
             "--port", str(port), "-w", str(ws_dir)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        end = time.monotonic() + 120
        while True:
            try:
                if httpx.get(self.url + "/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > end or self.proc.poll() is not None:
                raise RuntimeError(f"the server did not start (see {root / 'server.log'})")
            time.sleep(0.2)

    def client(self, user: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-API-Key": self.keys[user]}, timeout=120)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def time_to_ready(client: httpx.Client, name: str, data: bytes) -> float:
    t0 = time.perf_counter()
    resp = client.post("/v1/sources", files={"file": (name, data)})
    resp.raise_for_status()
    sid = resp.json()["id"]
    while time.perf_counter() - t0 < 300:
        got = client.get(f"/v1/sources/{sid}").json()
        if got["status"] == "ready":
            return time.perf_counter() - t0
        if got["status"] == "failed":
            raise RuntimeError(f"A's upload failed: {got.get('error')}")
        time.sleep(0.02)
    raise RuntimeError("A's upload was not ready within 300 s")


def a_uploads(client: httpx.Client, phase: str, count: int, start: int) -> list[float]:
    return [time_to_ready(client, f"{phase}-{i}.md", one_page(start + i)) for i in range(count)]


def flood(
    client: httpx.Client, stop: threading.Event, docx: bytes, sent: list[str], most: int
) -> None:
    """User B: hostile files back to back, never waiting for them (at most `most`)."""
    n = 0
    while not stop.is_set() and n < most:
        if n % 2 == 0:
            name, data = f"hostile-{n}.txt", hostile_txt(n)
        else:
            name, data = f"hostile-{n}.docx", docx_variant(docx, n)
        resp = client.post("/v1/sources", files={"file": (name, data)})
        if resp.status_code in (200, 202):
            sent.append(resp.json()["id"])
        n += 1
        time.sleep(0.05)


def docx_variant(docx: bytes, n: int) -> bytes:
    """The same archive with a zip comment naming `n`: new bytes, the same ~100 MB of XML."""
    buf = io.BytesIO(docx)
    with zipfile.ZipFile(buf, "a") as z:
        z.comment = f"variant {n}".encode()
    return buf.getvalue()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uploads", type=int, default=24, help="A's uploads per phase (>= 20).")
    ap.add_argument("--workers", type=int, default=2, help="server.ingest_workers.")
    ap.add_argument("--flood", type=int, default=400, help="B's files at most.")
    ap.add_argument(
        "--file-timeout",
        type=float,
        default=0.0,
        help="ingest.file_timeout_s (> 0: each file parsed in a child process).",
    )
    args = ap.parse_args()
    docx = hostile_docx(0)
    inflated = sum(i.file_size for i in zipfile.ZipFile(io.BytesIO(docx)).infolist())
    print(f"hostile DOCX: {len(docx) / 1024:.0f} KB holding {inflated / 2**20:.0f} MiB of XML; "
          f"hostile .txt: {len(hostile_txt(0)) / 1024:.0f} KB, one paragraph")  # fmt: skip
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="footnote-fair-") as tmp:
        server = Server(Path(tmp), args.workers, args.file_timeout)
        try:
            a, b = server.client("a"), server.client("b")
            a_uploads(a, "warm", 2, 10_000)  # the embedder loads
            idle = a_uploads(a, "idle", args.uploads, 0)
            stop, sent = threading.Event(), list[str]()
            thread = threading.Thread(
                target=flood, args=(b, stop, docx, sent, args.flood), daemon=True
            )
            thread.start()
            time.sleep(1.0)  # B's queue is full before A starts
            loaded = a_uploads(a, "loaded", args.uploads, 1_000)
            stop.set()
            thread.join()
            states: dict[str, int] = {}
            for sid in sent:
                status = b.get(f"/v1/sources/{sid}").json().get("status", "gone")
                states[status] = states.get(status, 0) + 1
        finally:
            server.close()
    print(
        f"server.ingest_workers = {args.workers}, ingest.file_timeout_s = {args.file_timeout:g}; "
        "A's one-page uploads, POST to ready, s:"
    )
    print(f"{'phase':8} {'n':>4} {'p50':>8} {'p95':>8} {'max':>8}")
    for name, xs in (("idle", idle), ("loaded", loaded)):
        print(f"{name:8} {len(xs):4d} {statistics.median(xs):8.3f} {pct(xs, 0.95):8.3f} "
              f"{max(xs):8.3f}")  # fmt: skip
    p50 = statistics.median(loaded) / statistics.median(idle)
    p95 = pct(loaded, 0.95) / pct(idle, 0.95)
    verdict = "met" if p95 <= 2 else "NOT met"
    print(f"loaded/idle: p50 {p50:.2f}x, p95 {p95:.2f}x (target p95 <= 2x: {verdict})")
    print(f"B's files sent during the loaded phase: {len(sent)}; their state after it: {states}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
