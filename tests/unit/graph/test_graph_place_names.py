"""Place names cross languages by translation, and a Chinese definite reference several nodes
fit is asked back (seen in the embedded run, gd-064: "德国那家供应商供应哪些产品？" — three
suppliers are in Germany — was refused: 德国 aligned to nothing, and only English references
were read)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from footnote.config import GraphSettings
from footnote.index.graph.aliases import BUILDS, TABLE_FILE
from footnote.index.graph.align import EntityIndex, entity_index
from footnote.index.graph.places import translations
from footnote.pipelines.graph.definite import definite_signals, references
from footnote.store.graph.base import GraphSpec, GraphStore
from footnote.workspace import graph_catalog

SPEC = {"name": "trade", "nodes": {"Supplier": {
    "properties": {"name": "STRING", "country": "STRING", "city": "STRING"},
    "key": "name", "name": "name"}}, "relationships": {}}  # fmt: skip
ROWS = {"Supplier": [
    {"name": "Heli Süßwaren", "country": "Germany", "city": "Berlin"},
    {"name": "Plutzer", "country": "Germany", "city": "Frankfurt"},
    {"name": "Exotic Liquids", "country": "UK", "city": "London"},
    {"name": "上海食品", "country": "中国", "city": "上海"},
]}  # fmt: skip


@pytest.fixture()
def trade(tmp_path: Path) -> tuple[GraphStore, EntityIndex, Path]:
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    catalog.create(GraphSpec.model_validate(SPEC), ROWS, {})
    store = catalog.open("trade")
    folder = catalog.folder("trade") / "align"
    return store, entity_index(store, None, GraphSettings(), folder), folder


def test_the_place_table_reads_both_ways() -> None:
    assert "德国" in translations("Germany")
    assert "英国" in translations("UK") and "英国" in translations("United Kingdom")
    assert "Germany" in translations("德国")
    assert translations("Veldmark") == ()


def test_a_stored_place_aligns_from_the_other_language(
    trade: tuple[GraphStore, EntityIndex, Path],
) -> None:
    store, index, _ = trade
    for mention, prop, value in [("德国", "country", "Germany"), ("英国", "country", "UK"),
                                 ("柏林", "city", "Berlin"), ("China", "country", "中国"),
                                 ("Shanghai", "city", "上海")]:  # fmt: skip
        best = index.align_value(mention, ["Supplier"]).best
        assert best is not None and (best.entity.prop, best.entity.key) == (prop, value), mention
        assert best.method == "exact"
    assert index.align_value("法兰克", ["Supplier"]).best is None  # no partial names
    store.close()


def test_a_table_built_before_translations_is_rebuilt_once(
    trade: tuple[GraphStore, EntityIndex, Path],
) -> None:
    store, index, folder = trade
    index.table.close()
    with sqlite3.connect(folder / TABLE_FILE) as db:  # as an older build left it
        db.execute("DELETE FROM meta WHERE k = 'format'")
        db.execute("DELETE FROM alias WHERE norm = '德国'")
    before = BUILDS["table"]
    again = entity_index(store, None, GraphSettings(), folder)
    assert BUILDS["table"] == before + 1
    assert again.align_value("德国", ["Supplier"]).best is not None
    again.table.close()
    entity_index(store, None, GraphSettings(), folder).table.close()
    assert BUILDS["table"] == before + 1  # current: opened, not rebuilt
    store.close()


def test_chinese_definite_references() -> None:
    spec = GraphSpec.model_validate(SPEC)
    assert references("德国那家供应商供应哪些产品？", spec) == [
        ("Supplier", "德国那家供应商", "德国")
    ]
    assert references("来自柏林的那家供应商叫什么？", spec) == [
        ("Supplier", "来自柏林的那家供应商", "柏林")
    ]
    assert references("德国的供应商有哪些？", spec) == []  # no "that one": all of them
    assert references("德国那些供应商供应哪些产品？", spec) == []  # plural
    assert references("德国那家商店在哪？", spec) == []  # no such label


def test_a_chinese_reference_several_nodes_fit_asks_back(
    trade: tuple[GraphStore, EntityIndex, Path],
) -> None:
    store, index, _ = trade
    asked: list[tuple[str, str, str]] = []

    def holders(label: str, prop: str, value: str) -> list[str]:
        asked.append((label, prop, value))
        return [r["name"] for r in ROWS["Supplier"] if r[prop] == value]

    (signal,) = definite_signals("德国那家供应商供应哪些产品？", store.spec, index, holders)
    assert asked == [("Supplier", "country", "Germany")]
    assert signal.options == ("Heli Süßwaren", "Plutzer")
    one = definite_signals("英国那家供应商供应哪些产品？", store.spec, index, holders)
    assert one == []  # one supplier in the UK: the reference is to it
    store.close()
