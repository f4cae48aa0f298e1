"""Reports of a stored run: the JSON summary, rich tables for the terminal, and an HTML page.

The HTML page is self-contained: its plots are inline SVG drawn here (no plotting library).
Every judged figure names the model that judged it, says so when that is the composer's own
model, and stands beside the deterministic figure it corresponds to.
"""

from __future__ import annotations

import html
import json
from typing import Any

from rich.table import Table

from footnote.eval.cases import parse_case
from footnote.eval.metrics import aggregate, calibration, grouped
from footnote.eval.runs import EvalRun

HEADLINE = (
    "correct",
    "accuracy_answerable",
    "precision",
    "answer_match",
    "answer_f1",
    "premise_corrected",
    "evidence_recall",
    "evidence_f1",
    "citation_precision",
    "citation_precision_judge",
    "citation_recall",
    "citation_recall_judge",
    "fabricated_ids",
    "fabricated_in_output",
    "recited",
    "errors",
    "error_rate",
    "refusal_precision",
    "refusal_recall",
    "clean_refusal_rate",
    "hedged",
    "hedged_rate",
    "false_refusal_rate",
    "latency_p50_s",
    "tokens_per_case",
    "model_calls_per_case",
)
JUDGED = {
    "citation_precision_judge": "citation_precision",
    "citation_recall_judge": "citation_recall",
}
"""Judged figures and the deterministic figure each is shown beside."""
CAVEATS = {
    "citation_precision": "deterministic checks (numbers, terms, quotes): blind to negation, "
    "a sentence that contradicts its passage can pass",
    "citation_recall": "deterministic checks: blind to negation",
    "fabricated_ids": "0 by construction where the composer may only cite the ids it was shown: "
    "no evidence of faithfulness",
    "fabricated_in_output": "0 by construction (the gate drops such ids)",
    "hedged": "refusals that still show an answer sentence (never a clean refusal)",
}
"""What a figure cannot see, printed beside it."""


def judge_info(bindings: dict[str, Any]) -> dict[str, Any]:
    """Which model judged, and whether it is the model that composed the answers."""
    judge, composer = bindings.get("judge"), bindings.get("compose")
    return {
        "model": judge,
        "composer": composer,
        "same_as_composer": judge is not None and judge == composer,
    }


def judge_note(info: dict[str, Any]) -> str:
    """The note printed beside every judged figure."""
    if not info.get("model"):
        return "no judge bound"
    same = " — the SAME model as the composer" if info.get("same_as_composer") else ""
    return f"judged by {info['model']}{same}"


def headline_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(metric, value) rows of the headline; a judged value carries the judge note and the
    deterministic value beside it."""
    m, note = report["metrics"], judge_note(report.get("judge") or {})
    rates = m.get("rates", {})
    rows = []
    for k in HEADLINE:
        value = fmt_rate(rates[k]) if k in rates else _fmt(m.get(k))
        if k in JUDGED:
            value = f"{value}  (checks: {_fmt(m.get(JUDGED[k]))}; {note})"
        if k in rates:
            value = f"{value}; n = {rates[k]['of']}"
        if k in CAVEATS:
            value = f"{value}  [{CAVEATS[k]}]"
        rows.append((k, value))
    return rows


def fmt_rate(r: dict[str, Any]) -> str:
    """A rate with its n and 95 % Wilson interval: `0.540 [0.420–0.660 95%] n=37`."""
    if r["value"] is None:
        return f"– n={r['n']}"
    return f"{r['value']:.3f} [{r['lo']:.3f}–{r['hi']:.3f} 95%] n={r['n']}"


def build_report(run: EvalRun, buckets: int = 5) -> dict[str, Any]:
    """The run's summary: overall metrics, by question type and language, calibration."""
    cases = [parse_case(r["case"]) for r in run.records]
    scores = [r["scores"] for r in run.records]
    return {
        "run_id": run.id,
        "dataset": run.meta.get("dataset"),
        "mode": run.meta.get("mode"),
        "git": run.meta.get("git"),
        "bindings": run.meta.get("bindings", {}),
        "judge": judge_info(run.meta.get("bindings", {})),
        "cases": len(cases),
        "planned": len(run.meta.get("case_ids", [])),
        "metrics": aggregate(cases, scores),
        "by_type": grouped(cases, scores, "type"),
        "by_lang": grouped(cases, scores, "lang"),
        "calibration": calibration(scores, buckets),
        "latencies": [s["latency_s"] for s in scores],
    }


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def terminal_tables(report: dict[str, Any]) -> list[Table]:
    """Rich tables: headline metrics, metrics by type, calibration."""
    m = report["metrics"]
    head = Table(title=f"eval {report['run_id']}  ({report['cases']} cases, mode {report['mode']})")
    head.add_column("metric")
    head.add_column("value", justify="right")
    for k, value in headline_rows(report):
        head.add_row(k, value)
    head.add_row("refusals / unanswerable", f"{m['refusals']} / {m['unanswerable']}")
    head.add_row("errors (never refusals)", f"{m.get('errors', 0)} of {m['n']}")
    head.add_row("hedged (refused, sentence shown)", f"{m.get('hedged', 0)} of {m['n']}")
    by = Table(title="by question type")
    short = {"n": "n", "correct": "correct", "answer_f1": "F1", "answer_match": "match",
             "evidence_recall": "ev.rec", "citation_precision": "cit.prec",
             "clean_refusal_rate": "clean ref", "hedged_rate": "hedged",
             "false_refusal_rate": "false ref", "latency_p50_s": "p50 s"}  # fmt: skip
    cols = tuple(short)
    by.add_column("type")
    for c in cols:
        by.add_column(short[c], justify="right")
    for name, g in {
        **report["by_type"],
        **{f"lang:{k}": v for k, v in report["by_lang"].items()},
    }.items():
        by.add_row(name, *(_cell(g, c) for c in cols))
    cal = Table(title="support-score calibration (answered cases)")
    for c in ("bucket", "n", "accuracy"):
        cal.add_column(c, justify="right")
    for b in report["calibration"]:
        cal.add_row(f"{b['lo']:.1f}–{b['hi']:.1f}", str(b["n"]), _fmt(b["accuracy"]))
    return [head, by, cal]


