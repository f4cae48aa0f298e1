"""`footnote eval research-dev`: the research dev set through the brief pipeline and the
baseline mode in the same run, scored by `research_metrics`, stored and resumable.

The library (QASPER full texts and PaperQA stubs read from the shared data) is ingested once
into the evaluation workspace; the fixture web is served on loopback and the workspace's
research settings point the search provider and fetcher at it (loopback allowed only here)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from footnote.errors import FootnoteError, NotFound
from footnote.eval.fixture_web import FixtureWeb
from footnote.eval.loaders import _leval_markdown, _papers_json, _sections
from footnote.eval.research_metrics import Judge, score_brief, summarise
from footnote.eval.runs import EvalRun, create_run, git_revision, open_run
from footnote.serialize import brief_to_dict
from footnote.workspace import Workspace

DATA = Path(str(resources.files("footnote.eval").joinpath("datasets/research")))
MODES = ("brief", "baseline")
Progress = Callable[[str], None]


def load_cases(
    limit: int | None = None, langs: Sequence[str] = (), ids: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The research dev set, filtered."""
    cases = [
        json.loads(line)
        for line in (DATA / "research_dev.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    if ids:
        cases = [c for c in cases if c["id"] in ids]
    if langs:
        cases = [c for c in cases if c["lang"] in langs]
    return cases[:limit] if limit else cases


def library_files(cases: Sequence[dict[str, Any]], data: Path, cache: Path) -> dict[str, Path]:
    """Library ref → a file to ingest (QASPER texts written as Markdown into `cache`)."""
    index = json.loads((DATA / "qasper_papers.json").read_text(encoding="utf-8"))
    cache.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    train: dict[str, dict[str, Any]] | None = None
    for ref in sorted({r for c in cases for r in c["library"]}):
        if not ref.startswith("qasper:"):
            path = data / ref
            if not path.is_file():
                raise NotFound(f"library file {path} is missing (shared data)")
            out[ref] = path
            continue
        key = ref.split(":", 1)[1]
        entry = index.get(key) or next(
            (e for e in index.values() if e.get("leval_id") == key), None
        )
        if entry is None:
            raise NotFound(f"{ref} is not in qasper_papers.json")
        md = cache / f"{key}.md"
        if not md.exists():
            src = data / entry["file"]
            if "line" in entry:
                row = json.loads(
                    src.read_text(encoding="utf-8").splitlines()[entry["line"]]
                )  # 0-based
                title = f"# {entry.get('description') or key}\n\n"  # LEval texts have no title
                md.write_text(title + _leval_markdown(row["input"]), encoding="utf-8")
            else:
                if train is None:
                    train = {p.get("id") or p.get("paper_id", ""): p for p in _papers_json(src)}
                paper = train[entry["paper_id"]]
                parts = [f"# {paper['title']}", "", "## Abstract", "", paper["abstract"]]
                for name, paras in _sections(paper):
                    parts += ["", f"## {name or 'Section'}", ""] + [p for p in paras if p.strip()]
                md.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
        out[ref] = md
    return out


def research_overrides(web: FixtureWeb) -> dict[str, Any]:
    """Research settings that point search and fetch at the fixture web on loopback."""
    return {"search_url": f"searxng+{web.base}", "allowed_domains": ["example"],
            "allow_loopback": True, "resolve": {"*.example": "127.0.0.1"}}  # fmt: skip


def confirmed_on_fixture_web(
    path: Path, web: FixtureWeb, question: str, item_ids: Sequence[str], **research: Any
) -> tuple[Workspace, str]:
    """A workspace searching the fixture web (no bound model; `research` settings added) and a
    run of `question` whose proposed outline is confirmed with the items `item_ids` alone."""
    from footnote.serialize import to_plain
    from footnote.workspace.research import confirm_outline, start_research

    overrides = {
        "research": research_overrides(web) | research,
        "models": {"judge": {"url": ""}, "compose": {"url": ""}, "understand": {"url": ""}},
    }
    ws = Workspace.open(path, overrides=overrides)
    run_id, outline = start_research(ws, question)
    keep = [i for i in outline.items if i.id in item_ids]
    confirm_outline(ws, run_id, {"items": [to_plain(i) for i in keep]})
    return ws, run_id


def _judge(ws: Workspace) -> Callable[[Sequence[str]], Judge] | None:
    """The scorer's judge for a brief, given the labels of the brief's cards (the licence gate
    sees them like any other call), or None without a bound judge."""
    from footnote.models import judge_support

    if not ws.models.is_bound("judge"):
        return None
    model = ws.models.chat("judge")

    def for_labels(labels: Sequence[str]) -> Judge:
        return lambda claim, passage: float(judge_support(model, claim, passage, labels=labels))

    return for_labels


async def run_case(
    ws: Workspace, case: dict[str, Any], mode: str, options: dict[str, Any]
) -> dict[str, Any]:
    """One brief of a case in one mode (errors are recorded, never scored as success);
    `options["source_ids"]`: the library sources the brief may draw on (absent: all)."""
    from footnote.workspace.research import confirm_outline, run_research, start_research

    t0 = time.time()
    try:
        run_id, _ = start_research(ws, case["question"], template=case["template"], web=case["web"],
                                   mode=mode, budget_tokens=options.get("budget_tokens"),
                                   budget_minutes=options.get("budget_minutes"),
                                   source_ids=options.get("source_ids"))  # fmt: skip
        confirm_outline(ws, run_id)
        brief = None
        async for event in run_research(ws, run_id):
            if event.type == "brief":
                brief = brief_to_dict(event.brief)
        if brief is None:
            raise FootnoteError("the run ended without a brief")
        return {"brief": brief, "run_id": run_id, "seconds": round(time.time() - t0, 2)}
    except (FootnoteError, OSError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "seconds": round(time.time() - t0, 2)}


def source_id(ws: Workspace, path: Path) -> str:
    """The id of an ingested library file."""
    record = ws.store.find_source_by_uri(str(path.resolve()))
    if record is None:
        raise NotFound(f"{path} is not ingested")
    return record.source.id


async def run_research_eval(
    ws: Workspace, data: Path, *, run_id: str, cases: Sequence[dict[str, Any]],
    modes: Sequence[str] = MODES, judge: bool = True, options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> EvalRun:  # fmt: skip
    """Run (or resume) the cases in every mode and score each brief."""
    options = options or {}
    folder = ws.dir / "eval" / run_id
    if (folder / "run.json").is_file():
        run = open_run(ws.dir, run_id)  # resumed or extended by more questions
        run.meta["case_ids"] = list(
            dict.fromkeys([*run.meta["case_ids"], *(c["id"] for c in cases)])
        )
        run.save_meta()
    else:
        meta = {"dataset": "research-dev", "mode": "+".join(modes), "case_ids": [c["id"] for c in cases],
                "modes": list(modes), "options": options, "git": git_revision(),
                "bindings": {r: b.url for r, b in ws.models.bindings().items()}}  # fmt: skip
        run = create_run(ws.dir, run_id, meta)
    # the whole dev set's library (27 documents), whichever questions run: retrieval is measured
    # over a library of that size, not over each question's own papers (unless
    # `options["scoped"]`: each brief draws on its question's papers only)
    files = library_files(load_cases(), data, ws.dir / "eval-cache" / "research")
    todo = [p for p in files.values() if ws.store.find_source_by_uri(str(p.resolve())) is None]
    if todo:
        if progress:
            progress(f"ingesting {len(todo)} library papers")
        ws.ingest(todo)
    scorer = _judge(ws) if judge else None
    from footnote.workspace.research import research_store

    store = research_store(ws)

    def snapshot_text(card: dict[str, Any]) -> str | None:
        if card.get("block_id"):
            block = ws.store.get_block(card["block_id"])
            return None if block is None else (block.table.as_text() if block.table else block.text)
        snap = store.get_snapshot(card.get("snapshot_id") or "")
        return snap.text if snap else None

    done = {(r["case"], r["mode"]) for r in run.records}
    for case in cases:
        for mode in modes:
            if (case["id"], mode) in done:
                continue
            if progress:
                progress(f"{case['id']} [{mode}]")
            opts = dict(options)
            if opts.pop("scoped", False):  # the question's own papers, as `research run -s`
                opts["source_ids"] = [source_id(ws, files[ref]) for ref in case["library"]]
            out = await run_case(ws, case, mode, opts)
            record: dict[str, Any] = {"case": case["id"], "mode": mode, **out}
            if "brief" in out:
                labels = sorted({lab for c in out["brief"]["cards"] for lab in c.get("labels", [])})
                judge_fn = scorer(labels) if scorer is not None else None
                record["scores"] = score_brief(case, out["brief"], snapshot_text, judge_fn)
            run.add(record)
    run.meta["finished_at"] = time.time()
    run.meta["judge"] = ws.settings.models.judge.url if scorer else None
    run.save_meta()
    return run


def research_report(run: EvalRun) -> dict[str, Any]:
    """Per-mode summaries of a stored run (and the brief-vs-baseline differences)."""
    modes = run.meta.get("modes", list(MODES))
    summary = {m: summarise(run.records, m) for m in modes}
    out: dict[str, Any] = {"run_id": run.id, "judge": run.meta.get("judge"), "modes": summary,
                           "cases": len(run.meta.get("case_ids", []))}  # fmt: skip
    if "brief" in summary and "baseline" in summary:
        a, b = summary["brief"], summary["baseline"]
        out["brief_minus_baseline"] = {
            k: round(a[k] - b[k], 4) for k in ("coverage_det", "coverage_judged", "precision_det", "recall_det",
                                                "precision_judged", "recall_judged", "tokens", "minutes")
            if isinstance(a.get(k), float | int) and isinstance(b.get(k), float | int)
        }  # fmt: skip
    (run.dir / "report.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    return out
