"""Tables by structure: a question naming a row and a column resolves to that cell by code."""

from __future__ import annotations

from footnote.pipelines.ask.tables import column_labels, resolve_cell, resolve_in_tables
from footnote.types import Block, Table

SCIBERT = Table(
    header=(
        ("Field", "Task", "Dataset", "SOTA", "BERT-Base", "", "SciBERT", ""),
        ("", "", "", "", "Frozen", "Finetune", "Frozen", "Finetune"),
    ),
    rows=(
        ("Bio", "NER", "BC5CDR", "88.85", "85.08", "86.72", "88.73", "90.01"),
        ("", "", "JNLPBA", "78.58", "74.05", "76.09", "75.77", "77.28"),
        ("", "REL", "ChemProt", "76.68", "68.21", "79.14", "75.03", "83.64"),
        ("CS", "NER", "SciERC", "64.20", "63.58", "65.24", "65.77", "67.57"),
    ),
    caption="Table 1: Test performances of all BERT variants on all tasks and datasets.",
)
FORECAST = Table(
    header=(("主要财务数据及预测", "2020", "2021", "2022E", "2023E", "2024E"),),
    rows=(
        ("营业收入(百万元)", "1,236", "1,567", "3,604", "5,056", "6,245"),
        ("净利润(百万元)", "84", "171", "769", "933", "1,120"),
    ),
    caption="",
)


def _block(table: Table, n: int = 0) -> Block:
    return Block(f"b{n}", "s", "table", table.as_text(), 3, table=table)


def test_column_paths_fill_spanning_headers() -> None:
    labels = column_labels(_block(SCIBERT))
    assert labels[7] == "SciBERT / Finetune"
    assert labels[5] == "BERT-Base / Finetune"


def test_row_and_column_named_in_english() -> None:
    cell = resolve_cell(
        "In Table 1, what is the score of finetuned SciBERT on ChemProt?", _block(SCIBERT)
    )
    assert cell is not None
    assert (cell.value, cell.row_label.endswith("ChemProt")) == ("83.64", True)
    assert cell.evidence_id == "b0#r4c7"
    ev = cell.evidence(0.8)
    assert ev.text.endswith("SciBERT / Finetune: 83.64") and "ChemProt" in ev.text


def test_row_and_column_named_in_chinese() -> None:
    cell = resolve_cell(
        "“主要财务数据及预测”表中，2023E 的营业收入是多少百万元？", _block(FORECAST)
    )
    assert cell is not None and cell.value == "5,056"
    assert cell.sentence("zh") == "营业收入(百万元)，2023E：5,056。"
    net = resolve_cell(
        "What is the forecast net profit (in million yuan) for 2024E?", _block(FORECAST)
    )
    assert net is not None and net.value == "1,120"


def test_unclear_column_resolves_nothing() -> None:
    # "SciBERT" names two columns (frozen and finetune): no guess
    assert resolve_cell("What does SciBERT get on ChemProt?", _block(SCIBERT)) is None
    assert resolve_cell("Which dataset is the hardest?", _block(SCIBERT)) is None


def test_best_table_wins() -> None:
    cell = resolve_in_tables(
        "What is the frozen BERT-Base result on SciERC?", [_block(FORECAST, 1), _block(SCIBERT, 2)]
    )
    assert cell is not None and cell.block.id == "b2" and cell.value == "63.58"


def test_a_named_table_excludes_look_alike_cells_elsewhere() -> None:
    q = "In Table 2, what is the frozen BERT-Base result on SciERC?"
    assert resolve_in_tables(q, [_block(SCIBERT, 2)], refs=["2"]) is None  # SCIBERT is Table 1
    assert resolve_in_tables(q.replace("Table 2", "Table 1"), [_block(SCIBERT, 2)], refs=["1"])
