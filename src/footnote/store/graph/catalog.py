"""The catalog of graph folders: names, specs, creating a graph from rows."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings
from footnote.errors import NotFound, UsageError
from footnote.store.graph.base import (
    SPEC_FILENAME,
    GraphSpec,
    GraphStore,
    load_spec,
    sampled,
    save_spec,
)

Rows = dict[str, list[dict[str, Any]]]
"""Rows per node label or relationship type, as importers produce them."""
GraphOpener = Callable[[Path, GraphSpec, bool], GraphStore]
"""`opener(folder, spec, writable)`: the graph engine chosen by the workspace."""
ImportHook = Callable[[Path, GraphStore], None]
"""`on_import(folder, store)`: derived indexes built after rows are imported (alignment)."""
DERIVED_DIR = "align"
"""The folder of derived indexes in a graph's folder: kept across `replace` and updated by the
import hook, so an unchanged name is not embedded again."""


class GraphCatalog:
    """Graph folders under `<workspace>/graphs` (or `graph.dir`) and their specs.

    Which engine opens a graph is not decided here: the composition root passes `opener`
    (`opener(folder, spec, writable) -> GraphStore`).
    """

    def __init__(
        self,
        settings: GraphSettings,
        workspace: Path,
        opener: GraphOpener,
        on_import: ImportHook | None = None,
    ) -> None:
        self.settings = settings
        self.root = Path(settings.dir) if settings.dir else workspace / "graphs"
        self._opener = opener
        self._on_import = on_import

    def folder(self, name: str) -> Path:
        """The folder of graph `name` (validated name)."""
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise UsageError(f"bad graph name {name!r}: letters, digits, - and _ only")
        return self.root / name

    def names(self) -> list[str]:
        """Graphs that have a spec file."""
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{SPEC_FILENAME}"))

    def spec(self, name: str) -> GraphSpec:
        """The spec of graph `name`."""
        path = self.folder(name) / SPEC_FILENAME
        if not path.exists():
            raise NotFound(f"no graph {name!r} (see `footnote graph ls`)")
        return load_spec(path)

    def open(self, name: str, *, writable: bool = False) -> GraphStore:
        """The store of graph `name`, opened by the engine the composition root chose."""
        return self._opener(self.folder(name), self.spec(name), writable)

    def create(
        self, spec: GraphSpec, nodes: Rows, rels: Rows, *, replace: bool = False
    ) -> dict[str, int]:
        """Write the spec and import rows into a new graph (or a replaced one)."""
        folder = self.folder(spec.name)
        if (folder / SPEC_FILENAME).exists():
            if not replace:
                raise UsageError(f"graph {spec.name!r} exists: pass --replace to rebuild it")
            for child in folder.iterdir():
                if child.name != DERIVED_DIR:
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
        spec = sampled(spec.check(), nodes)
        save_spec(spec, folder / SPEC_FILENAME)
        store = self.open(spec.name, writable=True)
        try:
            counts = store.load(nodes, rels)
            if self._on_import is not None:
                self._on_import(folder / DERIVED_DIR, store)
            return counts
        finally:
            store.close()
