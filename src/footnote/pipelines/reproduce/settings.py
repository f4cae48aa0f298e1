"""The settings job: candidates from rules and/or a model, every value through the verification
gate, then one row per field — verified values with citations, or "not stated".

A value is kept only when the gate (`verify.gate.check_draft`) says its citation is
*supported*: the id is one of the passages the extractor was given, the quote occurs in it, and
the value — number, unit and words — occurs in the cited text (a table citation is pointed at
the cell that holds the number first). A numeric field also needs its cue word in the quote or
the cited cell's row ("learning rate" for a learning rate). Everything else is rejected with the
gate's reasons; a field with no kept value is "not stated", never guessed. A numeric value is
compared with its quoted span (or cited cell) as parsed numbers, not as words: "0.002" is kept
against "2e-3", and "2e-5" is not, even when "5 epochs" or another sentence of the passage
holds its digits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from footnote.errors import ModelOutputInvalid
from footnote.events import Done, Event, SettingEvent, Status
from footnote.models.budget import Budget
from footnote.models.roles import RoleModel
from footnote.pipelines.reproduce import rules
from footnote.pipelines.reproduce.extract import extract_with_model
from footnote.pipelines.reproduce.fields import FIELDS, GROUPS
from footnote.pipelines.reproduce.fields import field as field_of
from footnote.pipelines.reproduce.rules import Candidate
from footnote.pipelines.reproduce.table import Rejected, SettingRow, SettingsTable, SettingValue
from footnote.pipelines.trace import Trace
from footnote.store.base import DocumentStore
from footnote.textnorm import normalise, parse_number, quantities, unmatched_numbers
from footnote.types import Block
from footnote.verify.answer import refine_table_cites
from footnote.verify.checks import CitationCheck
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import Evidence, EvidenceSet
from footnote.verify.gate import check_draft

EXTRACTORS = ("rules", "model", "hybrid")


@dataclass
class SettingsDeps:
    """What the job needs; the workspace builds it."""

    store: DocumentStore
    extractor: str = "rules"
    model: RoleModel | None = None
    candidates: int = 4
    labels: tuple[str, ...] = ()
    trace: Trace = field(default_factory=Trace)
    budget: Budget | None = None
    clock: Callable[[], float] = time.monotonic


def evidence_of(blocks: Sequence[Block]) -> EvidenceSet:
    """The blocks as evidence items, as the gate checks them (a table by its rows)."""
    return EvidenceSet(
        [Evidence(b.id, b.table.as_text() if b.table is not None else b.text, b) for b in blocks]
    )


def verify_candidates(
    candidates: Sequence[Candidate], evidence: EvidenceSet
) -> list[tuple[Candidate, CitationCheck]]:
    """Each candidate with the gate's check of its citation (table cites refined to cells)."""
    if not candidates:
        return []
    draft = Draft(
        [DraftSentence(c.value, [c.evidence_id], c.quote) for c in candidates], raw="settings"
    )
    refine_table_cites(draft, evidence)
    checks = check_draft(draft, evidence)
    return [(c, row[0]) for c, row in zip(candidates, checks, strict=True) if row]


def _cue_ok(candidate: Candidate, check: CitationCheck) -> bool:
    """A numeric field's cue must occur in the quote (or, for a cell, in its row and header)."""
    f = field_of(candidate.field)
    if not f.numeric or check.evidence is None:
        return True
    where = check.quote if check.quote_match in ("exact", "fuzzy") else ""
    if "#" in check.evidence_id:
        where += "\n" + check.evidence.context
    return bool(f.cue.search(where))


def _span(check: CitationCheck) -> str:
    """What a value is cited to: the quote found in the passage, or the cited table cell."""
    if check.quote_match in ("exact", "fuzzy"):
        return check.quote
    if "#" in check.evidence_id and check.evidence is not None:
        return check.evidence.text
    return ""


def _value_stated(candidate: Candidate, check: CitationCheck) -> bool:
    """A numeric value is a number its span states, compared by parsed value and unit."""
    return bool(quantities(candidate.value)) and not unmatched_numbers(
        candidate.value, _span(check)
    )


def _kept(
    candidate: Candidate, check: CitationCheck, verdict: str, reasons: dict[str, str]
) -> SettingValue:
    ev = check.evidence
    assert ev is not None
    quote = check.quote if check.quote_match in ("exact", "fuzzy") else ev.text[:240]
    return SettingValue(
        candidate.value,
        check.evidence_id,
        quote,
        ev.page if ev.block.bbox is not None or ev.page > 1 else None,
        ev.section,
        verdict,
        reasons,
        candidate.by,
    )


