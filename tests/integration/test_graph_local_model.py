"""Graph QA with the real local model (Qwen2.5-Coder-1.5B) writing Cypher for the movies graph."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from footnote.config import GraphSettings, load_settings
from footnote.index.graph.align import entity_index
from footnote.models import build_roles
from footnote.models.weights import default_cache_dir
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import demo_rows, demo_spec
from footnote.workspace import graph_catalog

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def _ready() -> str:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if not (default_cache_dir("") / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf").exists():
        return "the local model is not assembled (scripts/setup)"
    return ""


@pytest.mark.skipif(bool(_ready()), reason=_ready() or "ready")
async def test_local_model_writes_a_guarded_query(tmp_path: Path) -> None:
    cfg = GraphSettings(dir=str(tmp_path), understand="rules", answer="template", retries=1)
    cat = graph_catalog(cfg, tmp_path)
    cat.create(demo_spec("movies"), *demo_rows("movies"))
    store = cat.open("movies")
    roles = build_roles(load_settings(tmp_path / "ws").models)
    pipe = GraphQAPipeline(GraphDeps(store, entity_index(store, None, cfg, None), cfg,
                                     cypher_model=roles.chat("cypher")))  # fmt: skip
    async for _ in pipe.run(GraphRequest("How many movies were released after 2000?")):
        pass
    store.close()
    o = pipe.outcome
    assert o.source in ("model", "retry")
    assert o.status == "answered", o.reason
    assert o.rows == [{next(iter(o.rows[0])): 12}]
