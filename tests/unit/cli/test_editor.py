"""The outline editor: a real editor process edits the file; an unchanged or failed edit is None."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from footnote.cli.common import edit_in_editor
from footnote.errors import FootnoteError


def _editor(tmp_path: Path, body: str) -> str:
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_the_saved_text_comes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "sed -i 's/old/new/' \"$1\""))
    assert edit_in_editor('{"title": "old"}', suffix=".json") == '{"title": "new"}'


def test_unchanged_or_failed_edits_are_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "true"))
    assert edit_in_editor("same") is None
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "exit 3"))
    assert edit_in_editor("same") is None


def test_a_missing_editor_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISUAL", "/nonexistent/editor")
    with pytest.raises(FootnoteError, match="could not start the editor"):
        edit_in_editor("text")
