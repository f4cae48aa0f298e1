"""The reproduce.* settings each change what the job does (through the workspace)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.errors import ConfigError
from footnote.ingest import parse_file
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.roles import ModelRoles
from footnote.workspace import Workspace
from footnote.workspace.reproduce import crosscheck_report, extractor_for, settings_table

PAPER = """# P

## Setup

We use a learning rate of 0.001 and a batch size of 16. Dropout is set to 0.3.
We train for 10 epochs. Results are averaged over 5 runs.

Table 1: Scores.

| Model | A | B | Avg |
|---|---|---|---|
| x | 80.0 | 81.0 | 80.7 |
| y | 70.0 | 70.0 | 70.0 |
"""


def _ws(tmp_path: Path, **overrides: object) -> tuple[Workspace, str]:
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)  # type: ignore[arg-type]
    path = tmp_path / "p.md"
    path.write_text(PAPER, encoding="utf-8")
    doc = parse_file(path, IngestSettings())
    ws.store.save_document(doc)
    return ws, doc.source.id


def _with_fake(ws: Workspace, seen: list[list[Message]]) -> None:
    def reply(messages: list[Message]) -> str:
        seen.append(list(messages))
        return json.dumps({"settings": []})

    ws._roles = ModelRoles(ws.settings.models, factory=lambda _b: FakeChatModel(reply))


def test_extractor_auto_is_rules_without_a_bound_role(tmp_path: Path) -> None:
    ws, _ = _ws(tmp_path, models={"compose": {"url": ""}})
    assert extractor_for(ws) == "rules"
    with pytest.raises(ConfigError):
        extractor_for(ws, "model")
    ws.close()


def test_extractor_and_candidates_settings(tmp_path: Path) -> None:
    ws, sid = _ws(tmp_path, reproduce={"extractor": "model", "candidates": 1})
    seen: list[list[Message]] = []
    _with_fake(ws, seen)
    table = asyncio.run(settings_table(ws, sid))
    assert table.extractor == "model" and seen  # the model was asked
    assert all(m[-1].content.count("[E") == 1 for m in seen)  # one passage per call
    assert not any(r.values for r in table.rows)  # it proposed nothing: nothing is stated
    ws.close()
    ws2, sid2 = _ws(tmp_path / "b", reproduce={"extractor": "rules"})
    seen2: list[list[Message]] = []
    _with_fake(ws2, seen2)
    table2 = asyncio.run(settings_table(ws2, sid2))
    assert not seen2 and table2.row("batch_size").values[0].value == "16"
    assert table2.row("seeds").values[0].value == "5"
    ws2.close()


def test_crosscheck_tolerance_setting(tmp_path: Path) -> None:
    ws, sid = _ws(tmp_path)
    assert crosscheck_report(ws, sid)["mismatches"] == 1
    ws.close()
    ws2, sid2 = _ws(tmp_path / "b", reproduce={"crosscheck_tolerance": 3.0})
    assert crosscheck_report(ws2, sid2)["mismatches"] == 0
    ws2.close()
