"""A mention that is a label's own name ("products") is the kind asked about, not a node.

Seen with the embedded model (dev gd-033): "What is the average unit price of the products in
the Beverages category?" — the understanding listed "products" (label Product) as an entity; no
product is called that, so it was aligned again without its label and met the category *Dairy
Products* by keyword (score 0.5). The query averaged that category's prices (28.73, not
Beverages' 37.98) and the answer was refused only because its sentence named Beverages."""

from __future__ import annotations

from pathlib import Path

from footnote.config import GraphSettings
from footnote.index.graph.align import entity_index
from footnote.models.fake import HashEmbedder
from footnote.pipelines.graph.aligned import align_mentions, names_a_kind
from footnote.pipelines.graph.understand import GraphUnderstanding, Mention
from footnote.store.graph.base import GraphSpec
from footnote.workspace import graph_catalog

SHOP = GraphSpec.model_validate({
    "name": "shop",
    "nodes": {
        "Product": {"properties": {"productID": "STRING", "productName": "STRING"},
                    "key": "productID", "name": "productName"},
        "Category": {"properties": {"categoryID": "STRING", "categoryName": "STRING"},
                     "key": "categoryID", "name": "categoryName"},
        "OrderDetail": {"properties": {"id": "STRING"}, "key": "id"},
    },
    "relationships": {"PART_OF": {"from": "Product", "to": "Category"}},
})  # fmt: skip
NODES = {
    "Product": [{"productID": "1", "productName": "Chai"}, {"productID": "2", "productName": "Geitost"}],
    "Category": [{"categoryID": "1", "categoryName": "Beverages"},
                 {"categoryID": "4", "categoryName": "Dairy Products"}],
    "OrderDetail": [],
}  # fmt: skip
RELS = {"PART_OF": [{"from": "1", "to": "1"}, {"from": "2", "to": "4"}]}
Q = "What is the average unit price of the products in the Beverages category?"


def test_a_labels_own_name_names_a_kind() -> None:
    for kind in (
        "products",
        "Product",
        "the products",
        "categories",
        "order details",
        "all categories",
    ):
        assert names_a_kind(kind, SHOP), kind
    for name in ("Dairy Products", "Beverages", "Chai", "productivity"):
        assert not names_a_kind(name, SHOP), name


def test_products_is_not_aligned_to_dairy_products(tmp_path: Path) -> None:
    catalog = graph_catalog(GraphSettings(dir=str(tmp_path)), tmp_path)
    catalog.create(SHOP, NODES, RELS)
    store = catalog.open("shop")
    index = entity_index(store, HashEmbedder(), GraphSettings(min_cosine=0.3), None)
    u = GraphUnderstanding(intent="other", confidence=1.0, question=Q, entities=[
        Mention(text="products", label="Product"), Mention(text="Beverages", label="Category")])  # fmt: skip
    found = align_mentions(index, SHOP, u, "model", Q)
    assert [(a.best.entity.label, a.best.entity.name) for a in found if a.best] == [
        ("Category", "Beverages")
    ]
    named = "Which products are in Dairy Products?"  # the category's own name still aligns
    u = GraphUnderstanding(intent="other", confidence=1.0, question=named,
                           entities=[Mention(text="Dairy Products", label="Category")])  # fmt: skip
    keys = [a.best.entity.key for a in align_mentions(index, SHOP, u, "model", named) if a.best]
    assert keys == ["4"]
    store.close()
