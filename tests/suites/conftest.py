"""The five suites of issue #15 (cross-user, API fuzzing, parser fuzzing, faults,
concurrency) and the three of issue #17 (prompt injection, SSRF / egress, licence labels).
Each records what it tried, what was blocked (refused, or answered without the
other user's data) and what was lost (a leak, a 5xx, a crash, lost or half-written data, a
wrong row, a duplicate, a deadlock); the counts are printed at the end of the pytest run (and
written to test-output/suite-counts.json), and every suite asserts `lost == 0`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from suite_support import COUNTS, FAST, REPORT

from footnote.workspace import Workspace


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    terminalreporter.section("attack suites (issues #15, #17): tried / blocked / lost")
    for suite, c in COUNTS.items():
        terminalreporter.write_line(
            f"{suite:<16} tried {c['tried']:>6}   blocked {c['blocked']:>6}   lost {c['lost']:>3}"
        )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(COUNTS, indent=2))


@pytest.fixture()
def fast_ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace with the fast real components (wordllama vectors, extractive answers)."""
    ws = Workspace.open(tmp_path / "ws", overrides=FAST)
    yield ws
    ws.close()
