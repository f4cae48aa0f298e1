"""Run a dataset through `Workspace.ask`, case by case, into a stored, resumable run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from footnote.errors import FootnoteError, NotFound, UsageError
from footnote.eval.cases import Case, case_to_dict, select
from footnote.eval.loaders import Dataset
from footnote.eval.metrics import score_case
from footnote.eval.runs import EvalRun, create_run, git_revision, new_run_id, open_run
from footnote.events import Error, Final
from footnote.serialize import answer_to_dict
from footnote.types import Answer
from footnote.verify import Evidence, EvidenceSet, check_citation
from footnote.verify.checks import is_yes_no, yes_no_claim

if TYPE_CHECKING:
    from footnote.models import RoleModel
    from footnote.workspace import Workspace

MODES = ("auto", "cite", "attach", "extractive")
Progress = Callable[[int, int, str], None]
"""`progress(done, total, case_id)`."""


@dataclass(frozen=True)
class RunOptions:
    """What to run: compose mode override, filters, parallelism, citation judging."""

    mode: str | None = None
    limit: int | None = None
    types: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    parallel: int = 1
    judge_citations: bool = True
    timeout_s: float | None = 900.0
    """A case running longer is stopped and counted as an error (None: no limit)."""


def start_run(
    ws: Workspace, spec: str, dataset: Dataset, opts: RunOptions, run_id: str | None = None
) -> tuple[EvalRun, list[Case]]:
    """A new run (or the stored one named `run_id`, resumed) and the cases it still has to do."""
    if opts.mode is not None and opts.mode not in MODES:
        raise UsageError(f"unknown mode {opts.mode!r}; expected one of {', '.join(MODES)}")
    if run_id and (ws.dir / "eval" / run_id / "run.json").is_file():
        run = open_run(ws.dir, run_id)
        if opts.mode is not None and opts.mode != run.meta["mode"]:
            raise UsageError(f"run {run_id} uses mode {run.meta['mode']!r}, not {opts.mode!r}")
        wanted = set(run.meta["case_ids"])
        if not wanted <= {c.id for c in dataset.cases}:
            raise UsageError(f"run {run_id} was made from another dataset ({run.meta['dataset']})")
        todo = [c for c in dataset.cases if c.id in wanted and c.id not in run.done_ids]
        return run, todo
    chosen = select(dataset.cases, types=opts.types, langs=opts.langs, limit=opts.limit)
    if not chosen:
        raise UsageError("no case left after the --type/--lang/--limit filters")
    mode = opts.mode or ws.settings.ask.mode
    meta = {
        "dataset": spec,
        "dataset_name": dataset.name,
        "root": str(dataset.root),
        "options": asdict(opts),
        "mode": mode,
        "case_ids": [c.id for c in chosen],
        "git": git_revision(),
        "bindings": {r: b.url for r, b in ws.models.bindings().items()},
        "settings": ws.settings.model_dump(mode="json"),
    }
    return create_run(ws.dir, run_id or new_run_id(dataset.name, mode), meta), chosen


def ingest_papers(ws: Workspace, dataset: Dataset, cases: Sequence[Case]) -> dict[str, str]:
    """Ingest every paper the cases need; paper path → source id (failed papers are left out)."""
    paths = sorted({dataset.paper_path(c) for c in cases})
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise NotFound(f"paper file(s) not found: {', '.join(missing[:5])}")
    report = ws.ingest(paths)
    return {str(r.path.resolve()): r.source.id for r in report.results if r.source is not None}


async def run_cases(
    ws: Workspace,
    run: EvalRun,
    dataset: Dataset,
    cases: Sequence[Case],
    opts: RunOptions,
    progress: Progress | None = None,
) -> EvalRun:
    """Ask every case (at most `opts.parallel` at once), storing each as soon as it finishes."""
    sources = ingest_papers(ws, dataset, cases)
    judge = _judge_model(ws) if opts.judge_citations else None
    slots = asyncio.Semaphore(max(1, opts.parallel))
    done = len(run.records)
    total = done + len(cases)

    async def one(case: Case) -> None:
        nonlocal done
        async with slots:
            source = sources.get(str(dataset.paper_path(case)))
            if source is None:
                output: dict[str, Any] = _error_output(f"paper {case.paper} could not be ingested")
            else:
                output = await _guarded(
                    ask_case(
                        ws, case, source, run.meta["mode"], judge, exclusive=opts.parallel == 1
                    ),
                    opts.timeout_s,
                )
            run.add(
                {"case": case_to_dict(case), "output": output, "scores": score_case(case, output)}
            )
            done += 1
            if progress:
                progress(done, total, case.id)

    await asyncio.gather(*(one(c) for c in cases))
    run.meta["finished_at"] = time.time()
    run.save_meta()
    return run


def _judge_model(ws: Workspace) -> RoleModel | None:
    try:
        return ws.models.chat("judge") if ws.models.is_bound("judge") else None
    except FootnoteError:
        return None


def _error_output(message: str, latency_s: float = 0.0) -> dict[str, Any]:
    return {
        "status": "error",
        "answer": "",
        "error": message,
        "errors": [message],
        "citations": [],
        "sentences": [],
        "latency_s": round(latency_s, 3),
    }


async def _guarded(
    work: Coroutine[Any, Any, dict[str, Any]], timeout_s: float | None
) -> dict[str, Any]:
    """One case's output; a crash or a timeout becomes an `error` output (never a refusal)."""
    t0 = time.perf_counter()
    try:
        return await asyncio.wait_for(work, timeout_s)
    except TimeoutError:
        return _error_output(
            f"timeout: the case ran past {timeout_s:g} s", time.perf_counter() - t0
        )
    except Exception as exc:  # one failing case is recorded; the run goes on
        return _error_output(f"crash: {type(exc).__name__}: {exc}", time.perf_counter() - t0)


