"""Cited works as BibTeX and CSL-JSON (the appendix's distinct works, in order)."""

from __future__ import annotations

import json
import re

from footnote.pipelines.export.document import ExportDoc, Work

_BIB_TYPES = {"article": "article", "report": "techreport", "webpage": "online",
              "document": "misc"}  # fmt: skip
_CSL_TYPES = {"article": "article-journal", "report": "report", "webpage": "webpage",
              "document": "document"}  # fmt: skip


def _bib_escape(text: str) -> str:
    text = text.replace("\\", r"\textbackslash{}")
    text = re.sub(r"([{}&%$#_])", r"\\\1", text)
    return text.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")


def bibtex(doc: ExportDoc) -> str:
    """One BibTeX entry per cited work."""
    out = []
    for w in doc.works:
        fields = [("title", w.title)]
        if w.authors:
            fields.append(("author", " and ".join(w.authors)))
        if w.issued:
            fields.append(("year", w.issued[:4]))
            if len(w.issued) >= 7:
                fields.append(("date", w.issued))
        if w.doi:
            fields.append(("doi", w.doi))
        if w.arxiv_id:
            fields += [("eprint", w.arxiv_id), ("archiveprefix", "arXiv")]
        if w.url:
            fields.append(("url", w.url))
        body = ",\n".join(f"  {k} = {{{_bib_escape(v)}}}" for k, v in fields)
        out.append(f"@{_BIB_TYPES.get(w.kind, 'misc')}{{{w.key},\n{body}\n}}")
    return "\n\n".join(out) + ("\n" if out else "")


def _csl(w: Work) -> dict[str, object]:
    item: dict[str, object] = {"id": w.key, "type": _CSL_TYPES.get(w.kind, "document"),
                               "title": w.title}  # fmt: skip
    if w.authors:
        item["author"] = [{"literal": a} for a in w.authors]
    if w.issued:
        parts = [int(p) for p in w.issued[:10].split("-") if p.isdigit()]
        item["issued"] = {"date-parts": [parts]}
    if w.doi:
        item["DOI"] = w.doi
    if w.url:
        item["URL"] = w.url
    if w.arxiv_id:
        item["number"] = f"arXiv:{w.arxiv_id}"
    return item


def csl_json(doc: ExportDoc) -> str:
    """The cited works as a CSL-JSON array."""
    return json.dumps([_csl(w) for w in doc.works], ensure_ascii=False, indent=2) + "\n"


def work_key(title: str, issued: str | None, taken: set[str]) -> str:
    """A BibTeX key from the title's first word and the year, unique among `taken`."""
    word = next((t for t in re.findall(r"[A-Za-z]+", title) if len(t) > 3), "source").lower()
    base = f"{word}{(issued or '')[:4]}"
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}{chr(ord('a') + n - 2) if n < 28 else n}"
    taken.add(key)
    return key
