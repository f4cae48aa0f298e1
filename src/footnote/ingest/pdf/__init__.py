"""PDF → raw blocks: `file` reads positioned text with pypdfium2, `layout` orders it into rows,
`tables` and `figures` find structure, `classify` types the blocks, `pipeline` runs them."""

from footnote.ingest.pdf.pipeline import parse_pdf

__all__ = ["parse_pdf"]
