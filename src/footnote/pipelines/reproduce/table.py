"""The settings table and its exports: JSON (the contract), a starter config, Markdown, CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from footnote.pipelines.reproduce.fields import BY_NAME
from footnote.textnorm import parse_number


@dataclass(frozen=True)
class SettingValue:
    """One verified value with its citation and what the checks said."""

    value: str
    evidence_id: str
    quote: str
    page: int | None
    section: tuple[str, ...]
    verdict: str
    checks: dict[str, str] = field(default_factory=dict)
    by: str = "rules"

    def to_dict(self) -> dict[str, Any]:
        """The public JSON shape of one value."""
        return {
            "value": self.value,
            "number": parse_number(self.value),
            "cite": self.evidence_id,
            "quote": self.quote,
            "page": self.page,
            "section": list(self.section),
            "verdict": self.verdict,
            "checks": dict(self.checks),
            "by": self.by,
        }


@dataclass(frozen=True)
class Rejected:
    """A candidate value that failed the checks (shown, never used)."""

    value: str
    evidence_id: str
    reasons: dict[str, str]
    by: str

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "value": self.value,
            "cite": self.evidence_id,
            "reasons": self.reasons,
            "by": self.by,
        }


@dataclass(frozen=True)
class SettingRow:
    """One field: its verified values, or "not stated" with the reason."""

    field: str
    values: tuple[SettingValue, ...] = ()
    rejected: tuple[Rejected, ...] = ()
    error: str | None = None
    """The extractor failed for this field (an error, not a "not stated")."""

    @property
    def stated(self) -> bool:
        """Whether a verified value exists."""
        return bool(self.values)

    @property
    def reason(self) -> str | None:
        """Why the row is not stated (None when it is)."""
        if self.values:
            return None
        if self.error:
            return f"unknown: the extractor failed ({self.error[:200]})"
        if self.rejected:
            return f"not stated: {len(self.rejected)} candidate value(s) failed the citation checks"
        return "not stated in the paper's text"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of a row."""
        return {
            "field": self.field,
            "label": BY_NAME[self.field].label,
            "status": "stated" if self.values else ("error" if self.error else "not_stated"),
            "values": [v.to_dict() for v in self.values],
            "reason": self.reason,
            "rejected": [r.to_dict() for r in self.rejected],
        }


@dataclass
class SettingsTable:
    """Every field of one source, in the fixed order."""

    source_id: str
    title: str
    extractor: str
    rows: list[SettingRow] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)
    run_id: str | None = None

    def row(self, name: str) -> SettingRow:
        """The row of a field."""
        return next(r for r in self.rows if r.field == name)

    def to_dict(self) -> dict[str, Any]:
        """The public JSON contract of `footnote settings --json` and the API."""
        return {
            "run_id": self.run_id,
            "source": {"id": self.source_id, "title": self.title},
            "extractor": self.extractor,
            "settings": [r.to_dict() for r in self.rows],
            "stated": sum(1 for r in self.rows if r.stated),
            "not_stated": [r.field for r in self.rows if not r.stated],
            "usage": dict(self.usage),
        }


def to_config(table: SettingsTable) -> dict[str, Any]:
    """A starter config: each stated field's value(s) (numbers as numbers), each with its
    citation in `_cite`, and the fields the paper does not state listed as such."""
    config: dict[str, Any] = {}
    cites: dict[str, list[str]] = {}
    for row in table.rows:
        if not row.values:
            continue
        vals: list[Any] = []
        for v in row.values:
            number = parse_number(v.value)
            vals.append(number if number is not None and not BY_NAME[row.field].multi else v.value)
        config[row.field] = vals[0] if len(vals) == 1 else vals
        cites[row.field] = [v.evidence_id for v in row.values]
    return {
        "source": {"id": table.source_id, "title": table.title},
        "config": config,
        "not_stated": [r.field for r in table.rows if not r.values],
        "_cite": cites,
    }


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(table: SettingsTable) -> str:
    """A Markdown table with a footnote per value: page, section and the quote."""
    lines = [f"# Experiment settings: {_md_cell(table.title)}", "",
             "| setting | value | source |", "|---|---|---|"]  # fmt: skip
    notes: list[str] = []
    for row in table.rows:
        label = BY_NAME[row.field].label
        if not row.values:
            lines.append(f"| {label} | *not stated* | |")
            continue
        cells, refs = [], []
        for v in row.values:
            notes.append(v.evidence_id)
            n = len(notes)
            cells.append(f"{_md_cell(v.value)}[^{n}]")
            where = f"p. {v.page}" if v.page else ""
            refs.append(", ".join(p for p in (where, " > ".join(v.section[-1:])) if p))
        lines.append(f"| {label} | {'; '.join(cells)} | {_md_cell('; '.join(refs))} |")
    lines.append("")
    n = 0
    for row in table.rows:
        for v in row.values:
            n += 1
            lines.append(f'[^{n}]: `{v.evidence_id}` "{_md_cell(v.quote[:240])}"')
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("field", "status", "value", "number", "cite", "page", "section", "quote", "verdict")


def to_csv(table: SettingsTable) -> str:
    """One line per value (a not-stated field gets one line with an empty value)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in table.rows:
        if not row.values:
            writer.writerow([row.field, "not_stated", "", "", "", "", "", "", ""])
        for v in row.values:
            number = parse_number(v.value)
            writer.writerow([
                row.field, "stated", v.value, "" if number is None else repr(number),
                v.evidence_id, v.page or "", " > ".join(v.section), v.quote, v.verdict,
            ])  # fmt: skip
    return buf.getvalue()


EXPORTS = ("json", "config", "markdown", "csv")
