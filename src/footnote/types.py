"""The vocabulary: frozen dataclasses shared by every layer. No I/O here.

Coordinates: a `BBox` is `(x0, y0, x1, y1)` in PDF points with the origin at the
top-left of the page (y grows downwards), the way a viewer draws a highlight.
Pages are 1-based. Non-paginated sources (HTML, Markdown, text) use page 1 and
`bbox=None`.

Ids:
- a source id is the first 12 hex digits of `Source.sha256`: the file's sha256, or, when
  `Source.parser` is set (pages were read by OCR), the sha256 of the file's sha256 and the
  parser, so the same bytes read with OCR are a new version (`parse_identity`);
- a block id is `<sha[:8]>-p<page>-<hash6>` where hash6 hashes the block's order
  and text, so re-ingesting the same bytes yields the same ids (`make_block_id`; 32 bits of
  the source id: n sources collide with probability ~n²/2³³, the README's budget);
- a table cell is addressed as `<block_id>#r<row>c<col>` (0-based, header rows
  first) — see `cell_id` / `parse_evidence_id`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Literal

BlockKind = Literal[
    "heading",
    "paragraph",
    "list",
    "table",
    "formula",
    "caption",
    "figure",
    "reference",
    "footnote",
]
BLOCK_KINDS: tuple[BlockKind, ...] = (
    "heading",
    "paragraph",
    "list",
    "table",
    "formula",
    "caption",
    "figure",
    "reference",
    "footnote",
)
SourceKind = Literal[
    "pdf", "html", "md", "text", "docx", "pptx", "epub", "tex", "csv", "xlsx", "web", "graph"
]
SourceType = Literal["primary", "secondary", "reprint", "unknown"]
Verdict = Literal["supported", "weak", "unsupported"]
AnswerStatus = Literal["answered", "no_evidence", "weak_evidence", "refused"]

BBox = tuple[float, float, float, float]


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def parse_identity(file_sha: str, parser: str) -> str:
    """The sha256 that identifies one reading of a file: the file's own for a plain parse."""
    if not parser:
        return file_sha
    return hashlib.sha256(f"{file_sha}\x1f{parser}".encode()).hexdigest()


def make_block_id(source_sha: str, page: int, order: int, text: str) -> str:
    """Stable block id from the source's content hash, the block's position and text."""
    digest = hashlib.sha256(f"{order}\x1f{text}".encode()).hexdigest()[:6]
    return f"{source_sha[:8]}-p{page}-{digest}"


def cell_id(block_id: str, row: int, col: int) -> str:
    """The evidence id of one table cell (0-based row over header + body rows)."""
    return f"{block_id}#r{row}c{col}"


BLOCK_ID_PATTERN = r"[0-9a-f]{8}-p\d+-[0-9a-f]{6,}"
"""A block id as `make_block_id` writes it (no anchors: embed it in larger patterns)."""
COMPUTATION_ID_PATTERN = r"calc-[0-9a-f]{10}"
"""A computation run in the code sandbox over cited numbers (`agent.compute`)."""
EVIDENCE_ID_PATTERN = rf"(?:{BLOCK_ID_PATTERN}(?:#r\d+c\d+)?|{COMPUTATION_ID_PATTERN})"
"""A block id, a table-cell id (`…#r1c2`) or a computation id (`calc-…`)."""
EVIDENCE_ID_RE = re.compile(f"^{EVIDENCE_ID_PATTERN}$")
"""Matches a whole string that is a block or cell id."""
_CELL_RE = re.compile(r"^(?P<block>[^#\s]+)#r(?P<row>\d+)c(?P<col>\d+)$")


def parse_evidence_id(evidence_id: str) -> tuple[str, tuple[int, int] | None]:
    """Split `block#r3c2` into `("block", (3, 2))`; a plain block id gives `(id, None)`."""
    m = _CELL_RE.match(evidence_id)
    if m is None:
        return evidence_id, None
    return m["block"], (int(m["row"]), int(m["col"]))


