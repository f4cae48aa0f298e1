"""`footnote eval`: run a dataset, report, diff two runs, evaluate the verifier alone."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable
from typer.core import TyperGroup

from footnote.cli.common import JsonOpt, WorkspaceOpt, _fail, _print_json, _workspace, app, err, out
from footnote.workspace import Workspace


class _DefaultRun(TyperGroup):
    """`footnote eval DATASET …` means `footnote eval run DATASET …`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(
    cls=_DefaultRun,
    no_args_is_help=True,
    help="Evaluate answers (`footnote eval DATASET`), diff runs, or the verifier alone.\n\n"
    "DATASET is a generic .jsonl case file or a named loader: footnote-dev (-fit, -test), "
    "qasper-leval, qasper-official, qasper-train, paperqa; the claim sets citation-integrity and "
    "scifact evaluate the verifier alone.",
)
app.add_typer(eval_app, name="eval")


def _data_dir(ws: Workspace, given: Path | None) -> Path:
    from footnote.eval.loaders import default_data_dir

    if given:
        return given
    return Path(ws.settings.eval.data_dir) if ws.settings.eval.data_dir else default_data_dir()


@eval_app.command("run")
def run_cmd(
    dataset: Annotated[str, typer.Argument(help="A generic .jsonl file or a loader name.")],
    mode: Annotated[
        str | None, typer.Option(help="Compose mode override: cite, attach, extractive or auto.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="Only the first N cases (after filters).")
    ] = None,
    qtype: Annotated[
        list[str] | None, typer.Option("--type", help="Only this question type (repeatable).")
    ] = None,
    lang: Annotated[list[str] | None, typer.Option(help="Only this language (repeatable).")] = None,
    parallel: Annotated[
        int | None, typer.Option(help="Cases at once (default eval.parallel, 1).")
    ] = None,
    judge: Annotated[
        bool | None,
        typer.Option("--judge/--no-judge", help="Judge output citations with the judge role."),
    ] = None,
    run_id: Annotated[
        str | None, typer.Option(help="Name the run; an existing run of that name is resumed.")
    ] = None,
    root: Annotated[
        Path | None, typer.Option(help="Resolve papers against this folder (default: the file's).")
    ] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="Shared data folder for named loaders.")
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a dataset through the ask pipeline; store, resume and report the run.

    A claim set (citation-integrity, scifact) runs the verifier alone (`eval verifier`).
    """
    from footnote.eval.loaders import load_dataset
    from footnote.eval.verifier import CLAIM_SETS

    if dataset in CLAIM_SETS:
        verifier_cmd(dataset, "dev", None, limit, judge is not False, data_dir, workspace, as_json)
        return
    from footnote.eval.report import terminal_tables, write_reports
    from footnote.eval.runner import RunOptions, cache_dir, run_cases, start_run

    with _workspace(workspace) as ws:
        ds = load_dataset(
            dataset, data_dir=_data_dir(ws, data_dir), cache_dir=cache_dir(ws), root=root
        )
        opts = RunOptions(
            mode=mode,
            limit=limit,
            types=tuple(qtype or ()),
            langs=tuple(lang or ()),
            parallel=parallel or ws.settings.eval.parallel,
            judge_citations=ws.settings.eval.judge_citations if judge is None else judge,
        )
        run, todo = start_run(ws, dataset, ds, opts, run_id)
        if run.records:
            err.print(f"[dim]resuming {run.id}: {len(run.records)} done, {len(todo)} to go[/]")

        def progress(done: int, total: int, case_id: str) -> None:
            err.print(f"[dim]{done}/{total} {escape(case_id)}[/]")

        asyncio.run(run_cases(ws, run, ds, todo, opts, progress))
        report = write_reports(run, ws.settings.eval.calibration_buckets)
    if as_json:
        _print_json({k: v for k, v in report.items() if k != "latencies"})
        return
    for table in terminal_tables(report):
        out.print(table)
    err.print(f"[dim]run {run.id}: {run.dir / 'report.html'}[/]")


@eval_app.command("report")
def report_cmd(
    run_id: Annotated[str, typer.Argument(help="A stored run id (see `footnote eval ls`).")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rebuild and print a stored run's report (also rewrites report.json/html)."""
    from footnote.eval.report import terminal_tables, write_reports
    from footnote.eval.runs import open_run

    with _workspace(workspace) as ws:
        report = write_reports(open_run(ws.dir, run_id), ws.settings.eval.calibration_buckets)
    if as_json:
        _print_json({k: v for k, v in report.items() if k != "latencies"})
        return
    for table in terminal_tables(report):
        out.print(table)


@eval_app.command("ls")
def ls_cmd(workspace: WorkspaceOpt = None, as_json: JsonOpt = False) -> None:
    """List stored evaluation runs."""
    from footnote.eval.runs import list_runs

    with _workspace(workspace) as ws:
        runs = list_runs(ws.dir)
    if as_json:
        _print_json(
            [{k: r.get(k) for k in ("run_id", "dataset", "mode", "finished_cases")} for r in runs]
        )
        return
    table = RichTable("run", "dataset", "mode", "cases", "started")
    for r in runs:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.get("started_at", 0)))
        table.add_row(
            r["run_id"],
            str(r.get("dataset")),
            str(r.get("mode")),
            f"{r['finished_cases']}/{len(r.get('case_ids', []))}",
            started,
        )
    out.print(table)


