"""Outside a checkout (a wheel install) the bundled examples are found as package data (the
demo graphs' data too: tests/unit/graph/test_graph_demo_data.py)."""

from __future__ import annotations

from footnote.examples import GRAPHS_DIR, PAPERS_DIR


def test_examples_are_package_data() -> None:
    assert PAPERS_DIR.is_dir() and any(PAPERS_DIR.glob("*.pdf"))
    assert (GRAPHS_DIR / "movies").is_dir() and (GRAPHS_DIR / "northwind").is_dir()
    assert PAPERS_DIR.parent.parent.name == "footnote"  # inside the package, not the checkout