@dataclass(frozen=True)
class Table:
    """A table as structure: header rows and body rows of cell texts."""

    header: tuple[tuple[str, ...], ...]
    rows: tuple[tuple[str, ...], ...]
    _: KW_ONLY
    caption: str = ""

    @property
    def all_rows(self) -> tuple[tuple[str, ...], ...]:
        """Header rows followed by body rows: the row index space of cell ids."""
        return self.header + self.rows

    def cell(self, row: int, col: int) -> str | None:
        """Text of a cell by (row, col) over `all_rows`, or None when out of range."""
        rows = self.all_rows
        if 0 <= row < len(rows) and 0 <= col < len(rows[row]):
            return rows[row][col]
        return None

    def as_text(self) -> str:
        """A plain-text rendering (caption, then one line per row, cells split by ' | ')."""
        lines = [self.caption] if self.caption else []
        lines += [" | ".join(r) for r in self.all_rows]
        return "\n".join(lines)


@dataclass(frozen=True)
class Block:
    """One addressable unit of evidence inside a source."""

    id: str
    source_id: str
    kind: BlockKind
    text: str
    page: int
    _: KW_ONLY
    bbox: BBox | None = None
    section_path: tuple[str, ...] = ()
    order: int = 0
    lang: str = "en"
    table: Table | None = None
    formula_number: str | None = None
    links: tuple[str, ...] = ()
    """Ids of reference blocks that in-text citation markers in this block point to."""
    ocr_confidence: float | None = None
    """Set when the text was read by OCR: the mean word confidence (0–1). Quotes from such
    blocks may differ from the page by OCR errors, so they are matched leniently."""
    latex: str | None = None
    """A formula's LaTeX, where the source had it or a rule set could write it."""


@dataclass(frozen=True)
class Section:
    """A node of the section tree: heading text, level and the ids of its blocks."""

    title: str
    level: int
    _: KW_ONLY
    block_ids: tuple[str, ...] = ()
    children: tuple[Section, ...] = ()


@dataclass(frozen=True)
class Source:
    """A document version we ingested (or a web snapshot, or a graph)."""

    id: str
    kind: SourceKind
    title: str
    uri: str
    sha256: str
    _: KW_ONLY
    pages: int = 1
    lang: str = "en"
    version: int = 1
    fetched_at: str | None = None
    published_at: str | None = None
    """ISO date (YYYY or YYYY-MM or YYYY-MM-DD) the document says it was published."""
    source_type: SourceType = "unknown"
    labels: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    doi: str | None = None
    arxiv_id: str | None = None
    parser: str = ""
    """What read the file beyond its text layer (e.g. the OCR engine and languages); empty
    for a plain parse. Part of the version's identity: see `sha256`."""
    owner: str = ""
    """The user who uploaded it ("" for the operator: CLI ingests, single-user mode)."""


@dataclass(frozen=True)
class Document:
    """A parsed source: its blocks in reading order and its section tree."""

    source: Source
    blocks: tuple[Block, ...]
    _: KW_ONLY
    sections: tuple[Section, ...] = ()


def with_source_id(document: Document, source_id: str, **changes: object) -> Document:
    """The document under another source id: block ids take the new id's first 8 hex digits
    (the rest of each id is kept, so ids stay stable per record), as do links and sections."""
    old = document.source.id
    if source_id == old and not changes:
        return document

    def bid(block_id: str) -> str:
        return source_id[:8] + block_id[8:] if block_id.startswith(old[:8]) else block_id

    def section(s: Section) -> Section:
        return replace(s, block_ids=tuple(bid(b) for b in s.block_ids),
                       children=tuple(section(c) for c in s.children))  # fmt: skip

    blocks = tuple(
        replace(b, id=bid(b.id), source_id=source_id, links=tuple(bid(x) for x in b.links))
        for b in document.blocks
    )
    source = replace(document.source, id=source_id, **changes)  # type: ignore[arg-type]
    return Document(source, blocks, sections=tuple(section(s) for s in document.sections))