@eval_app.command("diff")
def diff_cmd(
    run_a: Annotated[str, typer.Argument(help="The baseline run id.")],
    run_b: Annotated[str, typer.Argument(help="The run compared against it.")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show which cases got better or worse from RUN_A to RUN_B."""
    from footnote.eval.diff import diff_runs
    from footnote.eval.runs import open_run

    with _workspace(workspace) as ws:
        result = diff_runs(open_run(ws.dir, run_a), open_run(ws.dir, run_b))
    if as_json:
        _print_json(result)
        return
    table = RichTable(
        title=f"{run_a} → {run_b}: {result['better']} better, {result['worse']} worse, {result['same']} same"
    )
    for col in ("case", "change", "F1 a→b", "correct a→b", "question"):
        table.add_column(col, overflow="fold")
    style = {"better": "green", "worse": "red", "same": "dim"}
    for c in result["cases"]:
        if c["change"] == "same":
            continue
        table.add_row(
            c["id"],
            f"[{style[c['change']]}]{c['change']}[/]",
            f"{c['a']['answer_f1']:.2f}→{c['b']['answer_f1']:.2f}",
            f"{c['a']['correct']}→{c['b']['correct']}",
            escape(c["question"][:80]),
        )
    out.print(table)
    for name, m in result["metrics"].items():
        if m["delta"] is not None:
            out.print(f"  {name:<20} {m['a']:.3f} → {m['b']:.3f}  ({m['delta']:+.3f})")


@eval_app.command("verifier")
def verifier_cmd(
    dataset: Annotated[
        str, typer.Argument(help="citation-integrity, scifact, or a claims .jsonl.")
    ],
    split: Annotated[str, typer.Option(help="dev or test (named sets).")] = "dev",
    corpus: Annotated[Path | None, typer.Option(help="corpus.jsonl for a claims file.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N claims.")] = None,
    judge: Annotated[
        bool, typer.Option("--judge/--no-judge", help="Also score the judge role.")
    ] = True,
    data_dir: Annotated[Path | None, typer.Option(help="Shared data folder.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate the citation verifier alone: deterministic checks vs. checks + judge."""
    from footnote.eval.verifier import claim_files, evaluate_verifier, load_claims
    from footnote.models import judge_support
    from footnote.verify import Thresholds

    with _workspace(workspace) as ws:
        if dataset.endswith(".jsonl"):
            if corpus is None:
                _fail(ValueError("a claims file needs --corpus"))
            claims, corp = Path(dataset), Path(str(corpus))
        else:
            claims, corp = claim_files(dataset, _data_dir(ws, data_dir), split)
            corp = corpus or corp
        items = load_claims(claims, corp)[:limit]
        judge_fn: Any = None
        if judge:
            model = ws.models.chat("judge")
            judge_fn = lambda claim, passage: judge_support(  # noqa: E731
                model,
                claim,
                passage,
                labels=(),  # an evaluation set's text carries no labels
            )
        v = ws.settings.verify
        result = evaluate_verifier(
            items,
            judge_fn,
            Thresholds(v.supported_threshold, v.weak_threshold),
            lambda d, t: err.print(f"[dim]{d}/{t}[/]") if d % 10 == 0 else None,
        )
        folder = ws.dir / "eval" / "verifier"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{Path(dataset).stem}-{split}.json"
        path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    summary = {k: v for k, v in result.items() if k != "items"}
    if as_json:
        _print_json(summary)
        return
    table = RichTable(
        title=f"verifier on {dataset} ({result['n']} claims, {result['supported']} supported)"
    )
    for col in ("verifier", "accuracy", "precision", "recall", "f1"):
        table.add_column(col, justify="right")
    for name in ("deterministic", "judge"):
        if name in result:
            table.add_row(
                name, *(f"{result[name][k]:.3f}" for k in ("accuracy", "precision", "recall", "f1"))
            )
    out.print(table)
    err.print(f"[dim]items: {path}[/]")


@eval_app.command("export")
def export_cmd(
    dataset: Annotated[str, typer.Argument(help="A loader name.")],
    output: Annotated[Path, typer.Argument(help="Where to write the generic .jsonl.")],
    data_dir: Annotated[Path | None, typer.Option(help="Shared data folder.")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Write a named dataset as a generic case file (papers stay in the cache folder)."""
    from footnote.eval.cases import write_cases
    from footnote.eval.loaders import load_dataset
    from footnote.eval.runner import cache_dir

    with _workspace(workspace) as ws:
        ds = load_dataset(dataset, data_dir=_data_dir(ws, data_dir), cache_dir=cache_dir(ws))
        cases = [c.__class__(**{**c.__dict__, "paper": str(ds.paper_path(c))}) for c in ds.cases]
        write_cases(output, cases)
    err.print(f"{len(cases)} cases → {output}")


@eval_app.command("settings")
def settings_eval_cmd(
    extractor: Annotated[
        str | None,
        typer.Option(help="rules, model, hybrid or auto (default: reproduce.extractor)."),
    ] = None,
    paper: Annotated[
        list[str] | None, typer.Option(help="Only gold papers whose reference contains this.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N gold papers.")] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Also write the full report as JSON here.")
    ] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Shared data folder.")] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Score `footnote settings` and `footnote crosscheck` against the hand-written gold
    (15 papers, 2 in Chinese): precision, recall, not-stated accuracy, citation accuracy,
    cross-check findings vs the hand-checked ones, seconds per paper."""
    from footnote.eval.runner import cache_dir
    from footnote.eval.settings_eval import run_settings_eval

    with _workspace(workspace) as ws:
        report = run_settings_eval(
            ws, data=_data_dir(ws, data_dir), cache=cache_dir(ws), extractor=extractor,
            papers=tuple(paper or ()), limit=limit, progress=lambda m: err.print(f"[dim]{escape(m)}[/]"),
        )  # fmt: skip
    if out_file is not None:
        out_file.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    if as_json:
        _print_json(report)
        return
    grid = RichTable(
        title=f"Settings extraction ({report['extractor']}, {report['papers']} papers)"
    )
    for col in ("measure", "value"):
        grid.add_column(col)
    cc = report["crosschecks"]
    for name, value in (
        ("settings precision", report["precision"]),
        ("settings recall", report["recall"]),
        ("not-stated accuracy", report["not_stated_accuracy"]),
        ("stated fields predicted not stated", report["stated_missed"]),
        ("citation accuracy (matched values)", report["citation_accuracy"]),
        ("cross-check mismatches confirmed / gold", f"{cc['mismatches_confirmed']} / {cc['mismatches_gold']}"),
        ("cross-check mismatch precision", cc["mismatch_precision"]),
        ("cross-checks matched / gold; adds_up agreement",
         f"{cc['matched_checks']} / {cc['gold_checks']}; {cc['adds_up_agreement']}"),
        ("seconds per paper (mean / max)",
         f"{report['seconds_per_paper']['mean']} / {report['seconds_per_paper']['max']}"),
        ("errors", len(report["errors"])),
    ):  # fmt: skip
        grid.add_row(name, str(value))
    out.print(grid)
    fields = RichTable(title="Per field")
    for col in ("field", "precision", "recall", "predicted", "gold"):
        fields.add_column(col)
    for name, f in report["per_field"].items():
        fields.add_row(name, str(f["precision"]), str(f["recall"]), str(f["pred"]), str(f["gold"]))
    out.print(fields)
