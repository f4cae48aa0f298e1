"""Issue #34 item 3 in the terminal: `footnote ask` and `footnote chat` print each checked
sentence as it arrives — the first one is on stdout while the next is still being judged — and
the passages found before the answer. The scripted compose + judge server on loopback stands in
for the model (its judge held on the weak sentence until the test has read the first one); the
CLI, the pipeline and the checks are real."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import scripted_model
from scripted_model import QUESTION, SUPPORTED, UNSUPPORTED, WEAK, ScriptedModel
from test_surfaces_gate import make_workspace

from footnote.types import INSUFFICIENT_MARK

pytestmark = pytest.mark.integration
SRC = Path(__file__).resolve().parents[2] / "src"


class Held:
    """The scripted reply, with the judge held on the weak sentence until `release`."""

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


@pytest.fixture()
def held() -> Iterator[Held]:
    h = Held()
    scripted_model.reply = h.reply
    try:
        yield h
    finally:
        h.release.set()
        scripted_model.reply = h.original


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory, model: ScriptedModel) -> Path:
    folder = tmp_path_factory.mktemp("cli-stream")
    make_workspace(folder, model.url).close()
    return folder / "ws"


def start(ws: Path, *args: str) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "TERM": "dumb",
           "COLUMNS": "1000", "PYTHONUNBUFFERED": "1"}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "footnote.cli", *args, "-w", str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def pump(stream: Any, tag: str) -> None:
        for line in stream:
            lines.put(f"{tag}{line}")

    threading.Thread(target=pump, args=(proc.stdout, "out: "), daemon=True).start()
    threading.Thread(target=pump, args=(proc.stderr, "err: "), daemon=True).start()
    return proc, lines


def read_until(lines: queue.Queue[str], text: str) -> list[str]:
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            raise AssertionError(f"{text!r} never came; got {seen}") from None
        seen.append(line)
        if text in line:
            return seen


def check_streamed(proc: subprocess.Popen[str], lines: queue.Queue[str], held: Held) -> str:
    """The first sentence printed while the second is judged; then the whole answer."""
    before = read_until(lines, SUPPORTED)
    assert before[-1].startswith("out: ")
    assert held.judging_weak.wait(60) and not held.release.is_set()
    found = [ln for ln in before if ln.startswith("err: ") and "found" in ln]
    assert found and any("0.74" in ln for ln in before if ln.startswith("err: "))
    assert not any(WEAK in ln for ln in before)
    held.release.set()
    rest = read_until(lines, "support")
    shown = " ".join("".join(ln[5:] for ln in [*before, *rest] if ln.startswith("out: ")).split())
    assert shown.count(SUPPORTED) == 1 and UNSUPPORTED not in shown
    assert re.search(re.escape(WEAK) + r"(?:\[\d+\])*\s*\*?" + re.escape(INSUFFICIENT_MARK), shown)
    return shown


def test_ask_prints_each_checked_sentence_as_it_arrives(ws: Path, held: Held) -> None:
    proc, lines = start(ws, "ask", QUESTION)
    check_streamed(proc, lines, held)
    assert proc.wait(60) == 0


def test_chat_prints_each_checked_sentence_as_it_arrives(ws: Path, held: Held) -> None:
    proc, lines = start(ws, "chat")
    assert proc.stdin is not None
    proc.stdin.write(QUESTION + "\n")
    proc.stdin.flush()
    check_streamed(proc, lines, held)
    proc.stdin.write("/quit\n")
    proc.stdin.flush()
    assert proc.wait(60) == 0
