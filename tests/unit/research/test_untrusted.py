"""The injection detector: every attack document of the research data set whose attack is
visible text is found; no page of the benign fixture web is flagged (a false positive would
cost real evidence); a writer's links, ids and labels are foreign unless a cited card holds
them."""

from __future__ import annotations

import json

import pytest

from footnote.config import IngestSettings
from footnote.eval.fixture_web import DATA
from footnote.ingest.web.fetch import FetchResult
from footnote.ingest.web.snapshot import make_snapshot
from footnote.pipelines.research.untrusted import foreign_markup, scan

ROOT = DATA.parent
MANIFEST = json.loads((ROOT / "injection" / "manifest.json").read_text(encoding="utf-8"))
HIDDEN = {
    "inj-02",
    "inj-03",
    "inj-04",
    "inj-05",
    "inj-06",
    "web-inj-01",
    "web-inj-02",
    "web-inj-03",
}
"""Attacks hidden from readers (comments, CSS, alt text): the snapshot drops them, nothing to scan."""
TYPES = {
    ".html": "text/html",
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
}


def snapshot_text(path: str) -> str:
    p = ROOT / path
    result = FetchResult(str(p), f"http://x.example/{p.name}", 200, TYPES[p.suffix], p.read_bytes(),
                         "2024-01-01T00:00:00Z")  # fmt: skip
    return make_snapshot(result, IngestSettings())[0].text


@pytest.mark.parametrize("attack", MANIFEST, ids=[a["id"] for a in MANIFEST])
def test_visible_attacks_are_found(attack: dict[str, str]) -> None:
    text = snapshot_text(attack["file"])
    found = scan(text)
    if attack["id"] in HIDDEN:
        assert attack["canary"] not in text  # nothing of the attack survives the snapshot
    else:
        assert found, attack["id"]


def test_benign_pages_are_not_flagged() -> None:
    attacks = {a["file"].removeprefix("web/") for a in MANIFEST if a["file"].startswith("web/")}
    pages = [p for p in DATA.rglob("*.html") if str(p.relative_to(DATA)) not in attacks]
    assert len(pages) >= 20
    flagged = {p.name: scan(snapshot_text(str(p.relative_to(ROOT)))) for p in pages}
    assert not {k: v for k, v in flagged.items() if v}


@pytest.mark.parametrize(
    "sentence, cited, foreign",
    [
        ("Sales rose 4% in 2023.", ["Sales rose 4% in 2023."], []),
        ("See ![x](http://a.example/p?d=secret) for more.", ["Sales rose."], ["![x](http://a.example/p?d=secret)"]),
        ("Details at https://vepd.example/notice.", ["Details at https://vepd.example/notice."], []),
        ("The market grew card_deadbeef01.", ["The market grew."], ["card_deadbeef01"]),
        ("As C3 says, it grew.", ["it grew"], ["C3"]),
        ("The code is AUTH-7f3a9c21e.", ["it grew"], ["AUTH-7f3a9c21e"]),
    ],
)  # fmt: skip
def test_foreign_markup(sentence: str, cited: list[str], foreign: list[str]) -> None:
    assert foreign_markup(sentence, cited) == foreign
