"""The settings-extraction gold set (issue #23) passes its checker against the shared papers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CHECKER = REPO / "scripts" / "check-settings-gold"
DATA = next(
    (
        d
        for d in (REPO.parent / "shared" / "data", REPO.parent.parent / "shared" / "data")
        if (d / "qasper-partial").is_dir()
    ),
    None,
)


@pytest.mark.shared
@pytest.mark.skipif(DATA is None, reason="needs ../shared/data (absent)")
def test_settings_gold_passes_its_checker() -> None:
    result = subprocess.run(
        [sys.executable, str(CHECKER), "--data", str(DATA), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