def build_rows(
    checked: Sequence[tuple[Candidate, CitationCheck]], errors: dict[str, str] | None = None
) -> list[SettingRow]:
    """One row per field, in the table's order: kept values deduplicated, rejections listed;
    `errors` names fields whose extractor call failed (their rows say so)."""
    kept: dict[str, dict[str, SettingValue]] = {f.name: {} for f in FIELDS}
    rejected: dict[str, list[Rejected]] = {f.name: [] for f in FIELDS}
    for cand, check in checked:
        if cand.field not in kept:
            continue
        reasons = dict(check.reasons)
        verdict = check.verdict
        if field_of(cand.field).numeric and not check.fabricated and not check.numbers_missing:
            # a number's support is its value in the span, not the span's words
            verdict = "supported" if _value_stated(cand, check) else "unsupported"
            reasons.pop("overlap", None)
            reasons["value"] = (
                "the cited text states this value"
                if verdict == "supported"
                else "the quoted text does not state this value"
            )
        ok = not check.fabricated and verdict == "supported" and check.quote_match != "missing"
        if ok and not _cue_ok(cand, check):
            ok = False
            reasons["cue"] = f"the cited text does not mention the {field_of(cand.field).label}"
        if not ok:
            if verdict == "supported" and "cue" not in reasons:
                reasons.setdefault("quote", "the quote does not occur in the cited text")
            rejected[cand.field].append(Rejected(cand.value, check.evidence_id, reasons, cand.by))
            continue
        number = parse_number(cand.value) if field_of(cand.field).numeric else None
        key = normalise(cand.value) if number is None else repr(number)
        kept[cand.field].setdefault(key, _kept(cand, check, verdict, reasons))
    return [
        SettingRow(
            f.name,
            tuple(kept[f.name].values()),
            tuple(rejected[f.name][:10]),
            (errors or {}).get(f.name),
        )
        for f in FIELDS
    ]


class SettingsPipeline:
    """Extract, verify and tabulate the experiment settings of one source."""

    def __init__(self, deps: SettingsDeps) -> None:
        self.deps = deps
        self.table: SettingsTable | None = None

    async def run(self, source_id: str, title: str = "") -> AsyncIterator[Event]:
        """Events: status, one `setting` per field, done; `self.table` holds the result."""
        deps = self.deps
        t0 = deps.clock()
        blocks = list(deps.store.iter_blocks(source_id))
        use_rules = deps.extractor in ("rules", "hybrid")
        use_model = deps.extractor in ("model", "hybrid")
        checked: list[tuple[Candidate, CitationCheck]] = []
        if use_rules:
            yield Status("settings", "reading the paper with the settings patterns")
            with deps.trace.span("extract", "rules") as span:
                found = rules.extract(blocks)
                span["candidates"] = len(found)
            checked += await asyncio.to_thread(verify_candidates, found, evidence_of(blocks))
        calls = 0
        failed: dict[str, str] = {}
        if use_model:
            if deps.model is None:
                raise ValueError("the model extractor needs a bound model role")
            for group, fields in GROUPS.items():
                yield Status("settings", f"asking {deps.model.name} for the {group} settings")
                with deps.trace.span("extract", f"model:{group}") as span:
                    try:
                        found, shown = await asyncio.to_thread(
                            extract_with_model,
                            deps.model,
                            blocks,
                            fields,
                            k=deps.candidates,
                            labels=deps.labels,
                            budget=deps.budget,
                            run_id=deps.trace.run_id,
                        )
                    except ModelOutputInvalid as exc:  # counted and shown, never "not stated"
                        failed[group] = str(exc)
                        span["error"] = str(exc)
                        yield Status("settings", f"the {group} settings failed: {exc}")
                        continue
                    calls += 1 if shown.blocks else 0
                    span.update(candidates=len(found), shown=[b.id for b in shown.blocks])
                # the gate sees exactly the passages this call showed the model
                checked += await asyncio.to_thread(
                    verify_candidates, found, evidence_of(shown.blocks)
                )
        yield Status("verify", f"checked {len(checked)} candidate values")
        rows = build_rows(checked, {f.name: failed[g] for g, fs in GROUPS.items() if g in failed
                                    for f in fs})  # fmt: skip
        with deps.trace.span("verify", "settings") as span:
            span.update(
                candidates=len(checked),
                kept=sum(len(r.values) for r in rows),
                rejected=sum(len(r.rejected) for r in rows),
            )
        self.table = SettingsTable(
            source_id,
            title,
            deps.extractor,
            rows,
            usage={
                "seconds": round(deps.clock() - t0, 3),
                "model_calls": calls,
                "failed_groups": len(failed),
            },
            run_id=deps.trace.run_id,
        )
        for row in rows:
            yield SettingEvent(row.field, row.to_dict())
        yield Done()
