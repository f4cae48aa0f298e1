"""The composition root (L6): the only place concrete implementations are chosen.

CLI, server, evaluation and integration tests all go through `Workspace`; `chat` and `graph`
compose those jobs from the workspace's parts.
"""

from footnote.workspace.core import FileResult, IngestReport, Workspace, open_store
from footnote.workspace.graph import graph_catalog, open_graph_store

__all__ = [
    "FileResult",
    "IngestReport",
    "Workspace",
    "graph_catalog",
    "open_graph_store",
    "open_store",
]
