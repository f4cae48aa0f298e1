"""The document as one self-contained HTML page (also the PDF's source): escaped text, footnote
links into the evidence appendix (each naming its source on hover), and a font stack with Noto
CJK for Chinese and Japanese."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from footnote.pipelines.export.document import ExportDoc, Paragraph
from footnote.textnorm import text_lang

CSS = """
@page { size: A4; margin: 18mm 16mm; @bottom-center { content: counter(page) " / " counter(pages);
  font-size: 8pt; color: #666; } }
body { font-family: "Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", "DejaVu Sans", sans-serif;
  font-size: 10.5pt; line-height: 1.45; color: #1b1b1b; max-width: 46rem; margin: 0 auto; }
h1 { font-size: 18pt; margin: 0 0 .6em; } h2 { font-size: 13pt; margin: 1.4em 0 .4em;
  border-bottom: 1px solid #ddd; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: .15em 1em; font-size: 9pt; }
dl.meta dt { font-weight: bold; } dl.meta dd { margin: 0; word-break: break-all; }
.withheld { border-left: 3px solid #b35c00; background: #fff4e5; padding: .4em .8em; }
sup a { text-decoration: none; } .flags { color: #666; font-size: 9pt; font-style: italic; }
table { border-collapse: collapse; width: 100%; font-size: 9pt; margin: .4em 0; }
th, td { border: 1px solid #ccc; padding: .2em .4em; text-align: left; vertical-align: top; }
caption { text-align: left; font-weight: bold; padding: .2em 0; }
.note { font-size: 9pt; color: #444; } ol.evidence { font-size: 9pt; padding-left: 1.6em; }
ol.evidence li { margin-bottom: .5em; word-break: break-word; } code { font-size: 8pt; }
"""


def _para(p: Paragraph, names: Mapping[int, str]) -> str:
    refs = "".join(
        f'<sup><a href="#ev-{r}" title="{escape(names.get(r, ""), quote=True)}">[{r}]</a></sup>'
        for r in p.refs
    )
    flags = f' <span class="flags">({escape("; ".join(p.flags))})</span>' if p.flags else ""
    return f"<p>{escape(p.text)}{refs}{flags}</p>"


def document_html(doc: ExportDoc) -> str:
    """The whole document as a standalone HTML page."""
    lang = "zh" if text_lang(doc.title) == "zh" else "en"
    names = {e.ref: f"{e.source_title}, {e.locator}" for e in doc.evidence}
    out = [f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">',
           f"<title>{escape(doc.title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{escape(doc.title)}</h1>", '<dl class="meta">']  # fmt: skip
    out += [f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in doc.meta]
    out.append("</dl>")
    out += [f'<p class="withheld" role="note">{escape(w)}</p>' for w in doc.withheld]
    for s in doc.sections:
        out.append(f"<section><h2>{escape(s.title)}</h2>")
        out += [_para(p, names) for p in s.paragraphs]
        for t in s.tables:
            out.append(f"<table><caption>{escape(t.caption)}</caption><thead><tr>")
            out += [f"<th>{escape(h)}</th>" for h in t.header]
            out.append("</tr></thead><tbody>")
            for row in t.rows:
                out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>")
            out.append("</tbody></table>")
            if t.note:
                out.append(f'<p class="note">{escape(t.note)}</p>')
        out += [f'<p class="note"><em>{escape(n)}</em></p>' for n in s.notes]
        out.append("</section>")
    out.append('<section><h2>Evidence appendix</h2><ol class="evidence">')
    for e in doc.evidence:
        link = (f' <a href="{escape(e.url, quote=True)}">{escape(e.url)}</a>.'
                if e.url.startswith(("https://", "http://")) else f" {escape(e.url)}." if e.url else "")  # fmt: skip
        labels = f" Labels: {escape(', '.join(e.labels))}." if e.labels else ""
        file_name = f" ({escape(e.file_name)})" if e.file_name else ""
        out.append(
            f'<li id="ev-{e.ref}" value="{e.ref}"><strong>{escape(e.source_title)}</strong>'
            f"{file_name}, {escape(e.locator)}: “{escape(e.quote)}”.{link} "
            f"Published {escape(e.published_at or 'undated')}; fetched "
            f"{escape(e.fetched_at or 'unknown')}; sha256 <code>{escape(e.content_hash or 'unknown')}"
            f"</code>.{labels} Anchor <code>{escape(e.id)}</code>.</li>"
        )
    out.append("</ol></section></body></html>")
    return "\n".join(out) + "\n"
