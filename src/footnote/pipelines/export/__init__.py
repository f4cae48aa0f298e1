"""Exports of a reviewed brief, an ask answer or a chat thread: one document model
(`document`), rendered as Markdown, HTML, PDF (WeasyPrint), JSON, BibTeX or CSL-JSON, each
with an evidence appendix; labelled evidence a user may not read is withheld and said so."""

from footnote.pipelines.export.render import FORMATS, MEDIA_TYPES, render

__all__ = ["FORMATS", "MEDIA_TYPES", "render"]
