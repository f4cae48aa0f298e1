"""HTML, Markdown and plain text parsing into structured blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest import parse_file

SETTINGS = IngestSettings(min_block_chars=0)

HTML = """<html><head><title>Graph Parsing Notes</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/x">Subscribe now</a></nav>
<main><article><h1>Graph Parsing Notes</h1>
<p>Parsing documents into graphs is an old idea that keeps coming back in new forms, and this
article explains why structure matters for retrieval and for citation checking alike.</p>
<h2>Data</h2>
<p>We collected four hundred papers from open archives and annotated every table by hand,
which took two annotators about three weeks of careful work.</p>
<ul><li>tables were checked twice</li><li>figures were skipped</li></ul>
<table><tr><th>Split</th><th>Papers</th></tr><tr><td>train</td><td>300</td></tr>
<tr><td>test</td><td>100</td></tr></table>
</article></main><footer>Copyright 2024 Example Corp. All rights reserved.</footer></body></html>"""

MARKDOWN = """---
title: Markdown Paper
---
# Markdown Paper

Intro paragraph with **bold** words and a [link](http://example.org) that keeps its text.

## Method

- first step of the method
- second step of the method

| Model | Score |
|-------|-------|
| A     | 0.91  |
| B     | 0.87  |

$$
E = m c^2 \\tag{2}
$$

```python
print("code stays")
```
"""

TEXT = """INTRODUCTION

This plain text document has a first paragraph that is long enough to stand on its own as a
block, with a hyphen-
ated word at a line end.

2.1 Data Sources

The second paragraph describes the data sources used in the study and their licences.

References

[1] A. Author. 2020. A title. A venue.
[2] B. Author. 2021. Another title. Another venue.
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_html_keeps_structure_and_drops_boilerplate(tmp_path: Path) -> None:
    doc = parse_file(_write(tmp_path, "page.html", HTML), SETTINGS)
    kinds = [b.kind for b in doc.blocks]
    text = " ".join(b.text for b in doc.blocks)
    assert doc.source.kind == "html" and doc.source.title == "Graph Parsing Notes"
    assert "heading" in kinds and "list" in kinds and "table" in kinds
    assert "Subscribe now" not in text and "All rights reserved" not in text
    table = next(b.table for b in doc.blocks if b.kind == "table")
    assert table is not None and table.cell(1, 1) == "300"
    data = next(b for b in doc.blocks if b.text.startswith("We collected"))
    assert data.section_path[-1] == "Data"


def test_markdown_tokens(tmp_path: Path) -> None:
    doc = parse_file(_write(tmp_path, "paper.md", MARKDOWN), SETTINGS)
    assert doc.source.title == "Markdown Paper" and doc.source.kind == "md"
    by_kind = {b.kind: b for b in doc.blocks}
    assert by_kind["table"].table is not None
    assert by_kind["table"].table.header == (("Model", "Score"),)
    assert by_kind["formula"].formula_number == "2"
    assert by_kind["formula"].latex == "E = m c^2"
    assert "first step" in by_kind["list"].text and "second step" in by_kind["list"].text
    assert any("link that keeps its text" in b.text for b in doc.blocks)
    assert by_kind["list"].section_path == ("Markdown Paper", "Method")
    assert [s.title for s in doc.sections] == ["Markdown Paper"]
    assert doc.sections[0].children[0].title == "Method"


def test_plain_text(tmp_path: Path) -> None:
    doc = parse_file(_write(tmp_path, "notes.txt", TEXT), SETTINGS)
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == ["INTRODUCTION", "2.1 Data Sources", "References"]
    assert any("hyphenated word" in b.text for b in doc.blocks)
    refs = [b for b in doc.blocks if b.kind == "reference"]
    assert len(refs) == 2 and refs[0].text.startswith("[1]")


def test_chinese_text_file(tmp_path: Path) -> None:
    text = "第一章 引言\n\n知识图谱是一种用图结构表示知识的方法，\n它由实体和关系组成。\n"
    doc = parse_file(_write(tmp_path, "zh.txt", text), SETTINGS)
    assert doc.source.lang == "zh"
    assert doc.blocks[0].kind == "heading"
    assert "方法，它由" in doc.blocks[1].text


@pytest.mark.parametrize("payload", [b"\xff\xfe\x00\x00junk", b"\x00\x01\x02" * 50, b""])
def test_binary_junk_does_not_crash(tmp_path: Path, payload: bytes) -> None:
    p = tmp_path / "junk.txt"
    p.write_bytes(payload)
    doc = parse_file(p, SETTINGS)
    assert all("\x00" not in b.text for b in doc.blocks)


def test_html_saved_as_txt_is_parsed_as_html(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text(
        "<!DOCTYPE html><html><head><title>Bates</title><meta charset='utf-8'></head><body>"
        "<h1>Frederick Bates</h1><p>Frederick Bates was the second Governor of Missouri, "
        "in office from 1824 to 1825.</p></body></html>",
        encoding="utf-8",
    )
    doc = parse_file(page, IngestSettings())
    assert doc.source.kind == "html"
    assert any("HTML" in w for w in doc.source.warnings)
    assert not any("<meta" in b.text or "<p>" in b.text for b in doc.blocks)
    assert any("second Governor of Missouri" in b.text for b in doc.blocks)


def test_html_keeps_text_around_inline_children_and_tails(tmp_path: Path) -> None:
    page = (
        "<html><body><div>Revenue rose <b>12%</b> in 2023</div>"
        "<div>Costs fell <i>3%</i>, and margins grew.</div></body></html>"
    )
    doc = parse_file(_write(tmp_path, "fin.html", page), SETTINGS)
    text = "\n".join(b.text for b in doc.blocks)
    assert "Revenue rose 12% in 2023" in text
    assert "Costs fell 3%, and margins grew." in text


def test_html_article_header_and_mixed_containers(tmp_path: Path) -> None:
    page = (
        "<html><body><nav>Home | About</nav><article><header><h1>Quarterly results</h1>"
        "<p>By A. Writer</p></header><div>Revenue rose <b>12%</b> in 2023 <span>while</span> "
        "costs fell.<p>A second paragraph of the report.</p>And a tail after it.</div>"
        "<h2>Outlook</h2><p>Growth is expected to continue.</p></article></body></html>"
    )
    doc = parse_file(_write(tmp_path, "article.html", page), SETTINGS)
    blocks = [(b.kind, b.text) for b in doc.blocks]
    assert ("heading", "Quarterly results") in blocks and ("heading", "Outlook") in blocks
    texts = [t for _, t in blocks]
    assert "Revenue rose 12% in 2023 while costs fell." in texts
    assert (
        texts.index("Revenue rose 12% in 2023 while costs fell.")
        < texts.index("A second paragraph of the report.")
        < texts.index("And a tail after it.")
    )
    assert "Home | About" not in "\n".join(texts)
    growth = next(b for b in doc.blocks if b.text.startswith("Growth"))
    assert growth.section_path == ("Quarterly results", "Outlook")


def test_html_meta_tags_give_bibliographic_metadata(tmp_path: Path) -> None:
    page = (
        "<html><head><title>Checked Citations | Journal</title>"
        '<meta name="citation_title" content="Checked Citations">'
        '<meta name="citation_author" content="Lovelace, Ada">'
        '<meta name="citation_author" content="Turing, Alan">'
        '<meta name="citation_publication_date" content="2021/03/04">'
        '<meta name="citation_doi" content="10.1234/cite.42">'
        "</head><body><article><h1>Checked Citations</h1><p>" + "Body text. " * 20 + "</p>"
        "</article></body></html>"
    )
    doc = parse_file(_write(tmp_path, "p.html", page), SETTINGS)
    assert doc.source.authors == ("Lovelace, Ada", "Turing, Alan")
    assert doc.source.published_at == "2021-03-04" and doc.source.doi == "10.1234/cite.42"
    og = '<html><head><meta property="article:published_time" content="2024-06-01T10:00:00Z">'
    og += '<meta name="author" content="Grace Hopper"></head><body><p>x</p></body></html>'
    other = parse_file(_write(tmp_path, "q.html", og), SETTINGS)
    assert other.source.published_at == "2024-06-01" and other.source.authors == ("Grace Hopper",)
