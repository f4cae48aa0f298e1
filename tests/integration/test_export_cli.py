"""`footnote research export` / `footnote export` and `footnote research log`: thin commands
over the workspace, against a real brief written from the fixture web on loopback."""

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


def test_export_commands(tmp_path: Path, web: FixtureWeb) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.toml").write_text(
        f'[research]\nsearch_url = "searxng+{web.base}"\nallowed_domains = ["example"]\n'
        'allow_loopback = true\nresolve = {"*.example" = "127.0.0.1"}\nwriter = "extractive"\n'
        'select = "rules"\n[models.judge]\nurl = ""\n[models.embed]\nurl = "local:wordllama"\n',
        encoding="utf-8",
    )
    made = runner.invoke(app, ["research", Q, "--yes", "--json", "-w", str(ws)])
    assert made.exit_code == 0, made.output
    run_id = json.loads(made.stdout)["run_id"]
    md = runner.invoke(app, ["research", "export", run_id, "-w", str(ws)])
    assert md.exit_code == 0 and "## Evidence appendix" in md.stdout
    assert "NOT SIGNED OFF (unreviewed)" in md.stdout
    pdf = tmp_path / "brief.pdf"
    res = runner.invoke(
        app, ["export", "brief", run_id, "-f", "pdf", "-o", str(pdf), "-w", str(ws)]
    )
    assert res.exit_code == 0, res.output
    assert pdf.read_bytes().startswith(b"%PDF-")
    bib = runner.invoke(app, ["export", "brief", run_id, "-f", "bibtex", "-w", str(ws)])
    assert bib.exit_code == 0 and bib.stdout.startswith("@")
    bad = runner.invoke(app, ["export", "brief", run_id, "-f", "odt", "-w", str(ws)])
    assert bad.exit_code == 1 and "unknown export format" in bad.output
    log = runner.invoke(app, ["research", "log", run_id, "--json", "-w", str(ws)])
    assert log.exit_code == 0
    entries = json.loads(log.stdout)["entries"]
    assert [e["target"] for e in entries] == ["markdown", "pdf", "bibtex"]  # the failed one is not
    assert json.loads(log.stdout)["verified"]
