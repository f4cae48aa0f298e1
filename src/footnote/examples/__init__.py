"""Bundled example data (package data, so it works from a wheel as from a checkout).

`papers/`: CC BY 4.0 papers for the demo (see ATTRIBUTION.md); `graphs/`: footnote's own specs
of the demo graphs with a compact copy of their data (see ATTRIBUTION.md, `footnote graph demo`).
"""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
PAPERS_DIR = EXAMPLES_DIR / "papers"
GRAPHS_DIR = EXAMPLES_DIR / "graphs"