# -- HTML ----------------------------------------------------------------------------------
_W, _H, _PAD = 520, 260, 40


def _svg(body: str, title: str) -> str:
    return (
        f"<figure><figcaption>{html.escape(title)}</figcaption>"
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(title)}">'
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - 10}" y2="{_H - _PAD}" class="axis"/>'
        f'<line x1="{_PAD}" y1="10" x2="{_PAD}" y2="{_H - _PAD}" class="axis"/>'
        f"{body}</svg></figure>"
    )


def _y(v: float, top: float = 1.0) -> float:
    return _H - _PAD - (v / top if top else 0) * (_H - _PAD - 10)


def bars_svg(values: dict[str, float | None], title: str, top: float = 1.0) -> str:
    """A bar chart of named values in [0, top]."""
    names = list(values)
    step = (_W - _PAD - 20) / max(1, len(names))
    parts = [
        f'<text x="4" y="{_y(top) + 4:.0f}" class="tick">{top:g}</text>',
        f'<text x="4" y="{_H - _PAD + 4}" class="tick">0</text>',
    ]
    for i, name in enumerate(names):
        v = values[name]
        x = _PAD + 8 + i * step
        if v is not None:
            parts.append(
                f'<rect x="{x:.1f}" y="{_y(v, top):.1f}" width="{step * 0.7:.1f}" '
                f'height="{_H - _PAD - _y(v, top):.1f}" class="bar"><title>{html.escape(name)}: {v:.3f}</title></rect>'
                f'<text x="{x + step * 0.35:.1f}" y="{_y(v, top) - 4:.1f}" class="val">{v:.2f}</text>'
            )
        parts.append(
            f'<text x="{x + step * 0.35:.1f}" y="{_H - _PAD + 16}" class="lab">{html.escape(name[:14])}</text>'
        )
    return _svg("".join(parts), title)


def calibration_svg(rows: list[dict[str, Any]]) -> str:
    """Accuracy against mean support score per bucket, with the diagonal."""

    def sx(v: float) -> float:
        return _PAD + v * (_W - _PAD - 20)

    parts = [
        f'<line x1="{sx(0)}" y1="{_y(0)}" x2="{sx(1):.0f}" y2="{_y(1)}" class="diag"/>',
        f'<text x="{sx(1) - 30:.0f}" y="{_H - _PAD + 16}" class="tick">score 1</text>',
        f'<text x="4" y="{_y(1) + 4}" class="tick">acc 1</text>',
    ]
    pts = [
        (
            sx((r["lo"] + r["hi"]) / 2 if r["mean_score"] is None else r["mean_score"]),
            _y(r["accuracy"]),
            r,
        )
        for r in rows
        if r["accuracy"] is not None
    ]
    if pts:
        parts.append(
            '<polyline class="line" points="'
            + " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in pts)
            + '"/>'
        )
    for x, y, r in pts:
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{3 + min(8, r["n"])}" class="dot">'
            f"<title>{r['lo']:.1f}–{r['hi']:.1f}: {r['n']} cases, accuracy {r['accuracy']:.2f}</title></circle>"
        )
    return _svg("".join(parts), "calibration: accuracy by support score (answered cases)")


