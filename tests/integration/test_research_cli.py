"""`footnote research` end to end: a real workspace (SQLite, FTS5, a real embedder), the
fixture web on loopback, the outline confirmed by flag, by an edited file or refused."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from footnote.cli import app
from footnote.eval.fixture_web import FixtureWeb

pytestmark = pytest.mark.integration
runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"
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


def _runs(ws: Path) -> list[dict[str, str]]:
    listed = runner.invoke(app, ["research", "ls", "--json", "-w", str(ws)])
    assert listed.exit_code == 0, listed.output
    runs: list[dict[str, str]] = json.loads(listed.stdout)
    return runs


def test_outline_changes_in_plain_words_are_what_runs(ws: Path) -> None:
    result = runner.invoke(app, ["research", Q, "--yes", "--json", "-w", str(ws), "--budget-tokens",
                                 "5000", "--change", "drop 3; drop 4, 5 and 6",
                                 "--change", "add a section: who regulates battery recycling?",
                                 "--change", "rename 2 to What the estimates count in Veldmark"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "→ drop 3 (" in result.stderr and "→ add a section: who regulates" in result.stderr
    brief = json.loads(result.stdout)
    sections = [(s["item_id"], s["title"]) for s in brief["sections"]]
    assert sections == [("size", "Market size"), ("scope", "What the estimates count in Veldmark"),
                        ("who_regulates_battery_recycling", "Who regulates battery recycling")]  # fmt: skip
    bad = runner.invoke(app, ["research", Q, "--yes", "-w", str(ws), "--change", "make it better"])
    assert bad.exit_code == 1 and "cannot read the outline edit" in bad.stderr
    assert [r["state"] for r in _runs(ws)] == ["aborted", "completed"]


def test_no_confirmation_leaves_no_proposed_run(ws: Path) -> None:
    """Without --yes, --outline or a terminal to ask on, nothing is recorded."""
    result = runner.invoke(app, ["research", Q, "-w", str(ws)])
    assert result.exit_code == 1 and "confirm the outline" in result.stderr
    assert _runs(ws) == []


def _default_sigint() -> None:
    """A suite started in the background (`pytest … &`) ignores SIGINT, and a child inherits
    that: Python then never raises KeyboardInterrupt and ^C at the prompt does nothing. The
    terminal a user types ^C in delivers it; so does this one."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _terminal(ws: Path) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1", "TERM": "dumb",
           "COLUMNS": "200"}  # fmt: skip
    child = pexpect.spawn(sys.executable, ["-m", "footnote.cli", "research", Q, "-w", str(ws),
                                           "--budget-tokens", "5000", "--json"],
                          env=env, encoding="utf-8", timeout=120, dimensions=(60, 200),
                          preexec_fn=_default_sigint)  # fmt: skip
    child.expect("Accept this outline")
    return child


