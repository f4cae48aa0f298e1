"""`footnote research`: an outline to confirm, then a brief whose every claim cites a card."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table as RichTable
from typer.core import TyperGroup

from footnote.cli.common import (
    JsonOpt,
    WorkspaceOpt,
    _fail,
    _print_json,
    _workspace,
    app,
    edit_in_editor,
    err,
    out,
)
from footnote.errors import FootnoteError
from footnote.workspace import Workspace


class _DefaultRun(TyperGroup):
    """`footnote research "question" …` means `footnote research run "question" …`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


research_app = typer.Typer(
    cls=_DefaultRun,
    no_args_is_help=True,
    help="Research briefs: `footnote research QUESTION` proposes an outline, waits for you to "
    "confirm or edit it, then investigates the library (and the web where allowed) and writes a "
    "brief whose every claim cites an evidence card. `show`, `resume` and `ls` manage runs; "
    "`origins` lists and decides the attribution left to you.",
)
app.add_typer(research_app, name="research")


def _print_outline(outline: Any) -> None:
    table = RichTable(title=f"Outline ({outline.template})", show_lines=True)
    for col in ("#", "id", "section", "must answer", "evidence standard"):
        table.add_column(col, overflow="fold")
    for n, item in enumerate(outline.items, 1):
        s = item.standard
        std = [f"≥{s.min_independent} independent"]
        if s.primary_required:
            std.append("primary source")
        if s.date_from or s.date_to:
            std.append(f"dated {s.date_from or '…'} to {s.date_to or '…'}")
        std.append("web" if s.web else "library only")
        table.add_row(str(n), item.id, escape(item.title), escape(item.asks), ", ".join(std))
    err.print(table)


_YES = ("y", "yes", "ok", "是", "好", "确认", "同意")
_NO = ("n", "no", "否", "不", "取消")
_ASK = (
    "Accept this outline? [y]es, [n]o, [e]dit the JSON, or type a change in words "
    '("drop 3", "rename 2 to …", "add a section: …", "move 4 before 2", "删除第3节")'
)


def _in_words(outline: Any, text: str) -> Any:
    """The outline after a plain-words edit, its changes and the new outline shown back."""
    from footnote.pipelines.research.outline_words import edit_outline_in_words

    result = edit_outline_in_words(outline, text)
    for said in result.changes:
        err.print(f"[cyan]→ {escape(said)}[/]")
    _print_outline(result.outline)
    return result.outline


def _edits(
    outline: Any, outline_file: Path | None, changes: list[str], yes: bool
) -> dict[str, Any] | None:
    """The analyst's edits of the proposed outline (None: as proposed): an edited JSON file,
    changes in words (`--change`, or typed at the prompt, shown back before confirming), or
    the JSON in an editor. UsageError for words that cannot be read (from `--change`)."""
    from footnote.serialize import to_plain

    if outline_file is not None:
        try:
            data: dict[str, Any] = json.loads(outline_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            _fail(ValueError(f"cannot read the outline {outline_file}: {exc}"))
        return data
    current = _in_words(outline, "\n".join(changes)) if changes else outline
    while not yes:
        choice = typer.prompt(_ASK, default="y").strip()
        if choice.lower() in _YES:
            break
        if choice.lower() in _NO:
            raise typer.Exit(1)
        if choice.lower() in ("e", "edit"):
            edited = edit_in_editor(
                json.dumps(to_plain(current), ensure_ascii=False, indent=2), suffix=".json"
            )
            if edited is None:
                continue
            try:
                result: dict[str, Any] = json.loads(edited)
            except ValueError as exc:
                _fail(ValueError(f"the edited outline is not valid JSON: {exc}"))
            return result
        try:
            current = _in_words(current, choice)
        except FootnoteError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}")
    return None if current is outline else to_plain(current)


