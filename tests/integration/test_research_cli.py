"""`footnote research` end to end: a real workspace (SQLite, FTS5, a real embedder), the
fixture web on loopback, the outline confirmed by flag, by an edited file or refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.eval.fixture_web import FixtureWeb

pytestmark = pytest.mark.integration
runner = CliRunner()
Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


@pytest.fixture()
def ws(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "config.toml").write_text(
        f"""[research]
search_url = "searxng+{web.base}"
allowed_domains = ["example"]
allow_loopback = true
resolve = {{"*.example" = "127.0.0.1"}}
writer = "extractive"
select = "rules"
[models.judge]
url = ""
[models.embed]
url = "local:wordllama"
""",
        encoding="utf-8",
    )
    monkeypatch.setenv("COLUMNS", "200")
    return folder


def test_research_json_with_yes(ws: Path) -> None:
    result = runner.invoke(
        app, ["research", Q, "--yes", "--json", "-w", str(ws), "--budget-tokens", "5000"]
    )
    assert result.exit_code == 0, result.output
    brief = json.loads(result.stdout)
    assert brief["outline"]["template"] == "market_size" and brief["outline"]["confirmed"]
    assert len(brief["sections"]) == 6 and brief["cards"]
    assert {"sections", "cards", "conflicts", "checklist", "not_covered", "budget_used"} <= set(
        brief
    )
    assert (
        "sq-size: done" in result.stderr or "sq-size:" in result.stderr
    )  # progress per sub-question
    listed = runner.invoke(app, ["research", "ls", "--json", "-w", str(ws)])
    (run,) = json.loads(listed.stdout)
    assert run["id"] == brief["run_id"] and run["state"] == "completed"
    shown = runner.invoke(app, ["research", "show", run["id"], "-w", str(ws)])
    assert (
        shown.exit_code == 0
        and "## Checklist" in shown.stdout
        and "Sources disagree" in shown.stdout
    )


def test_an_edited_outline_is_what_runs(ws: Path, tmp_path: Path) -> None:
    outline = {"items": [{"id": "size", "title": "Market size", "asks": "How large is the market?",
                          "standard": {"min_independent": 1, "web": True}}]}  # fmt: skip
    path = tmp_path / "outline.json"
    path.write_text(json.dumps(outline), encoding="utf-8")
    result = runner.invoke(app, ["research", Q, "--outline", str(path), "--json", "-w", str(ws)])
    assert result.exit_code == 0, result.output
    brief = json.loads(result.stdout)
    assert [s["item_id"] for s in brief["sections"]] == ["size"]


def test_no_confirmation_no_run(ws: Path) -> None:
    result = runner.invoke(app, ["research", Q, "-w", str(ws)], input="n\n")
    assert result.exit_code != 0
    bad = runner.invoke(app, ["research", Q, "--template", "horoscope", "--yes", "-w", str(ws)])
    assert bad.exit_code == 1 and "unknown report template" in bad.stderr


def test_baseline_mode(ws: Path) -> None:
    result = runner.invoke(
        app, ["research", Q, "--mode", "baseline", "--yes", "--json", "-w", str(ws)]
    )
    assert result.exit_code == 0, result.output
    brief = json.loads(result.stdout)
    assert brief["mode"] == "baseline" and len(brief["sections"]) == 1
    assert brief["budget_used"]["searches"] == 1


@pytest.mark.parametrize("option, value", [("--budget-tokens", "0"), ("--budget-tokens", "-5"),
                                           ("--budget-minutes", "0")])  # fmt: skip
def test_an_invalid_budget_is_an_error(ws: Path, option: str, value: str) -> None:
    """`--budget-tokens 0` was silently the default 300k tokens."""
    result = runner.invoke(app, ["research", Q, "--yes", "-w", str(ws), option, value])
    assert result.exit_code != 0
    assert f"{option} must be above 0" in result.output