def latency_svg(latencies: list[float], bins: int = 12) -> str:
    """A histogram of per-case latency."""
    if not latencies:
        return _svg("", "latency (no cases)")
    hi = max(latencies) or 1.0
    counts = [0] * bins
    for v in latencies:
        counts[min(bins - 1, int(v / hi * bins))] += 1
    step = (_W - _PAD - 20) / bins
    top = max(counts)
    parts = [
        f'<text x="4" y="{_y(1) + 4}" class="tick">{top}</text>',
        f'<text x="{_W - 60}" y="{_H - _PAD + 16}" class="tick">{hi:.1f} s</text>',
        f'<text x="{_PAD}" y="{_H - _PAD + 16}" class="tick">0 s</text>',
    ]
    for i, c in enumerate(counts):
        if c:
            parts.append(
                f'<rect x="{_PAD + i * step + 1:.1f}" y="{_y(c, top):.1f}" width="{step - 2:.1f}" '
                f'height="{_H - _PAD - _y(c, top):.1f}" class="bar"><title>{c} cases</title></rect>'
            )
    return _svg("".join(parts), "latency per case (seconds)")


_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}figure{display:inline-block;margin:0 1rem 1rem 0}
figcaption{font-weight:600}.axis{stroke:#555}.bar{fill:#4c72b0}.line{fill:none;stroke:#c44e52;stroke-width:2}
.dot{fill:#c44e52;opacity:.8}.diag{stroke:#aaa;stroke-dasharray:4}.tick,.lab,.val{font-size:10px;fill:#444}
.lab,.val{text-anchor:middle}.bad{color:#b00}.ok{color:#070}td.q{text-align:left;max-width:420px}"""


def _cell(group: dict[str, Any], col: str) -> str:
    """A table cell: a rate with its n (`0.500 n=4`), anything else as it is."""
    r = group.get("rates", {}).get(col)
    return _fmt(group.get(col)) if r is None else f"{_fmt(r['value'])} n={r['n']}"


def _table(rows: dict[str, dict[str, Any]], cols: tuple[str, ...]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ("", *cols))
    body = "".join(
        "<tr><td>"
        + html.escape(k)
        + "</td>"
        + "".join(f"<td>{html.escape(_cell(v, c))}</td>" for c in cols)
        + "</tr>"
        for k, v in rows.items()
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def render_html(report: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """The report as one self-contained HTML page."""
    cols = (
        "n",
        "answer_f1",
        "answer_match",
        "evidence_recall",
        "citation_precision",
        "refusal_recall",
        "false_refusal_rate",
        "latency_p50_s",
    )
    by_type = {k: v["answer_f1"] for k, v in report["by_type"].items()}
    cases = "".join(
        f"<tr><td>{html.escape(r['case']['id'])}</td><td class='q'>{html.escape(r['case']['question'])}</td>"
        f"<td class='q'>{html.escape(str(r['case']['answer'])[:80])}</td>"
        f"<td class='q'>{html.escape(r['output'].get('answer', '')[:200])}</td><td>{html.escape(r['output']['status'])}</td>"
        f"<td class='{'ok' if r['scores']['correct'] else 'bad'}'>{_fmt(r['scores']['answer_f1'])}</td></tr>"
        for r in records
    )
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>footnote eval {html.escape(report["run_id"])}</title><style>{_CSS}</style></head><body>
<h1>footnote eval</h1><p>run <code>{html.escape(report["run_id"])}</code> · dataset {html.escape(str(report["dataset"]))}
· mode {html.escape(str(report["mode"]))} · {report["cases"]} cases · git {html.escape(str(report["git"]))}</p>
<table>{"".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in headline_rows(report))}</table>
<div>{bars_svg(by_type, "answer token F1 by question type")}{calibration_svg(report["calibration"])}
{latency_svg(report["latencies"])}</div>
<h2>By question type and language</h2>{_table({**report["by_type"], **{"lang:" + k: v for k, v in report["by_lang"].items()}}, cols)}
<h2>Cases</h2><table><tr><th>id</th><th>question</th><th>gold</th><th>answer</th><th>status</th><th>F1</th></tr>{cases}</table>
</body></html>"""


def write_reports(run: EvalRun, buckets: int = 5) -> dict[str, Any]:
    """Write `report.json` and `report.html` into the run folder; return the report."""
    report = build_report(run, buckets)
    (run.dir / "report.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    (run.dir / "report.html").write_text(render_html(report, run.records), encoding="utf-8")
    return report
