"""Alignment at scale and across scripts (issue #33 item 5): the alias table and the HNSW
name index persisted beside the graph, built at import and opened (never rebuilt) per
request; Chinese renderings of Latin names by sound key; property values alignable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graph_films import FILMS, NODES, RELS

from footnote.config import GraphSettings
from footnote.index.graph.aliases import BUILDS
from footnote.index.graph.align import Entity, EntityIndex, entity_index
from footnote.models.base import Vectors
from footnote.models.fake import HashEmbedder
from footnote.store.graph.base import GraphSpec
from footnote.workspace import graph_catalog

PEOPLE = [
    Entity("Person", n, n)
    for n in ("Ron Howard", "Tom Hanks", "Tom Cruise", "Keanu Reeves", "Meg Ryan", "Howard Deutch")
]


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.passages += len(texts)
        return super().embed_passages(texts)


def test_a_chinese_rendering_reaches_the_latin_name_without_vectors() -> None:
    idx = EntityIndex(PEOPLE, None)
    a = idx.align("朗·霍华德")
    assert a.best is not None and a.best.entity.key == "Ron Howard"
    assert a.best.method == "transliteration" and not a.ambiguous
    assert idx.align("汤姆·汉克斯").best.entity.key == "Tom Hanks"  # type: ignore[union-attr]
    assert idx.align("基努·里维斯").best.entity.key == "Keanu Reeves"  # type: ignore[union-attr]
    assert idx.mentions("朗·霍华德导演过哪些电影？") == ["朗·霍华德"]
    assert idx.align("李·安").best is None  # no Latin name sounds like it


def test_alignment_is_built_at_import_and_opened_per_request(tmp_path: Path) -> None:
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    before = BUILDS["table"]
    catalog.create(GraphSpec.model_validate(FILMS), NODES, RELS)
    assert BUILDS["table"] == before + 1
    folder = catalog.folder("films") / "align"
    assert (folder / "aliases.sqlite").exists()
    emb = CountingEmbedder()
    cfg = GraphSettings(min_cosine=0.3)
    for _ in range(2):  # two requests: the table and the vectors are opened, not rebuilt
        store = catalog.open("films")
        idx = entity_index(store, emb, cfg, folder)
        assert idx.align("the lake film about blue").best is not None
        store.close()
    first = idx.table.count()
    assert BUILDS["table"] == before + 1 and emb.passages == first
    built = BUILDS["vectors"]
    nodes = {**NODES, "Person": [*NODES["Person"], {"name": "Zed Newcomer", "born": 1990}]}
    catalog.create(GraphSpec.model_validate(FILMS), nodes, RELS, replace=True)
    store = catalog.open("films")
    idx = entity_index(store, emb, cfg, folder)
    assert idx.align("zed newcomer person").best.entity.key == "Zed Newcomer"  # type: ignore[union-attr]
    store.close()
    # the re-import updated the table; the vectors synced, embedding only the new name
    assert BUILDS["vectors"] == built + 1 and emb.passages == first + 1 == idx.table.count()


def test_property_values_align_and_row_filter_values_stay_out(tmp_path: Path) -> None:
    spec = {
        "name": "shops",
        "nodes": {"Shop": {"properties": {"name": "STRING", "country": "STRING"},
                           "key": "name", "name": "name"}},
        "relationships": {},
    }  # fmt: skip
    rows = {"Shop": [{"name": "Ada's", "country": "USA"}, {"name": "Bo", "country": "France"}]}
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    catalog.create(GraphSpec.model_validate(spec), rows, {})
    store = catalog.open("shops")
    idx = entity_index(store, None, GraphSettings(), catalog.folder("shops") / "align")
    store.close()
    v = idx.align_value("usa")
    assert v.best is not None and (v.best.entity.prop, v.best.entity.key) == ("country", "USA")
    assert idx.align("usa").best is None  # a value is not a named node
    catalog.create(GraphSpec.model_validate(FILMS), NODES, RELS)
    films = catalog.open("films")
    regions = {str(r["region"]) for r in NODES["Film"]}
    fidx = entity_index(films, None, GraphSettings(), None)
    films.close()
    assert all(fidx.align_value(r).best is None for r in regions)


async def test_a_constraint_value_reaches_the_cypher_model_as_stored(tmp_path: Path) -> None:
    import json

    from footnote.models.fake import FakeChatModel
    from footnote.models.ledger import Ledger
    from footnote.models.roles import RoleModel
    from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
    from footnote.verify.cypher.guard import Principal

    spec = {"name": "shops", "nodes": {"Shop": {
        "properties": {"name": "STRING", "country": "STRING"}, "key": "name", "name": "name"}},
        "relationships": {}}  # fmt: skip
    rows = {"Shop": [{"name": "Ada's", "country": "France"}, {"name": "Bo", "country": "USA"}]}
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    catalog.create(GraphSpec.model_validate(spec), rows, {})
    store = catalog.open("shops")
    u = {"intent": "other", "confidence": 0.9, "question": "Which shops are in france?",
         "entities": [], "constraints": [{"property": "country", "op": "=", "value": "france"}]}  # fmt: skip
    understand = RoleModel("understand", FakeChatModel([json.dumps(u)]), ledger=Ledger(),
                           external=False)  # fmt: skip
    cypher = RoleModel("cypher", FakeChatModel(
        ["MATCH (s:Shop) WHERE s.country = 'France' RETURN s.name AS name"] * 4),
        ledger=Ledger(), external=False)  # fmt: skip
    cfg = GraphSettings(understand="model", answer="template")
    idx = entity_index(store, None, cfg, catalog.folder("shops") / "align")
    p = GraphQAPipeline(GraphDeps(store, idx, cfg, understand_model=understand,
                                  cypher_model=cypher))  # fmt: skip
    _ = [e async for e in p.run(GraphRequest("Which shops are in france?", Principal(unrestricted=True)))]  # fmt: skip
    store.close()
    shown = cypher.model.calls[0][1].content  # type: ignore[attr-defined]
    assert "'france' is stored as Shop.country = 'France'" in shown
    assert p.outcome.status == "answered" and p.outcome.rows == [{"name": "Ada's"}]


def test_the_keyword_lookup_reads_only_a_covering_index(tmp_path: Path) -> None:
    """At 1M names one common word matches ~1,500 names: the keyword tier intersects the
    words' runs of a covering index in one statement, never fetching a row per name
    (bench/graph_align_scale.py measures it)."""
    from footnote.index.graph.aliases import TABLE_FILE, AliasTable, keyword_sql

    table = AliasTable(tmp_path / TABLE_FILE)
    table.build([("Person", n, n, ()) for n in ("Ada Stone", "Ben Stone", "Ada Park")])
    plan = table.plan(keyword_sql(2), 2)
    assert plan.count("USING COVERING INDEX") == 2 and "SCAN" not in plan, plan
    assert table.with_tokens(["stone", "ada"]) == set(table.exact("ada stone"))
    assert len(table.with_tokens(["stone"])) == 2 and table.with_tokens(["stone", "kim"]) == set()
    table.close()


def test_a_short_chinese_name_has_no_near_sound_matches() -> None:
    """Seen in the embedded run: "凯文演过哪些电影？" asked back "'凯文' could mean the person Ian
    McKellen or the person Rick Yune" — the two-class key of 凯文 (K, H) is one deletion away
    from every one-class key, so Hoffa, Unforgiven and Ian McKellen 'sounded like' Kevin."""
    names = ("Hoffa", "Rick Yune", "Ian McKellen", "Unforgiven", "Kevin Bacon", "Meg Ryan")
    idx = EntityIndex([Entity("Person", n, n) for n in names], None)
    a = idx.align("凯文")
    assert not {c.entity.key for c in a.candidates} & {"Hoffa", "Rick Yune", "Ian McKellen",
                                                       "Unforgiven"}  # fmt: skip
    assert idx.align("梅格·瑞恩").best.entity.key == "Meg Ryan"  # type: ignore[union-attr]


def test_a_one_part_chinese_name_reaches_each_latin_name_with_that_part() -> None:
    """Seen in the embedded run (gd-060): "凯文演过哪些电影？" should ask back between Kevin Bacon
    and Kevin Pollak; after near matches needed three classes it aligned to nothing. A Chinese
    rendering of a given name or a surname alone (凯文, 汉克斯) meets the names holding that part,
    on an exact sound key: several are ambiguous (the pipeline asks back), one is the answer."""
    names = ("Kevin Bacon", "Kevin Pollak", "Tom Hanks", "Hoffa", "Ian McKellen", "Ada Keys")
    idx = EntityIndex([Entity("Person", n, n) for n in names], None)
    a = idx.align("凯文")
    assert {c.entity.key for c in a.candidates} == {"Kevin Bacon", "Kevin Pollak"}
    assert a.ambiguous and a.candidates[0].method == "transliteration"
    hanks = idx.align("汉克斯")
    assert hanks.best is not None and hanks.best.entity.key == "Tom Hanks"
    assert not hanks.ambiguous
    assert hanks.best.score < idx.align("汤姆·汉克斯").best.score  # type: ignore[union-attr]
    assert idx.align("霍法").best.entity.key == "Hoffa"  # type: ignore[union-attr]
    assert idx.align("李").best is None  # one class names nothing
    # 公司 ("company") sounds K-S like Keys, but is no name said alone
    assert idx.align("凯斯").best.entity.key == "Ada Keys"  # type: ignore[union-attr]
    assert idx.align("公司").best is None


def test_a_chinese_word_is_no_rendering_of_a_name() -> None:
    """gd-038 with the embedded model: "调味品类一共有多少种产品？" ("how many products are
    condiments?") was answered "答案是 1。" — 调味品类 (D H B L) was one sound class from the
    product Tunnbröd (D B L D) and the query counted that one product. A one-part mention
    whose characters are not those Chinese spells foreign names with is a word, not a
    transliteration: it meets no name by sound."""
    names = ("Tunnbröd", "Kevin Bacon", "Hoffa")
    idx = EntityIndex([Entity("Product", n, n) for n in names], None)
    assert idx.align("调味品类").best is None
    assert idx.align("调味品").best is None
    assert idx.align("霍法").best.entity.key == "Hoffa"  # type: ignore[union-attr]
