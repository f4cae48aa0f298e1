"""Evidence as given to a model: numbered items with the text that citations are checked against."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from typing import Literal

from footnote.types import Block, cell_id, parse_evidence_id


@dataclass(frozen=True)
class Evidence:
    """One evidence item: a block (or a table cell) with the question-relevance it was found at."""

    id: str
    text: str
    block: Block
    _: KW_ONLY
    relevance: float = 0.0
    context: str = ""
    """Surrounding text shown to the judge (a cell's row; for a result row, the query's
    parameters); numbers are checked against `text` only."""
    kind: Literal["block", "row"] = "block"
    """`row`: a graph result row, whose sentences are checked value by value
    (`verify.values`) instead of by word overlap."""

    @property
    def page(self) -> int:
        """Page of the underlying block."""
        return self.block.page

    @property
    def section(self) -> tuple[str, ...]:
        """Section path of the underlying block."""
        return self.block.section_path


class EvidenceSet:
    """The evidence shown to the model. Only ids in here can be cited; cells resolve via their table."""

    def __init__(self, items: list[Evidence]) -> None:
        self.items = items
        self._by_id = {e.id: e for e in items}

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Evidence]:
        return iter(self.items)

    @property
    def ids(self) -> list[str]:
        """Ids in the order shown."""
        return [e.id for e in self.items]

    def resolve(self, evidence_id: str) -> Evidence | None:
        """The evidence an id names, if it was given; a cell id of a given table resolves to the cell."""
        found = self._by_id.get(evidence_id)
        if found is not None:
            return found
        block_id, cell = parse_evidence_id(evidence_id)
        table_ev = self._by_id.get(block_id)
        if table_ev is None or cell is None or table_ev.block.table is None:
            return None
        text = table_ev.block.table.cell(*cell)
        if text is None:
            return None
        row, col = cell
        table = table_ev.block.table
        header = table.header[-1] if table.header else ()
        label = header[col] if col < len(header) else ""
        row_text = " | ".join(table.all_rows[row])
        return Evidence(
            cell_id(block_id, row, col),
            f"{label}: {text}" if label else text,
            table_ev.block,
            relevance=table_ev.relevance,
            context=f"{table.caption}\n{' | '.join(header)}\n{row_text}".strip(),
        )