@dataclass(frozen=True)
class Hit:
    """One search result: a block with the score from each method that found it."""

    block: Block
    score: float
    _: KW_ONLY
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    snippet: str = ""
    context: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Citation:
    """One footnote on an answer sentence and what the checks made of it."""

    evidence_id: str
    _: KW_ONLY
    quote: str = ""
    page: int | None = None
    section: tuple[str, ...] = ()
    verdict: Verdict = "unsupported"
    relevance: float = 0.0
    checks: dict[str, str] = field(default_factory=dict)


INSUFFICIENT_MARK = "(insufficiently supported)"
"""Appended to a weakly supported sentence wherever an answer is shown as plain text."""


def flat_sentence(text: str, *, insufficient: bool, marks: str = "") -> str:
    """A sentence as plain text: its citation `marks`, then `INSUFFICIENT_MARK` when weak."""
    return f"{text}{marks} {INSUFFICIENT_MARK}" if insufficient else f"{text}{marks}"


@dataclass(frozen=True)
class Sentence:
    """One answer sentence with its citations."""

    text: str
    _: KW_ONLY
    citations: tuple[Citation, ...] = ()
    factual: bool = True
    marked_insufficient: bool = False


@dataclass(frozen=True)
class Usage:
    """What a run cost."""

    tokens_in: int = 0
    tokens_out: int = 0
    model_calls: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Answer:
    """The final answer object of the ask pipeline."""

    question: str
    status: AnswerStatus
    sentences: tuple[Sentence, ...]
    _: KW_ONLY
    support_score: float = 0.0
    reason: str | None = None
    evidence_board: tuple[Citation, ...] = ()
    nearest: tuple[Hit, ...] = ()
    usage: Usage = field(default_factory=Usage)

    @property
    def text(self) -> str:
        """The answer as one string (`--json`, chat history, memory, the agent's tool): a weakly
        supported sentence carries the same mark as in the terminal and the web app."""
        return " ".join(
            flat_sentence(s.text, insufficient=s.marked_insufficient) for s in self.sentences
        )

    @property
    def plain_text(self) -> str:
        """The sentences alone, unmarked (what answer-accuracy metrics compare with gold)."""
        return " ".join(s.text for s in self.sentences)


# -- research briefs (design §4: EvidenceCard, Report) ---------------------------------------
Independence = Literal["independent", "same_origin", "unconfirmed"]
StopReason = Literal[
    "done", "budget_tokens", "budget_calls", "budget_searches", "budget_fetches", "budget_time"
]
CoverageState = Literal["covered", "uncovered", "conflicting"]


@dataclass(frozen=True)
class Snapshot:
    """A fetched page or file, content-addressed: `id` is the first 16 hex of its raw sha256.

    `text` is the extracted text every snippet's character span points into."""

    id: str
    url: str
    final_url: str
    fetched_at: str
    sha256: str
    text: str
    _: KW_ONLY
    title: str = ""
    content_type: str = ""
    status: int = 200
    canonical_url: str = ""
    published_at: str | None = None
    doc_number: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    links: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    origin: str = "web"  # where it came from: web, scholarly, licensed
    paywalled: bool = False  # behind a paywall or login wall: the text is a teaser at most
    manual_check: str = ""  # what a person must check by hand on the page (when paywalled)


@dataclass(frozen=True)
class EvidenceStandard:
    """What evidence an outline item needs before it counts as covered."""

    primary_required: bool = False
    min_independent: int = 1
    date_from: str | None = None
    date_to: str | None = None
    web: bool = True


@dataclass(frozen=True)
class OutlineItem:
    """One section of the brief: what it must answer and its evidence standard."""

    id: str
    title: str
    asks: str
    _: KW_ONLY
    standard: EvidenceStandard = field(default_factory=EvidenceStandard)
    depends_on: tuple[str, ...] = ()
    terms: str = ""
    """Search words of the item's topic, added to the question's subject in its queries."""