@research_app.command("run")
def run_cmd(
    question: Annotated[str, typer.Argument(help="The research question, in English or Chinese.")],
    template: Annotated[
        str | None,
        typer.Option(
            help="Report kind: players, market_size, regulation, trends, literature_review."
        ),
    ] = None,
    budget_tokens: Annotated[
        int | None, typer.Option(help="Token budget (default research.budget_tokens).")
    ] = None,
    budget_minutes: Annotated[
        float | None, typer.Option(help="Wall-clock budget in minutes.")
    ] = None,
    web: Annotated[
        bool, typer.Option("--web/--no-web", help="Search the web where the outline allows.")
    ] = True,
    mode: Annotated[
        str | None, typer.Option(help="brief (default) or baseline (one search, one call).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Accept the proposed outline without asking.")
    ] = False,
    outline_file: Annotated[
        Path | None,
        typer.Option("--outline", help="Use this edited outline JSON instead of asking."),
    ] = None,
    change: Annotated[
        list[str] | None,
        typer.Option(
            "--change",
            help='Edit the proposed outline in plain words, e.g. "drop 3", "rename 2 to Market '
            'size in Europe", "add a section: who regulates recycling?", "move 4 before 2", '
            '"删除第3节" (repeatable; numbers as the outline is shown).',
        ),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source",
            "-s",
            help="Draw library evidence only from this source (id, id prefix or ingested path; "
            "repeatable; default: the whole library).",
        ),
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a research brief: outline (confirmed by you) → investigate → check → brief."""
    from footnote.workspace.research import confirm_outline, research_store, start_research

    if not yes and outline_file is None and not sys.stdin.isatty():
        _fail(
            ValueError(
                "confirm the outline: give --yes (accept it, with any --change) or --outline FILE "
                "(edited JSON)"
            )
        )
    with _workspace(workspace) as ws:
        chosen = [ws.resolve_source(ref).source.id for ref in source] if source else None
        run_id, outline = start_research(ws, question, template=template, web=web,
                                         budget_tokens=budget_tokens, budget_minutes=budget_minutes,
                                         mode=mode, user_id=ws.settings.server.local_user,
                                         source_ids=chosen)  # fmt: skip
        _print_outline(outline)
        confirmed = False
        try:
            confirm_outline(ws, run_id, _edits(outline, outline_file, change or [], yes))
            confirmed = True
        except (typer.Abort, KeyboardInterrupt, EOFError):
            _fail(ValueError(f"aborted: research run {run_id} was not started"), 130)
        finally:
            if not confirmed:  # never left behind as a proposed outline waiting for nobody
                research_store(ws).set_research_state(run_id, "aborted")
                err.print(f"[dim]research run {run_id} marked aborted[/]")
        err.print(f"[dim]research run {run_id}[/]")
        _run(ws, run_id, as_json)


@research_app.command("resume")
def resume_cmd(
    run_id: Annotated[str, typer.Argument(help="A research run id (see `footnote research ls`).")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Resume a run that stopped (a crash, Ctrl-C): finished stages are not redone."""
    with _workspace(workspace) as ws:
        _run(ws, run_id, as_json)


def _run(ws: Workspace, run_id: str, as_json: bool) -> None:
    """Run to the brief; print it as Markdown (or the JSON contract); progress on stderr."""
    from footnote.pipelines.research.markdown import brief_markdown
    from footnote.serialize import brief_to_dict
    from footnote.workspace.research import run_research

    async def go() -> Any:
        brief = None
        async for event in run_research(ws, run_id):
            _progress(event)
            if event.type == "brief":
                brief = getattr(event, "brief", None)
        return brief

    try:
        brief = asyncio.run(go())
    except KeyboardInterrupt:
        _fail(ValueError(f"interrupted: resume with `footnote research resume {run_id}`"), 130)
    if brief is None:
        _fail(ValueError("the run ended without a brief"))
    if as_json:
        _print_json(brief_to_dict(brief))
    else:
        out.print(brief_markdown(brief), markup=False, highlight=False)


def _progress(event: Any) -> None:
    t = event.type
    if t == "subquestion_start":
        err.print(f"[dim]… {event.sub_question.id}: investigating[/]")
    elif t == "subquestion_stop":
        style = "green" if event.stop_reason == "done" else "yellow"
        err.print(f"[dim]… {event.sub_question_id}:[/] [{style}]{event.stop_reason}[/] "
                  f"[dim]({event.cards} cards, {int(event.used.get('searches', 0))} searches, "
                  f"{int(event.used.get('fetches', 0))} fetches)[/]")  # fmt: skip
    elif t == "budget" and (event.warning or event.exhausted):
        what = f"{event.exhausted} exhausted" if event.exhausted else f"{event.fraction:.0%} used"
        err.print(f"[yellow]budget {event.scope}: {what}[/]")
    elif t == "conflict":
        err.print(f"[magenta]{escape(event.conflict.heading)}[/]")
    elif t == "checklist":
        states = ", ".join(f"{i.item_id}={i.state}" for i in event.items)
        err.print(f"[dim]checklist{' (wrap-up)' if event.wrapped_up else ''}: {states}[/]")
    elif t == "status":
        err.print(f"[dim]… {escape(event.message)}[/]")


@research_app.command("show")
def show_cmd(
    run_id: Annotated[str, typer.Argument(help="A research run id.")],
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a finished run's brief (Markdown, or the JSON contract with --json)."""
    from footnote.pipelines.research.markdown import brief_markdown
    from footnote.serialize import brief_to_dict, from_plain
    from footnote.types import Brief
    from footnote.workspace.research import research_store

    with _workspace(workspace) as ws:
        store = research_store(ws)
        record = store.get_research(run_id)
        data = store.get_artifact(run_id, "brief")
        if record is None:
            _fail(ValueError(f"no research run {run_id!r} (see `footnote research ls`)"))
            return
        if data is None:
            _fail(ValueError(f"run {run_id} has no brief yet (state {record.state}); "
                             f"`footnote research resume {run_id}` continues it"))  # fmt: skip
        brief = from_plain(Brief, data)
    if as_json:
        _print_json(brief_to_dict(brief))
    else:
        out.print(brief_markdown(brief), markup=False, highlight=False)


@research_app.command("ls")
def ls_cmd(
    user: Annotated[
        str | None, typer.Option(help="Only this user's runs (default: every user's).")
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List research runs, newest first: every user's (web and API runs included)."""
    from footnote.workspace.research import research_runs

    with _workspace(workspace) as ws:
        runs = research_runs(ws, user)
    rows: list[dict[str, str]] = [{"id": r.id, "state": r.state, "user": r.user_id, "question": r.question,
             "created_at": r.created_at, "mode": str(r.options.get("mode"))} for r in runs]  # fmt: skip
    if as_json:
        _print_json(rows)
        return
    table = RichTable()
    for col in ("id", "state", "user", "mode", "created", "question"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["state"], escape(r["user"]), str(r["mode"]),
                      r["created_at"][:19], escape(r["question"]))  # fmt: skip
    out.print(table)


class _Origin(StrEnum):
    same = "same"
    independent = "independent"
    secondary = "secondary"


@research_app.command("origins")
def origins_cmd(
    run_id: Annotated[str, typer.Argument(help="A research run id (with a brief).")],
    decision: Annotated[
        _Origin | None,
        typer.Argument(
            metavar="[DECISION]",
            help="With --decide: same (the cards restate one origin: counted once), "
            "independent (independence confirmed by you: each card counts), or secondary "
            "(secondary reports of one origin: counted once, not a primary source).",
        ),
    ] = None,
    decide: Annotated[
        str | None,
        typer.Option("--decide", metavar="GROUP", help="The group to decide (an id listed here)."),
    ] = None,
    reason: Annotated[
        str, typer.Option(help="Why you decide so (required with --decide; logged).")
    ] = "",
    user: Annotated[
        str | None, typer.Option(help="Who decides (logged; default: the run's owner).")
    ] = None,
    workspace: WorkspaceOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the groups of cards whose attribution the merge left undecided (cards of different
    sources quoting one figure without naming where it comes from), their snippets side by
    side; or decide one: `footnote research origins RUN --decide GROUP same|independent|secondary
    --reason "…"`. Each decision goes to the run's hash-chained review log, changes the brief's
    cards and checklist, and sign-off waits until every group is decided."""
    from footnote.workspace.research import research_store
    from footnote.workspace.review import decide_origin, origin_groups

    if (decide is None) != (decision is None):
        _fail(ValueError("--decide GROUP goes with a decision: same, independent or secondary"), 2)
    if decide is not None and not reason.strip():
        _fail(ValueError('a decision needs a reason: --reason "…"'), 2)
    with _workspace(workspace) as ws:
        record = research_store(ws).get_research(run_id)
        if record is None:
            _fail(ValueError(f"no research run {run_id!r} (see `footnote research ls`)"))
            return
        if decide is not None and decision is not None:
            decide_origin(ws, run_id, decide, decision.value, user or record.user_id, reason)
            if not as_json:
                err.print(f"[green]group {escape(decide)} decided: {decision.value}[/]")
        groups = origin_groups(ws, run_id)
    if as_json:
        _print_json(groups)
        return
    _print_origins(run_id, groups)


def _print_origins(run_id: str, groups: list[dict[str, Any]]) -> None:
    if not groups:
        out.print("No undecided attribution in this run.")
        return
    for g in groups:
        d = g["decision"]
        state = (f"[green]{d['decision']}[/] by {escape(str(d['by']))}: {escape(d['reason'])}"
                 if d else "[yellow]undecided[/]")  # fmt: skip
        table = RichTable(title=f"{g['id']}  {state}", show_lines=True, title_justify="left")
        for c in g["cards"]:
            table.add_column(escape(c["source_title"] or c["url"] or c["id"]), overflow="fold",
                             ratio=1)  # fmt: skip
        table.add_row(*(escape(c["snippet"]) for c in g["cards"]))
        out.print(table)
        out.print(f"[dim]{escape(g['basis'])}[/]")
    left = sum(g["decision"] is None for g in groups)
    if left:
        out.print(f"{left} undecided: footnote research origins {run_id} --decide GROUP "
                  'same|independent|secondary --reason "…"', markup=False)  # fmt: skip


# -- evaluation: `footnote eval research-dev` ---------------------------------------------
def _register_eval() -> None:
    from footnote.cli.evaluation import _data_dir, eval_app

    @eval_app.command("research-dev")
    def research_eval_cmd(
        limit: Annotated[int | None, typer.Option(help="Only the first N questions.")] = None,
        lang: Annotated[
            list[str] | None, typer.Option(help="Only this language (repeatable).")
        ] = None,
        case: Annotated[
            list[str] | None, typer.Option("--case", help="Only this question id (repeatable).")
        ] = None,
        modes: Annotated[
            str, typer.Option(help="Comma-separated: brief, baseline.")
        ] = "brief,baseline",
        judge: Annotated[
            bool, typer.Option("--judge/--no-judge", help="Also score with the judge role.")
        ] = True,
        budget_tokens: Annotated[int | None, typer.Option(help="Token budget per brief.")] = None,
        budget_minutes: Annotated[float | None, typer.Option(help="Minutes per brief.")] = None,
        run_id: Annotated[
            str | None, typer.Option(help="Name the run; an existing one is resumed.")
        ] = None,
        data_dir: Annotated[
            Path | None, typer.Option(help="Shared data folder (QASPER, PaperQA stubs).")
        ] = None,
        scoped: Annotated[
            bool,
            typer.Option(
                "--scoped/--whole-library",
                help="Each brief draws on its question's own papers only (`research run "
                "--source`), or on the whole dev library (default).",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """The research dev set: briefs and the baseline in the same run, scored (key-point
        coverage, citation precision/recall, conflicts, uncovered, reprints, cost)."""
        from footnote.eval.fixture_web import FixtureWeb
        from footnote.eval.research import (
            MODES,
            load_cases,
            research_overrides,
            research_report,
            run_research_eval,
        )

        chosen = tuple(m.strip() for m in modes.split(",") if m.strip())
        if not chosen or set(chosen) - set(MODES):
            _fail(ValueError(f"--modes must be among {', '.join(MODES)}"))
        cases = load_cases(limit, tuple(lang or ()), tuple(case or ()))
        if not cases:
            _fail(ValueError("no question left after --limit/--lang/--case"))
        with FixtureWeb() as web:
            ws = Workspace.open(workspace, overrides={"research": research_overrides(web)})
            try:
                data = _data_dir(ws, data_dir)
                name = run_id or f"research-{time.strftime('%Y%m%d-%H%M%S')}"
                run = asyncio.run(run_research_eval(
                    ws, data, run_id=name, cases=cases, modes=chosen, judge=judge,
                    options={"budget_tokens": budget_tokens, "budget_minutes": budget_minutes,
                             "scoped": scoped},
                    progress=lambda msg: err.print(f"[dim]{escape(msg)}[/]"),
                ))  # fmt: skip
                report = research_report(run)
            except FootnoteError as exc:
                _fail(exc)
            finally:
                ws.close()
        if as_json:
            _print_json(report)
            return
        table = RichTable(
            title=f"research-dev: {report['cases']} questions (judge: {report['judge'] or 'none'})"
        )
        rows = list(next(iter(report["modes"].values())))
        table.add_column("metric")
        for mode in report["modes"]:
            table.add_column(mode)
        for key in rows:
            if key != "mode":
                table.add_row(key, *(str(report["modes"][m].get(key)) for m in report["modes"]))
        out.print(table)
        err.print(f"[dim]run {run.id}: {run.dir / 'report.json'}[/]")


_register_eval()
