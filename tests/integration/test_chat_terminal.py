"""`footnote chat` driven through a pseudo-terminal (pexpect): turns with footnote markers,
the evidence board, scoping with /sources, /agent, /export, and the stored conversation."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest
from live import study_workspace

pytestmark = pytest.mark.integration
SRC = Path(__file__).resolve().parents[2] / "src"


def spawn(ws: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "TERM": "dumb",
           "COLUMNS": "160"}  # fmt: skip
    child = pexpect.spawn(
        sys.executable, ["-m", "footnote.cli", "chat", "-w", str(ws), *args],
        env=env, encoding="utf-8", timeout=90, dimensions=(50, 160),
    )  # fmt: skip
    child.expect(r"conversation (ses_\w+)")
    return child


def test_a_terminal_conversation(tmp_path: Path) -> None:
    ws = study_workspace(tmp_path, secret=True)
    paper = next(r.source.id for r in ws.store.list_sources() if not r.source.acl_groups)
    memo = next(r.source.id for r in ws.store.list_sources() if r.source.acl_groups)
    ws.close()
    child = spawn(tmp_path / "ws")
    session = child.match.group(1)
    child.expect("you> ")
    child.sendline("What recall@10 did hybrid retrieval reach?")
    child.expect(r"0\.74, ahead of BM25 at 0\.61\.\[1\]")
    child.expect(r"answered · support 0\.\d\d · \d footnotes?")
    child.expect("you> ")
    child.sendline("/board 1")
    child.expect(r"\[1\] ([0-9a-f]{8}-p1-[0-9a-f]{6})\s+page 1")
    cited = child.match.group(1)
    child.expect("verdict supported")
    child.sendline(f"/sources {memo}")
    child.expect(rf"✓ {memo}")
    child.sendline("What was the internal project budget?")
    child.expect(r"48,000 euros\.\[1\]")
    child.sendline("/sources nope")
    child.expect("no source 'nope'")
    child.sendline("/sources all")
    child.expect("searching the whole library")
    child.sendline("/agent")
    child.expect("mode: agent")
    child.sendline("/agent off")
    child.expect("mode: ask")
    out = tmp_path / "export.md"
    child.sendline(f"/export {out}")
    child.expect("wrote")
    child.sendline("/quit")
    child.expect(f"resume with: footnote chat --session {session}")
    child.expect(pexpect.EOF)
    text = out.read_text(encoding="utf-8")
    assert "**You:** What recall@10 did hybrid retrieval reach?" in text
    assert "0.61.[^1]" in text and f"[^1]: `{cited}`, page 1" in text and "[^2]" in text

    # the conversation is stored for the local user, as the web app lists it
    from footnote.workspace import Workspace

    with Workspace.open(tmp_path / "ws") as again:
        msgs = again.chats.messages("local", session)
        assert [m.role for m in msgs] == ["user", "assistant"] * 2
        assert msgs[1].data["answer"]["evidence_board"][0]["id"] == cited
        assert msgs[3].data["answer"]["evidence_board"][0]["id"].startswith(memo[:8])
        run = again.runs.get_run(msgs[1].run_id or "")
        assert run is not None and run["status"] == "completed"
        assert len(again.events.events(msgs[1].run_id or "")) > 3
        assert paper != memo

    # --session resumes it; Ctrl-D leaves
    child = spawn(tmp_path / "ws", "--session", session)
    assert child.match.group(1) == session
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
