"""The export document: what every format renders. Built from a reviewed brief, an answer or
a chat thread; evidence a user may not read is left out here, once, for every format."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from footnote.types import INSUFFICIENT_MARK, Brief, EvidenceCard

WEAK_FLAG = INSUFFICIENT_MARK.strip("()")
"""The flag of a weakly supported sentence or claim, in every format (the answer's mark)."""


@dataclass(frozen=True)
class Work:
    """A cited work (for BibTeX / CSL-JSON)."""

    key: str
    title: str
    url: str = ""
    doi: str | None = None
    arxiv_id: str | None = None
    authors: tuple[str, ...] = ()
    issued: str | None = None
    kind: str = "webpage"
    """webpage | article | report | document"""


@dataclass(frozen=True)
class EvidenceItem:
    """One entry of the evidence appendix: the quote and where exactly it was found."""

    ref: int
    id: str
    quote: str
    source_title: str
    locator: str
    url: str = ""
    fetched_at: str = ""
    content_hash: str = ""
    """The snapshot's sha256 (web) or the document's (library)."""
    published_at: str | None = None
    labels: tuple[str, ...] = ()
    work: Work | None = None
    file_name: str = ""
    """A library file's name (its server path is never shown)."""


def public_location(uri: str) -> tuple[str, str]:
    """`(url, file name)` of a source's uri as an export may show it: a web address stays a URL;
    a path on the server is reduced to the file's name."""
    if uri.startswith(("https://", "http://")):
        return uri, ""
    return "", PurePath(uri.split("://", 1)[-1]).name if uri else ""


@dataclass(frozen=True)
class Paragraph:
    """A sentence (or a few) with the evidence refs it rests on and notes for the reader."""

    text: str
    refs: tuple[int, ...] = ()
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableBlock:
    """A small table (conflicts, the checklist)."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class DocSection:
    """A chapter: its paragraphs, tables and notes."""

    title: str
    paragraphs: tuple[Paragraph, ...] = ()
    tables: tuple[TableBlock, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportDoc:
    """A document ready to render, its evidence appendix and what was withheld."""

    kind: str
    title: str
    meta: tuple[tuple[str, str], ...]
    sections: tuple[DocSection, ...]
    evidence: tuple[EvidenceItem, ...]
    withheld: tuple[str, ...] = ()

    @property
    def works(self) -> list[Work]:
        """The distinct cited works, in appendix order."""
        seen: dict[str, Work] = {}
        for e in self.evidence:
            if e.work is not None:
                seen.setdefault(e.work.key, e.work)
        return list(seen.values())


Provenance = Callable[[EvidenceCard], tuple[str, str, Work | None]]
"""`(fetched_at, content hash, work)` of a card's snapshot or document."""


def withheld_notice(kind: str, withheld: Mapping[str, Sequence[str]], claims: int) -> str:
    """What an export says about what it left out (ids and labels only, never the text)."""
    labels = sorted({lab for labs in withheld.values() for lab in labs})
    out = (f"Withheld from this export: {len(withheld)} {kind}(s) labelled "
           f"{', '.join(labels) or 'restricted'} that you may not read")  # fmt: skip
    if claims:
        out += f", and {claims} sentence(s) resting on them"
    return out + f" ({', '.join(sorted(withheld))})."


def brief_document(brief: Brief, provenance: Provenance,
                   readable: Callable[[EvidenceCard], bool]) -> ExportDoc:  # fmt: skip
    """A reviewed brief as an export document; unreadable cards and the claims citing them
    are left out and listed by id."""
    cards = {c.id: c for c in brief.cards}
    hidden = {c.id: c.labels for c in brief.cards if not readable(c)}
    refs: dict[str, int] = {}

    def ref(card_id: str) -> int:
        return refs.setdefault(card_id, len(refs) + 1)

    review = brief.review
    resolutions: dict[str, Any] = dict(review.get("resolutions") or {})  # type: ignore[call-overload]
    decisions: dict[str, Any] = dict(review.get("decisions") or {})  # type: ignore[call-overload]
    dropped = 0
    sections = []
    if brief.wrapped_up or brief.not_covered:
        sections.append(DocSection("What this brief does not cover",
                                   tuple(Paragraph(n) for n in brief.not_covered)))  # fmt: skip
    for s in brief.sections:
        paragraphs = []
        for c in s.claims:
            if c.kind == "conflict":
                continue
            if any(i in hidden for i in c.card_ids):
                dropped += 1
                continue
            flags = []
            action = (decisions.get(c.id) or {}).get("action")
            if action == "edit":
                flags.append("edited by the analyst; re-checked")
            elif action == "approve":
                flags.append("approved")
            if c.verdict == "weak":
                flags.append(WEAK_FLAG)
            if c.key_number:
                flags.append("key figure")
            paragraphs.append(Paragraph(c.text, tuple(ref(i) for i in c.card_ids if i in cards),
                                        tuple(flags)))  # fmt: skip
        tables = []
        for conflict in brief.conflicts:
            if s.item_id not in conflict.item_ids:
                continue
            res = resolutions.get(conflict.id) or {}
            rows = []
            for v in conflict.values:
                if v.card_id in hidden:
                    continue
                chosen = "analyst's choice" if res.get("card_id") == v.card_id else ""
                rows.append((v.source_title, v.text, str(v.year or ""), v.scope or "(not stated)",
                             f"[{ref(v.card_id)}]", chosen))  # fmt: skip
            note = {"choose": "The analyst chose one value.",
                    "keep_both": "The analyst keeps both values.",
                    "annotate": "The analyst annotated this conflict."}.get(str(res.get("resolution")),
                                                                          "Not resolved by the analyst.")  # fmt: skip
            if res.get("note"):
                note += f" Note: {res['note']}"
            if len(rows) < len(conflict.values):
                note += " Some values are withheld."
            tables.append(TableBlock(conflict.heading,
                                     ("source", "figure", "year", "scope", "evidence", "resolution"),
                                     tuple(rows), note))  # fmt: skip
        notes = () if paragraphs or tables else ("Nothing in this chapter passed the checks.",)
        sections.append(DocSection(s.title, tuple(paragraphs), tuple(tables),
                                   (f"Coverage: {s.coverage}.", *notes)))  # fmt: skip
    checklist = TableBlock("Checklist", ("item", "state", "independent sources", "reasons"),
                           tuple((i.title, i.state, str(i.independent_sources), "; ".join(i.reasons))
                                 for i in brief.checklist),
                           f"Key figures are flagged for a mandatory check; {brief.sample_rate:.0%} "
                           "of the other claims are sampled for review.")  # fmt: skip
    sections.append(DocSection("Checklist", tables=(checklist,)))
    for card in brief.cards:  # every card is in the appendix, cited ones first
        if card.id not in hidden:
            ref(card.id)
    evidence = tuple(_card_item(n, cards[i], provenance) for i, n in refs.items() if i in cards)
    withheld = (withheld_notice("evidence card", hidden, dropped),) if hidden else ()
    return ExportDoc("brief", brief.question, _review_meta(brief), tuple(sections), evidence,
                     withheld)  # fmt: skip


def _review_meta(brief: Brief) -> tuple[tuple[str, str], ...]:
    r = brief.review
    cov: dict[str, Any] = dict(r.get("coverage") or {})  # type: ignore[call-overload]
    state = str(r.get("state", "unreviewed"))
    meta = [("Research run", brief.run_id), ("Report kind", brief.outline.template),
            ("Review state", "SIGNED OFF" if state == "signed" else f"NOT SIGNED OFF ({state})"),
            ("Version", str(r.get("version", ""))), ("Version hash", str(r.get("version_hash", "")))]  # fmt: skip
    if state == "signed":
        meta += [("Reviewer", str(r.get("reviewer"))), ("Signed at", str(r.get("signed_at")))]
    if cov:
        meta.append(("Review coverage",
                     f"{cov.get('seen', 0)}/{cov.get('claims', 0)} claims seen; "
                     f"{cov.get('approved', 0)} approved, {cov.get('edited', 0)} edited, "
                     f"{cov.get('rejected', 0)} rejected; {cov.get('key_numbers_ticked', 0)}/"
                     f"{cov.get('key_numbers', 0)} key figures ticked; "
                     f"{cov.get('conflicts_resolved', 0)}/{cov.get('conflicts', 0)} conflicts "
                     f"resolved; {cov.get('minutes', 0)} minutes"))  # fmt: skip
    return tuple(meta)


def _card_item(n: int, card: EvidenceCard, provenance: Provenance) -> EvidenceItem:
    fetched, digest, work = provenance(card)
    url, file_name = public_location(card.url)
    return EvidenceItem(n, card.id, card.snippet, card.source_title, card.locator, url=url,
                        fetched_at=fetched, content_hash=digest, published_at=card.published_at,
                        labels=card.labels, work=work, file_name=file_name)  # fmt: skip
