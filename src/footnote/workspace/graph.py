"""Composition of graph QA: which engine opens a graph, the pipeline wired with models, and
graph conversations (sessions) for the Python library, MCP and the chat agent's tool."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.config import GraphSettings
from footnote.errors import NotFound, UsageError
from footnote.index.graph.align import build_alignment, entity_index
from footnote.pipelines.graph.context import ExampleRetriever, example_library
from footnote.pipelines.graph.conversation import MAX_TURNS, GraphTurn, turn_from_data
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.rungs import fallback_rung
from footnote.store.graph.base import SPEC_FILENAME, GraphSpec, GraphStore, save_spec
from footnote.store.graph.catalog import DERIVED_DIR, GraphCatalog
from footnote.store.records import User, new_id
from footnote.verify.cypher.guard import Principal

if TYPE_CHECKING:
    from footnote.agent.tools import ToolRegistry
    from footnote.models import RoleModel
    from footnote.pipelines.graph.agent_cite import GraphRowsShown
    from footnote.workspace.core import Workspace

SESSION_PREFIX = "graph:"
"""Graph sessions are stored apart from chat sessions of the same id (as `/v1/graph/ask`)."""


def open_graph_store(
    settings: GraphSettings, folder: Path, spec: GraphSpec, writable: bool
) -> GraphStore:
    """The graph engine: an attached graph's own database (`spec.database`), else FalkorDB
    when `graph.url` is set, else embedded LadybugDB in the graph's folder."""
    if spec.database:
        return _attached_store(folder, spec, writable)
    if settings.url:
        from footnote.store.graph.falkor import FalkorGraph

        return FalkorGraph(settings.url.rstrip("/") + "/" + folder.name, spec)
    from footnote.store.graph.ladybug import LadybugGraph

    return LadybugGraph(folder, spec, writable=writable)


def _attached_store(folder: Path, spec: GraphSpec, writable: bool) -> GraphStore:
    if writable:
        raise UsageError(f"graph {spec.name!r} reads {spec.database} in place: nothing to import")
    if spec.database.startswith("falkor://"):
        from footnote.store.graph.falkor import FalkorGraph

        return FalkorGraph(spec.database, spec)
    from footnote.store.graph.ladybug import LadybugGraph

    return LadybugGraph(folder, spec, path=Path(spec.database))


def attach_graph(ws: Workspace, name: str, database: str, *, replace: bool = False) -> GraphSpec:
    """Make graph `name` read an existing database in place — a LadybugDB file or a
    `falkor://host:port/graph` URL — with the spec its schema introspection gives (labels,
    relationship types, typed properties, example values: `store.graph.introspect`) and the
    alignment index built from its names; nothing is imported."""
    from footnote.store.graph.introspect import introspect

    catalog = ws.graph_catalog()
    folder = catalog.folder(name)
    if (folder / SPEC_FILENAME).exists() and not replace:
        raise UsageError(f"graph {name!r} exists: pass --replace to attach it again")
    if not database.startswith("falkor://"):
        database = str(Path(database).expanduser().resolve())
    probe = _attached_store(folder, GraphSpec(name=name, nodes={}, database=database), False)
    try:
        spec = introspect(probe, name, database)
    finally:
        probe.close()
    save_spec(spec, folder / SPEC_FILENAME)
    store = catalog.open(name)
    try:
        build_alignment(store, folder / DERIVED_DIR).close()
    finally:
        store.close()
    return spec


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


def session_history(
    ws: Workspace, user_id: str, session: str, graph: str, *, must_exist: bool = True
) -> tuple[GraphTurn, ...]:
    """The last turns of `user_id`'s own graph session `session` on `graph`, rebuilt from the
    `turn` span of each of its recorded runs. `must_exist`: a session with no run of this
    user — another user's, or none at all — is `NotFound`, the same answer for both."""
    ids = ws.runs.session_runs(user_id, SESSION_PREFIX + session)
    if must_exist and not ids:
        raise NotFound(f"no graph session {session!r}")
    turns = []
    for rid in ids:
        run = ws.runs.get_run(rid)
        if run is None or run.get("kind") != "graph" or run["input"].get("graph") != graph:
            continue
        turns += [turn_from_data(s.data) for s in ws.runs.spans(rid) if s.kind == "turn"]
    return tuple(turns[-MAX_TURNS:])


async def ask_in_session(
    ws: Workspace,
    user: User,
    graph: str,
    question: str,
    session: str | None = None,
    *,
    must_exist: bool = True,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Ask graph `graph` as `user` in a conversation: `session` names one of the user's own
    graph sessions (its earlier turns are the history; see `session_history`), None starts a
    new one. The graph answer contract plus `session`, the id to pass with a follow-up."""
    readable_graph(ws, graph, user.groups)  # an unknown graph before an unknown session
    history = session_history(ws, user.id, session, graph, must_exist=must_exist) if session else ()
    session = session or new_id("gs")
    who = principal_for(user.id, user.groups)  # from the user, never from the request
    pipe = graph_pipeline(ws, graph, user_groups=user.groups)
    request = GraphRequest(
        question, who, run_id=run_id, history=history, session=SESSION_PREFIX + session
    )
    try:
        async for _ in pipe.run(request):
            pass
    finally:
        pipe.close()
    out: dict[str, Any] = pipe.outcome.to_dict()
    out["session"] = session
    return out


def add_agent_graph_tool(
    ws: Workspace,
    tools: ToolRegistry,
    user: User,
    *,
    session_id: str,
    run_id: str,
    loop: asyncio.AbstractEventLoop,
    labels: dict[str, None],
    shown: GraphRowsShown | None = None,
) -> None:
    """Give a chat turn's agent `graph_query` over the graphs `user` may use (none: no tool).
    Its conversation is the chat session's: every graph question of the session — earlier
    turns and earlier calls of this turn — is the history of the next, so "and which of them
    were born after 1960?" resolves; each call is a `graph` run linked to the turn's run.
    A graph's labels join `labels` (what the agent's later model calls carry) once its data
    was shown. `shown` records the rows shown, which the final answer may cite
    (`pipelines.graph.agent_cite`)."""
    from footnote.pipelines.graph.agent_tool import add_graph_tool
    from footnote.verify.graph_answer import schema_words

    specs = {s.name: s for s in visible_graphs(ws, user.groups)}
    counter = itertools.count(1)

    def ask(graph: str, question: str) -> dict[str, Any]:
        child = f"{run_id}.graph{next(counter)}"
        coro = ask_in_session(ws, user, graph, question, session_id, must_exist=False,
                              run_id=child)  # fmt: skip
        out = asyncio.run_coroutine_threadsafe(coro, loop).result()
        ws.runs.link_runs(run_id, child)
        labels.update(dict.fromkeys(specs[graph].labels))
        return out

    vocabulary = {name: schema_words(spec) for name, spec in specs.items()}
    add_graph_tool(tools, list(specs), ask, shown=shown, vocabulary=vocabulary)
