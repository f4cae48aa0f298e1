"""Composition of graph QA: which engine opens a graph, and the pipeline wired with models."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from footnote.config import GraphSettings
from footnote.errors import NotFound, UsageError
from footnote.index.graph.align import build_alignment, entity_index
from footnote.pipelines.graph.context import ExampleRetriever, example_library
from footnote.pipelines.graph.ladder import fallback_rung
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.store.graph.catalog import DERIVED_DIR, GraphCatalog
from footnote.verify.cypher.guard import Principal

if TYPE_CHECKING:
    from footnote.models import RoleModel
    from footnote.workspace.core import Workspace


def open_graph_store(
    settings: GraphSettings, folder: Path, spec: GraphSpec, writable: bool
) -> GraphStore:
    """The graph engine: FalkorDB when `graph.url` is set, else embedded LadybugDB."""
    if settings.url:
        from footnote.store.graph.falkor import FalkorGraph

        return FalkorGraph(settings.url.rstrip("/") + "/" + folder.name, spec)
    from footnote.store.graph.ladybug import LadybugGraph

    return LadybugGraph(folder, spec, writable=writable)


def graph_catalog(settings: GraphSettings, workspace_dir: Path) -> GraphCatalog:
    """A graph catalog under `workspace_dir` whose graphs open with the configured engine."""

    def opener(folder: Path, spec: GraphSpec, writable: bool) -> GraphStore:
        return open_graph_store(settings, folder, spec, writable)

    def aligned(folder: Path, store: GraphStore) -> None:  # the alias table, once per import
        build_alignment(store, folder).close()

    return GraphCatalog(settings, workspace_dir, opener, aligned)


def principal_for(user_id: str, groups: tuple[str, ...] | None) -> Principal:
    """The graph principal of an authenticated user, built on the server from the user's
    stored groups (never from a request): `None` groups (the local user, an admin) are
    unrestricted; a group `key:value` gives the row-filter attribute `key` the value `value`
    (`regions:EU` → regions = EU; the personal group `user:<id>` → user = <id>), and the
    attribute `groups` holds every group."""
    if groups is None:
        return Principal(user_id, {}, unrestricted=True)
    attrs: dict[str, list[str]] = {"groups": list(groups)}
    for g in groups:
        key, sep, value = g.partition(":")
        if sep and key and value:
            attrs.setdefault(key, []).append(value)
    return Principal(user_id, {k: tuple(v) for k, v in attrs.items()})


def visible_graphs(ws: Workspace, groups: tuple[str, ...] | None) -> list[GraphSpec]:
    """Specs of the graphs a caller with `groups` may use (the source visibility rule)."""
    catalog = ws.graph_catalog()
    specs = [catalog.spec(n) for n in catalog.names()]
    return [s for s in specs if s.readable_by(groups)]


def readable_graph(ws: Workspace, name: str, groups: tuple[str, ...] | None) -> GraphSpec:
    """The spec of graph `name` if a caller with `groups` may use it (the source visibility
    rule); otherwise `NotFound`, the same answer as for a graph that does not exist."""
    try:
        spec = ws.graph_catalog().spec(name)
    except (NotFound, UsageError):
        spec = None
    if spec is None or not spec.readable_by(groups):
        raise NotFound(f"no graph {name!r} (see `footnote graph ls`)")
    return spec


def graph_pipeline(
    ws: Workspace,
    name: str,
    *,
    user_groups: tuple[str, ...] | None,
    owns_run: bool = True,
    models: Mapping[str, RoleModel] | None = None,
) -> GraphQAPipeline:
    """The graph QA pipeline over graph `name` for a caller with `user_groups` (a graph they
    may not use is `NotFound`, like a missing one), wired with the workspace's models (or only
    `models`, by role, when given: no embedder then); every question it answers is recorded
    as a `graph` run with spans in the run store (started and finished by the pipeline, or
    by the server's run hub with `owns_run=False`)."""
    readable_graph(ws, name, user_groups)
    cfg, roles = ws.settings.graph, ws.models
    catalog = ws.graph_catalog()
    store = catalog.open(name)

    def role(r: str, off: bool = False) -> RoleModel | None:
        if off:
            return None
        if models is not None:
            return models.get(r)
        return roles.chat(r) if roles.is_bound(r) else None

    # the entity names embedded for alignment are the graph's data: they carry its labels
    embedder = (
        roles.embedder().fixed(tuple(store.spec.labels))
        if models is None and roles.is_bound("embed")
        else None
    )
    # the fallback rung is another model only when one other than `cypher` is bound to it
    ids = {
        r: roles.binding(r).url if models is None else getattr(models.get(r), "name", "")
        for r in ("cypher", "cypher_fallback")
    }
    stronger = fallback_rung(ids["cypher"], ids["cypher_fallback"]) == "model"
    deps = GraphDeps(
        store=store,
        index=entity_index(store, embedder, cfg, catalog.folder(name) / DERIVED_DIR),
        settings=cfg,
        understand_model=role("understand", cfg.understand == "rules"),
        cypher_model=role("cypher"),
        fallback_model=role("cypher_fallback", not stronger),
        answer_model=role("compose", cfg.answer == "template"),
        judge_model=role("judge", cfg.answer == "template" or not cfg.judge),
        examples=ExampleRetriever(example_library(store.spec, catalog.folder(name))),
        runs=ws.runs,  # each question is a traced run, like ask
        owns_run=owns_run,
    )
    return GraphQAPipeline(deps)