@pytest.mark.parametrize("how", ["eof", "ctrl-c", "no"])
def test_an_aborted_prompt_leaves_no_proposed_run(ws: Path, how: str) -> None:
    child = _terminal(ws)
    if how == "eof":
        child.sendeof()
    elif how == "ctrl-c":
        child.sendintr()
    else:
        child.sendline("n")
    child.expect("marked aborted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus != 0
    (run,) = _runs(ws)
    assert run["state"] == "aborted"
    shown = runner.invoke(app, ["research", "ls", "-w", str(ws)])
    assert "aborted" in shown.stdout
    again = runner.invoke(app, ["research", "resume", run["id"], "-w", str(ws)])
    assert again.exit_code != 0


def test_the_outline_edited_in_words_at_the_prompt(ws: Path) -> None:
    child = _terminal(ws)
    child.sendline("删除第3节；删除第4、5、6节")
    child.expect("→ drop 3 \\(")
    child.expect("Accept this outline")
    child.sendline("make it nicer")
    child.expect("cannot read the outline edit")
    child.expect("Accept this outline")
    child.sendline("move 2 before 1")
    child.expect("→ move 2 \\(Scope of the estimates\\) before 1 \\(Market size\\)")
    child.expect("Accept this outline")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    (run,) = _runs(ws)
    assert run["state"] == "completed"
    shown = runner.invoke(app, ["research", "show", run["id"], "--json", "-w", str(ws)])
    assert [s["item_id"] for s in json.loads(shown.stdout)["sections"]] == ["scope", "size"]


@pytest.mark.parametrize("rates", [False, True])
def test_research_fx_rates_state_the_rate_in_the_brief(
    ws: Path, tmp_path: Path, rates: bool
) -> None:
    """`research.fx_rates`: figures in two currencies compared at the stated rate (the brief
    says rate, date and source); without it, side by side unconverted."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "halden.md").write_text("# Halden outlook\n\nThe Veldmark battery recycling market "
                                    "was worth USD 1.2 billion in 2023.\n", encoding="utf-8")  # fmt: skip
    (docs / "zhongqi.md").write_text("# Zhongqi report\n\nZhongqi Research put the Veldmark battery "
                                     "recycling market at CNY 6.8 billion in 2023.\n",
                                     encoding="utf-8")  # fmt: skip
    if rates:
        config = ws / "config.toml"
        config.write_text(config.read_text(encoding="utf-8").replace("[research]\n", (
            '[research]\nfx_rates = [{pair = "USD/CNY", rate = 7.1, date = "2026-01-02", '
            'source = "PBoC central parity"}]\n'), 1), encoding="utf-8")  # fmt: skip
    added = runner.invoke(app, ["ingest", str(docs), "-w", str(ws)])
    assert added.exit_code == 0, added.output
    result = runner.invoke(app, ["research", "How large is Veldmark's battery recycling market?",
                                 "--no-web", "--yes", "-w", str(ws), "--template", "market_size"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Sources disagree" in result.stdout
    if rates:
        assert "USD/CNY 7.1 on 2026-01-02 (source: PBoC central parity)" in result.stdout
        assert "CNY 6.8 billion ≈ USD 958 million" in result.stdout
    else:
        assert "shown unconverted, no exchange rate is assumed" in result.stdout


def test_research_draws_only_on_the_sources_given(ws: Path, tmp_path: Path) -> None:
    """`--source` limits a brief's library evidence to the papers named (the API's
    `source_ids` had no CLI form): an analyst asking about "these papers" names them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    chosen, other = docs / "chosen.md", docs / "other.md"
    chosen.write_text(
        "# Recycling in Veldmark\n\nVeldmark's battery recycling market was worth "
        "EUR 120 million in 2023 and is expected to grow 9% a year.\n",
        "utf-8",
    )
    other.write_text(
        "# Another survey\n\nVeldmark's battery recycling market was worth EUR 135 "
        "million in 2023, growing 11% a year.\n",
        "utf-8",
    )
    res = runner.invoke(app, ["ingest", str(chosen), str(other), "-w", str(ws)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["research", "run", Q, "--yes", "--no-web", "--json", "-s",
                              str(chosen), "-w", str(ws), "--budget-tokens", "5000"])  # fmt: skip
    assert res.exit_code == 0, res.output
    brief = json.loads(res.stdout)
    uris = {c["url"] for c in brief["cards"]}
    assert uris and all(u.endswith("chosen.md") for u in uris), uris
    res = runner.invoke(app, ["research", "run", Q, "--yes", "--no-web", "--json", "-w", str(ws),
                              "--budget-tokens", "5000"])  # fmt: skip
    every = {c["url"].rsplit("/", 1)[-1] for c in json.loads(res.stdout)["cards"]}
    assert {"chosen.md", "other.md"} <= every, every  # without --source: the whole library
    res = runner.invoke(app, ["research", "run", Q, "--yes", "--no-web", "-s", "nope.md",
                              "-w", str(ws)])  # fmt: skip
    assert res.exit_code == 1 and "nope.md" in res.output
