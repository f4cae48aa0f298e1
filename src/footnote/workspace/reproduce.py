"""Composition of the reproduction job: settings tables, cross-checks, the code sandbox and the
agent's `run_python` / `experiment_settings` tools (runs traced in the workspace store)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from footnote.access import readable_by
from footnote.agent.compute import CitedNumber, Computation, ComputeContext, add_compute_tool
from footnote.agent.library_tools import LibraryContext
from footnote.agent.sandbox import Sandbox, SandboxLimits
from footnote.agent.tools import ToolRegistry
from footnote.errors import ConfigError, NotFound, ToolRetry
from footnote.events import CrossCheckEvent, Done, Event, Final, Status
from footnote.models.budget import Budget
from footnote.pipelines.reproduce.crosscheck import cross_checks
from footnote.pipelines.reproduce.settings import SettingsDeps, SettingsPipeline
from footnote.pipelines.reproduce.table import SettingsTable
from footnote.pipelines.trace import Trace
from footnote.store import SourceRecord
from footnote.types import Block, Citation

if TYPE_CHECKING:
    from footnote.workspace.core import Workspace

ProgressFn = Callable[[Event], None]


def _visible(ws: Workspace, ref: str, user_groups: tuple[str, ...] | None) -> SourceRecord:
    record = ws.resolve_source(ref, user_groups=user_groups, paths=user_groups is None)
    if not readable_by(record.source, user_groups):
        raise NotFound(f"no source {ref!r}")
    return record


def extractor_for(ws: Workspace, override: str | None = None) -> str:
    """`rules`, `model` or `hybrid`: `auto` is hybrid when the extraction role is bound."""
    choice = override or ws.settings.reproduce.extractor
    if choice not in ("auto", "rules", "model", "hybrid"):
        raise ConfigError(f"unknown extractor {choice!r}: auto, rules, model or hybrid")
    if choice == "auto":
        return "hybrid" if ws.models.is_bound(ws.settings.reproduce.role) else "rules"
    if choice in ("model", "hybrid") and not ws.models.is_bound(ws.settings.reproduce.role):
        raise ConfigError(
            f"the {choice} extractor needs models.{ws.settings.reproduce.role}.url to be bound"
        )
    return choice


def settings_events(
    ws: Workspace,
    ref: str,
    *,
    extractor: str | None = None,
    user_groups: tuple[str, ...] | None = None,
    user_id: str = "local",
    run_id: str | None = None,
) -> tuple[SettingsPipeline, AsyncIterator[Event]]:
    """The settings job on one source as events (a traced `settings` run); the pipeline's
    `table` holds the result once they are consumed."""
    record = _visible(ws, ref, user_groups)
    kind = extractor_for(ws, extractor)
    cfg = ws.settings.reproduce
    trace = Trace(run_id, sink=ws.runs.add_span)
    model = ws.models.chat(cfg.role) if kind != "rules" else None
    deps = SettingsDeps(
        ws.store, kind, model, cfg.candidates, record.source.labels, trace,
        Budget(None, None, None),
    )  # fmt: skip
    pipeline = SettingsPipeline(deps)
    ws.runs.start(trace.run_id, "settings", {"source": record.source.id, "extractor": kind},
                  user_id=user_id)  # fmt: skip

    async def events() -> AsyncIterator[Event]:
        output: dict[str, Any] | None = None
        try:
            async for event in pipeline.run(record.source.id, record.source.title):
                yield event
            output = pipeline.table.to_dict() if pipeline.table else None
        finally:
            ws.runs.finish(trace.run_id, "done" if output else "cancelled", output)

    return pipeline, events()


async def settings_table(
    ws: Workspace,
    ref: str,
    *,
    extractor: str | None = None,
    user_groups: tuple[str, ...] | None = None,
    user_id: str = "local",
    progress: ProgressFn | None = None,
) -> SettingsTable:
    """The verified settings table of one source."""
    pipeline, events = settings_events(
        ws, ref, extractor=extractor, user_groups=user_groups, user_id=user_id
    )
    async for event in events:
        if progress is not None:
            progress(event)
    assert pipeline.table is not None
    return pipeline.table


def crosscheck_report(
    ws: Workspace, ref: str, *, user_groups: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Every cross-check of one source, mismatches first."""
    record = _visible(ws, ref, user_groups)
    blocks = list(ws.store.iter_blocks(record.source.id))
    checks = cross_checks(blocks, ws.settings.reproduce.crosscheck_tolerance)
    rows = [c.to_dict() for c in checks]
    rows.sort(key=lambda r: r["adds_up"])
    return {
        "source": {"id": record.source.id, "title": record.source.title},
        "checks": rows,
        "total": len(rows),
        "mismatches": sum(1 for r in rows if not r["adds_up"]),
    }


