"""The settings job and the cross-checks on small documents: every value goes through the
verification gate, not-stated fields say so, exports carry the citations."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

from footnote.config import IngestSettings
from footnote.events import SettingEvent
from footnote.ingest import parse_file
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.reproduce import rules
from footnote.pipelines.reproduce.crosscheck import cross_checks
from footnote.pipelines.reproduce.extract import choose_passages
from footnote.pipelines.reproduce.fields import GROUPS
from footnote.pipelines.reproduce.settings import (
    SettingsDeps,
    SettingsPipeline,
    build_rows,
    evidence_of,
    verify_candidates,
)
from footnote.pipelines.reproduce.table import to_config, to_csv, to_markdown
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, Table

PAPER = """# A small paper

## Experiments

We fine-tune BERT on the SST-2 dataset. Adam optimizer is used with a learning rate of 2e-5.
We trained our classifier with a batch size of 32 for 3 epochs. The dropout probability is set
to 0.1 for all layers. Training took 2 hours on a single Tesla V100 GPU.

The evaluation metrics are accuracy and macro-F1.

Table 1: Results on the test set.

| Model | Dev | Test | Avg. |
|---|---|---|---|
| BERT | 91.0 | 90.0 | 90.5 |
| Ours | 93.0 | 92.0 | 93.5 |
"""


def _store(tmp_path: Path) -> tuple[SqliteStore, str]:
    path = tmp_path / "paper.md"
    path.write_text(PAPER, encoding="utf-8")
    doc = parse_file(path, IngestSettings())
    store = SqliteStore(tmp_path / "db.sqlite")
    store.save_document(doc)
    return store, doc.source.id


def _run(deps: SettingsDeps, source_id: str) -> SettingsPipeline:
    pipeline = SettingsPipeline(deps)

    async def go() -> list[object]:
        return [e async for e in pipeline.run(source_id, "A small paper")]

    events = asyncio.run(go())
    assert sum(isinstance(e, SettingEvent) for e in events) == 16
    return pipeline


def test_rules_fill_the_stated_fields_and_leave_the_rest_not_stated(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    table = _run(SettingsDeps(store, "rules"), sid).table
    assert table is not None
    got = {r.field: [v.value for v in r.values] for r in table.rows}
    assert got["learning_rate"] == ["2e-5"]
    assert got["batch_size"] == ["32"] and got["epochs"] == ["3"] and got["dropout"] == ["0.1"]
    assert got["optimizer"] == ["Adam"]
    assert got["training_time"] == ["2 hours"]
    assert "Tesla V100 GPU" in got["hardware"][0]
    assert {"accuracy", "macro-F1"} <= set(got["metrics"])
    for name in ("seeds", "max_length", "train_size"):
        assert got[name] == [] and table.row(name).reason == "not stated in the paper's text"
    lr = table.row("learning_rate").values[0]
    assert "learning rate of 2e-5" in lr.quote and lr.verdict == "supported"
    assert store.get_block(lr.evidence_id) is not None


def _model(reply: dict[str, object]) -> RoleModel:
    fake = FakeChatModel(lambda _msgs: json.dumps(reply))
    return RoleModel("compose", fake, ledger=Ledger(), external=False)  # type: ignore[arg-type]


def test_model_values_pass_the_gate_or_are_rejected_with_reasons(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    reply = {"settings": [
        {"field": "learning_rate", "value": "2e-5", "evidence": "E1", "quote": "a learning rate of 2e-5"},
        # a number the cited passage does not contain
        {"field": "learning_rate", "value": "3e-4", "evidence": "E1", "quote": "a learning rate of 3e-4"},
        # a real number cited for the wrong field: no cue word in the quote
        {"field": "seeds", "value": "32", "evidence": "E1", "quote": "a batch size of 32"},
        # an id that was never shown
        {"field": "epochs", "value": "3", "evidence": "E9", "quote": "for 3 epochs"},
        {"field": "optimizer", "value": "Adam", "evidence": "E1", "quote": "Adam optimizer is used"},
    ]}  # fmt: skip
    table = _run(SettingsDeps(store, "model", _model(reply), candidates=4), sid).table
    assert table is not None
    assert [v.value for v in table.row("learning_rate").values] == ["2e-5"]
    rejected = table.row("learning_rate").rejected
    assert rejected and rejected[0].value == "3e-4" and "numbers" in rejected[0].reasons
    seeds = table.row("seeds")
    assert not seeds.values and "cue" in seeds.rejected[0].reasons
    assert seeds.reason is not None and seeds.reason.startswith("not stated")
    assert not table.row("epochs").values  # E9 was never shown: nothing to check, nothing kept
    assert [v.by for v in table.row("optimizer").values] == ["model"]


def test_a_table_value_is_cited_to_its_cell(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    blocks = list(store.iter_blocks(sid))
    table_block = next(b for b in blocks if b.table is not None)
    cand = rules.Candidate("test_size", "92.0", table_block.id, "", by="model")
    [(_, check)] = verify_candidates([cand], evidence_of(blocks))
    assert "#r" in check.evidence_id and check.verdict == "supported"


def test_exports_carry_values_citations_and_not_stated(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    table = _run(SettingsDeps(store, "rules"), sid).table
    assert table is not None
    config = to_config(table)
    assert config["config"]["learning_rate"] == 2e-5 and config["config"]["batch_size"] == 32
    assert "seeds" in config["not_stated"]
    assert config["_cite"]["learning_rate"] == [table.row("learning_rate").values[0].evidence_id]
    md = to_markdown(table)
    assert "| seeds | *not stated* |" in md.replace("random seeds or runs", "seeds")
    assert table.row("learning_rate").values[0].evidence_id in md
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    lr = next(r for r in rows if r["field"] == "learning_rate")
    assert lr["number"] == "2e-05" and lr["cite"] and lr["quote"]
    assert next(r for r in rows if r["field"] == "seeds")["status"] == "not_stated"
    assert json.loads(json.dumps(table.to_dict()))["not_stated"]


def test_passages_are_chosen_by_cue_words(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    shown = choose_passages(list(store.iter_blocks(sid)), GROUPS["training"], 1)
    assert len(shown.blocks) == 1 and "learning rate" in shown.blocks[0].text
    assert shown.real_id("E1") == shown.blocks[0].id and shown.real_id("E2") is None


def test_cross_checks_find_the_wrong_average_and_cite_both_sides(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    checks = cross_checks(list(store.iter_blocks(sid)))
    by_row = {c.where.split("(")[1].split(" row")[0]: c for c in checks}
    assert by_row["BERT"].adds_up and not by_row["Ours"].adds_up
    wrong = by_row["Ours"]
    assert wrong.stated.value == 93.5 and wrong.recomputed == 92.5
    assert wrong.stated.cite.endswith("c3") and [i.cite[-4:] for i in wrong.inputs] == [
        "r2c1",
        "r2c2",
    ]


def _block(table: Table) -> Block:
    return Block("0123abcd-p1-aaaaaa", "s", "table", table.as_text(), 1, table=table)


def test_a_total_over_some_columns_is_read_once_per_table() -> None:
    table = Table(
        (("", "Source", "Long", "Short", "Total"),),
        (("Train", "28,557", "3,177", "2,210", "5,387"), ("Test", "7,428", "908", "616", "1,524"),
         ("Dev", "4,134", "454", "312", "767")),
    )  # fmt: skip
    checks = cross_checks([_block(table)])
    assert len(checks) == 3
    assert [c.adds_up for c in checks] == [True, True, False]  # 454 + 312 = 766, not 767
    assert all(len(c.inputs) == 2 for c in checks)


def test_shares_and_totals_in_text() -> None:
    en = Block("0123abcd-p1-bbbbbb", "s", "paragraph",
               "We split all cases into train (70%, 3177 samples), Dev (10%, 454), and Test (30%, 908).", 1)  # fmt: skip
    zh = Block("0123abcd-p1-cccccc", "s", "paragraph",
               "HFQ 包含训练集 9,600 条、验证集 1,200 条和测试集 1,200 条，共 12,000 条。", 1, lang="zh")  # fmt: skip
    checks = cross_checks([en, zh])
    shares = [c for c in checks if c.kind == "percentage"]
    assert [c.adds_up for c in shares] == [True, True, False]
    assert round(shares[2].recomputed, 1) == 20.0
    total = next(c for c in checks if c.kind == "sum")
    assert total.adds_up and total.recomputed == 12000


def test_the_tolerance_setting_widens_agreement() -> None:
    table = Table(
        (("Model", "A", "B", "Avg"),),
        (("x", "80.0", "81.0", "80.7"), ("y", "70.0", "70.0", "70.0")),
    )
    assert not cross_checks([_block(table)])[0].adds_up
    assert cross_checks([_block(table)], factor=3.0)[0].adds_up


def test_rows_deduplicate_values() -> None:
    assert build_rows([])[0].field == "model"


def test_a_setting_is_the_value_of_its_quoted_span() -> None:
    """Issue 30, finding 12: "2e-5" was kept against a quote saying 2e-3 (the 5 came from
    "5 epochs") and the right value written as 0.002 was rejected; a value the block states
    elsewhere is not stated by the quote either."""
    text = (
        "We train for 5 epochs with a learning rate of 2e-3 and a batch size of 32. "
        "The weight decay is 2e-5."
    )
    block = Block("0123abcd-p1-dddddd", "s", "paragraph", text, 1)
    quote = "We train for 5 epochs with a learning rate of 2e-3 and a batch size of 32."
    cands = [
        rules.Candidate("learning_rate", value, block.id, quote, by="model")
        for value in ("2e-5", "0.002", "2 × 10^-3", "2e-3")
    ]
    checked = verify_candidates(cands, evidence_of([block]))
    kept = {c.value: bool(build_rows([(c, check)])[5].values) for c, check in checked}
    assert kept == {"2e-5": False, "0.002": True, "2 × 10^-3": True, "2e-3": True}
    lr = build_rows(checked)[5]
    assert lr.field == "learning_rate" and [v.value for v in lr.values] == ["0.002"]
    assert [r.value for r in lr.rejected] == ["2e-5"] and lr.rejected[0].reasons
    # rules read the same sentence: the learning rate is 2e-3, nothing else
    found = [c.value for c in rules.extract([block]) if c.field == "learning_rate"]
    assert found == ["2e-3"]
