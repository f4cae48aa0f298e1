"""Shared by the surface tests: uvicorn on a free loopback port, and a small study workspace
(real SQLite, the real WordLlama embedder, extractive ask: a real pipeline with no LLM)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from footnote.workspace import Workspace

PAPER = """# Retrieval study

## Method

Hybrid retrieval indexes every paragraph with BM25 and dense vectors, then fuses the rankings with reciprocal rank fusion.

## Results

Hybrid retrieval reached a recall@10 of 0.74, ahead of BM25 at 0.61.

The corpus contains 1,213 annotated papers collected from the ACL Anthology.
"""
SECRET = """# Internal memo

## Budget

The internal project budget for the retrieval study was 48,000 euros.
"""
CONFIG = """[models.embed]
url = "local:wordllama"

[models.summarise]
url = ""

[models.cypher]
url = ""

[ask]
mode = "extractive"
use_judge = false

[graph]
understand = "rules"
answer = "template"

[models.judge]
url = ""

[research]
select = "rules"
writer = "extractive"
"""


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def study_workspace(folder: Path, *, secret: bool = False) -> Workspace:
    """A workspace with the study paper (public) and, optionally, a memo for group `staff`;
    its config.toml (so other processes opening it agree) binds WordLlama, extractive ask,
    no summarise, cypher or judge model, rule-based graph QA, research by rules and extractive
    chapters (no embedded LLM is loaded)."""
    (folder / "ws").mkdir(parents=True, exist_ok=True)
    (folder / "ws" / "config.toml").write_text(CONFIG, encoding="utf-8")
    ws = Workspace.open(folder / "ws")
    paper = folder / "study.md"
    paper.write_text(PAPER, encoding="utf-8")
    assert ws.ingest([paper]).results[0].outcome == "added"
    if secret:
        memo = folder / "memo.md"
        memo.write_text(SECRET, encoding="utf-8")
        assert ws.ingest([memo], acl_groups=["staff"]).results[0].outcome == "added"
    return ws


class LiveServer:
    """An ASGI app under uvicorn in a background thread; `url` once entered."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            assert time.time() < deadline, "server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def add_films(ws: Workspace) -> None:
    """The `films` test graph (tests/data/graph_films.py) as workspace graph `films`."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "data" / "graph_films.py"
    spec = importlib.util.spec_from_file_location("graph_films", path)
    assert spec is not None and spec.loader is not None
    films = sys.modules.get("graph_films") or importlib.util.module_from_spec(spec)
    if "graph_films" not in sys.modules:
        spec.loader.exec_module(films)
        sys.modules["graph_films"] = films
    from footnote.store.graph.base import GraphSpec

    graph = GraphSpec.model_validate(films.FILMS)
    ws.graph_catalog().create(graph, films.NODES, films.RELS, replace=True)