async def crosscheck_events(
    ws: Workspace, ref: str, *, user_groups: tuple[str, ...] | None = None
) -> AsyncIterator[Event]:
    """The cross-checks as events (one `crosscheck` each)."""
    report = await asyncio.to_thread(crosscheck_report, ws, ref, user_groups=user_groups)
    yield Status("crosscheck", f"{report['total']} checks, {report['mismatches']} mismatches")
    for row in report["checks"]:
        yield CrossCheckEvent(row)
    yield Done()


def sandbox(ws: Workspace) -> Sandbox:
    """The code sandbox with the configured limits."""
    s = ws.settings.sandbox
    limits = SandboxLimits(s.cpu_seconds, s.wall_seconds, s.memory_mb, s.output_chars)
    return Sandbox(limits, python=s.python or None)


def compute(
    ws: Workspace,
    code: str,
    inputs: dict[str, str | CitedNumber],
    *,
    user_groups: tuple[str, ...] | None = None,
) -> Computation:
    """Run a snippet over cited numbers of sources the caller may read (`footnote compute`)."""

    def block_of(block_id: str) -> Block:
        block = ws.store.get_block(block_id)
        record = ws.store.get_source(block.source_id) if block else None
        if block is None or record is None or not readable_by(record.source, user_groups):
            raise ToolRetry(f"no block {block_id!r}")
        return block

    return ComputeContext(sandbox(ws), block_of).compute(code, inputs)


def add_reproduce_tools(
    ws: Workspace,
    ctx: LibraryContext,
    tools: ToolRegistry,
    loop: asyncio.AbstractEventLoop,
) -> ComputeContext:
    """Give an agent `run_python` (inputs must be evidence it was shown) and
    `experiment_settings`; returns the context that keeps its computations."""

    def block_of(block_id: str) -> Block:
        if block_id not in ctx.seen:
            raise ToolRetry(f"{block_id} has not been shown yet: read it (get_table) first")
        return ctx.block(block_id)

    compute_ctx = ComputeContext(sandbox(ws), block_of)
    if sandbox(ws).problem() is None:
        add_compute_tool(tools, compute_ctx)

    def experiment_settings(source_id: str) -> dict[str, Any]:
        """The paper's experimental setup (model, data splits, hyper-parameters, hardware,
        metrics, baselines) as a table whose every value cites the block or cell it is from.

        Args:
            source_id: an id from list_sources.
        """
        if not ctx.visible(source_id):
            raise ToolRetry(f"no source {source_id!r}: use an id from list_sources")
        future = asyncio.run_coroutine_threadsafe(
            settings_table(ws, source_id, extractor="rules", user_groups=ctx.user_groups), loop
        )
        table = future.result()
        return {
            "source": table.source_id,
            "settings": {
                r.field: [f"{v.value} [{v.evidence_id}]" for v in r.values] or "not stated"
                for r in table.rows
            },
        }

    tools.add(experiment_settings)
    return compute_ctx


def computation_blocks(compute_ctx: ComputeContext) -> list[Block]:
    """The run's computations as citable evidence blocks."""
    return [c.block() for c in compute_ctx.computations.values()]


async def with_computation_inputs(
    events: AsyncIterator[Event], compute_ctx: ComputeContext, store: Any
) -> AsyncIterator[Event]:
    """The verified answer's events, with each cited computation's input cells on its board."""
    async for event in events:
        if isinstance(event, Final):
            board = list(event.answer.evidence_board)
            have = {c.evidence_id for c in board}
            for c in list(board):
                comp = compute_ctx.computations.get(c.evidence_id)
                for i in comp.inputs if comp else ():
                    if i.cite in have:
                        continue
                    have.add(i.cite)
                    block = store.get_block(i.cite.split("#", 1)[0])
                    board.append(
                        Citation(
                            i.cite, quote=i.text, page=block.page if block else None,
                            section=block.section_path if block else (), verdict=c.verdict,
                            relevance=c.relevance,
                            checks={"input": f"{i.name} = {i.value:g} of {comp.id}"},  # type: ignore[union-attr]
                        )
                    )  # fmt: skip
            event = Final(dataclasses.replace(event.answer, evidence_board=tuple(board)))
        yield event