@dataclass(frozen=True)
class Outline:
    """The brief's plan of sections, as proposed and then confirmed or edited by the analyst."""

    question: str
    template: str
    items: tuple[OutlineItem, ...]
    _: KW_ONLY
    confirmed: bool = False
    lang: str = "en"


@dataclass(frozen=True)
class SubQuestion:
    """A bounded investigation of one outline item, with its share of the run's budget."""

    id: str
    item_id: str
    question: str
    queries: tuple[str, ...]
    _: KW_ONLY
    budget: dict[str, float] = field(default_factory=dict)
    web: bool = True
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvidenceCard:
    """A claim with the exact snippet it rests on and where that snippet is (design §4)."""

    id: str
    claim: str
    snippet: str
    locator: str
    _: KW_ONLY
    sub_question: str = ""
    block_id: str | None = None
    snapshot_id: str | None = None
    span: tuple[int, int] | None = None
    source_id: str = ""
    source_title: str = ""
    url: str = ""
    page: int | None = None
    published_at: str | None = None
    source_type: SourceType = "unknown"
    origin_candidates: tuple[str, ...] = ()
    attribution_basis: str = ""
    attribution_confidence: float = 0.0
    independence: Independence = "unconfirmed"
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class ConflictValue:
    """One source's figure for a metric, with the scope it states."""

    card_id: str
    value: float
    unit: str
    text: str
    _: KW_ONLY
    year: int | None = None
    scope: str = ""
    source_title: str = ""


@dataclass(frozen=True)
class Conflict:
    """Different values of the same metric after normalising: shown side by side, never merged."""

    id: str
    metric: str
    values: tuple[ConflictValue, ...]
    _: KW_ONLY
    item_ids: tuple[str, ...] = ()
    note: str = ""
    kind: str = "disagree"
    """disagree (sources give one metric different values) | settings (undated figures of one
    measure, papers' results for different settings, side by side)"""

    @property
    def heading(self) -> str:
        """How a brief introduces it."""
        lead = "Sources disagree" if self.kind == "disagree" else "One measure, different settings"
        return f"{lead}: {self.metric}"


@dataclass(frozen=True)
class Claim:
    """One sentence of the brief, the cards it cites and what the checks made of it."""

    id: str
    text: str
    card_ids: tuple[str, ...]
    _: KW_ONLY
    verdict: Verdict = "unsupported"
    checks: dict[str, str] = field(default_factory=dict)
    key_number: bool = False
    sampled: bool = False
    kind: str = "claim"
    """claim | conflict | limitation"""


@dataclass(frozen=True)
class BriefSection:
    """A chapter of the brief: its outline item, its claims and the cards it was bound to."""

    item_id: str
    title: str
    claims: tuple[Claim, ...]
    _: KW_ONLY
    bound_cards: tuple[str, ...] = ()
    coverage: CoverageState = "uncovered"
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChecklistItem:
    """Coverage of one outline item, and why."""

    item_id: str
    title: str
    state: CoverageState
    _: KW_ONLY
    reasons: tuple[str, ...] = ()
    cards: int = 0
    independent_sources: int = 0
    stop_reasons: tuple[str, ...] = ()
    unanswered: tuple[str, ...] = ()
    """The parts of the item's question no supported claim answers (`research.answered`)."""


@dataclass(frozen=True)
class Brief:
    """The research report (design §4 Report): sections of checked claims, their cards, the
    conflicts, the coverage checklist, what was not covered and what it cost."""

    run_id: str
    question: str
    outline: Outline
    sections: tuple[BriefSection, ...]
    cards: tuple[EvidenceCard, ...]
    _: KW_ONLY
    mode: str = "brief"
    conflicts: tuple[Conflict, ...] = ()
    checklist: tuple[ChecklistItem, ...] = ()
    not_covered: tuple[str, ...] = ()
    unused_cards: tuple[str, ...] = ()
    wrapped_up: bool = False
    sample_rate: float = 0.0
    budget_used: dict[str, float] = field(default_factory=dict)
    review: dict[str, object] = field(default_factory=dict)