async def ask_case(
    ws: Workspace,
    case: Case,
    source_id: str,
    mode: str,
    judge: RoleModel | None,
    exclusive: bool = True,
) -> dict[str, Any]:
    """One question through the pipeline; the stored output with per-citation judgments."""
    t0 = time.perf_counter()
    ledger = ws.models.ledger
    first_record = len(ledger)
    events = ws.ask(case.question, sources=[source_id], mode=mode)
    run_id = ws.last_run_id or ""
    answer: Answer | None = None
    errors: list[str] = []
    async for event in events:
        if isinstance(event, Error):
            errors.append(f"{event.code}: {event.message}")
        elif isinstance(event, Final):
            answer = event.answer
    latency = time.perf_counter() - t0
    if answer is None:
        return _error_output("; ".join(errors) or "the pipeline ended without an answer", latency)
    spans = ws.runs.spans(run_id)
    checks = [s for s in spans if s.kind == "check"]
    # "shown" is what the composing model was shown (not everything retrieved)
    shown = {i for s in spans if s.kind == "evidence" and s.name == "shown" for i in s.data["ids"]}
    public = answer_to_dict(answer, run_id=run_id)
    # judge calls are not tagged with the run id in the ledger, so (with one case at a time)
    # count every call made while this case ran; the extra evaluation judgments come after
    calls = [r for r in ledger.records()[first_record:] if not r.cache_hit]
    tokens_in = max(answer.usage.tokens_in, sum(r.tokens_in for r in calls) if exclusive else 0)
    tokens_out = max(answer.usage.tokens_out, sum(r.tokens_out for r in calls) if exclusive else 0)
    citations = await asyncio.to_thread(_judge_citations, ws, answer, shown, judge)
    return {
        "run_id": run_id,
        # a model error or a failed stage ends in a refusal-looking answer: it is an error
        "status": "error" if errors else answer.status,
        "answer": answer.plain_text,
        "answer_shown": answer.text,
        "reason": answer.reason,
        "support_score": answer.support_score,
        "sentences": [
            {
                "text": s.text,
                "factual": s.factual,
                "insufficient": s.marked_insufficient,
                "cites": [c.evidence_id for c in s.citations],
            }
            for s in answer.sentences
        ],
        "citations": citations,
        "evidence_board": public["evidence_board"],
        "nearest": public["nearest"],
        "shown": sorted(shown),
        "fabricated_trace": sum(1 for s in checks if s.data.get("fabricated")),
        "recited_trace": sum(1 for s in checks if s.data.get("recited_from")),
        "checked_citations": len(checks),
        "model_calls": len(calls) if exclusive else sum(1 for s in spans if s.kind == "model"),
        "judge_calls": sum(1 for s in spans if s.kind == "model" and s.name == "judge"),
        "tokens": tokens_in + tokens_out,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "latency_s": round(latency, 3),
        "errors": errors,
    }


def _judge_citations(
    ws: Workspace, answer: Answer, shown: set[str], judge: RoleModel | None
) -> list[dict[str, Any]]:
    """Each output citation with its block text, the deterministic verdict and the judge's."""
    from footnote.models import judge_support

    threshold = ws.settings.verify.supported_threshold
    out = []
    for s in answer.sentences:
        for c in s.citations:
            base = c.evidence_id.split("#", 1)[0]
            block = ws.store.get_block(base)
            row: dict[str, Any] = {
                "id": c.evidence_id,
                "sentence": s.text,
                "page": c.page,
                "verdict": c.verdict,
                "fabricated": block is None or base not in shown,
                "text": "",
                "det_supported": None,
                "judge_supported": None,
                "judge_p": None,
            }
            if block is not None:
                text = block.table.as_text() if block.table is not None else block.text
                row["text"] = text
                det = check_citation(
                    s.text,
                    c.evidence_id,
                    EvidenceSet([Evidence(base, text, block)]),
                    question=answer.question,
                )
                row["det_supported"] = det.verdict == "supported"
                if judge is not None:
                    labels = _labels(ws, block.source_id)
                    try:
                        claim = (
                            yes_no_claim(answer.question, s.text) if is_yes_no(s.text) else s.text
                        )
                        p = judge_support(judge, claim, text, labels=labels)
                    except FootnoteError as exc:
                        row["judge_error"] = str(exc)
                    else:
                        row["judge_p"] = round(p, 4)
                        row["judge_supported"] = p >= threshold
            out.append(row)
    return out


def _labels(ws: Workspace, source_id: str) -> tuple[str, ...]:
    rec = ws.store.get_source(source_id)
    return rec.source.labels if rec else ()


def cache_dir(ws: Workspace) -> Path:
    """Where loaders materialise papers given as text."""
    return Path(ws.settings.eval.cache_dir) if ws.settings.eval.cache_dir else ws.dir / "eval-cache"
