"""Entity alignment: exact names and aliases first, keywords, vectors only when both fail."""

from __future__ import annotations

from footnote.index.graph.align import Entity, EntityIndex
from footnote.models.fake import HashEmbedder
from footnote.pipelines.graph.clarify import entity_signals

ENTS = [
    Entity("Person", "Ada Stone", "Ada Stone", ("艾达·斯通",)),
    Entity("Person", "Ben Stone", "Ben Stone"),
    Entity("Film", "Red River", "Red River"),
    Entity("Film", "Blue Lake", "Blue Lake"),
]


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str):  # type: ignore[no-untyped-def]
        self.queries += 1
        return super().embed_query(text)


def test_exact_match_is_case_and_width_insensitive_and_skips_vectors() -> None:
    emb = CountingEmbedder()
    idx = EntityIndex(ENTS, emb, min_cosine=0.1)
    for mention in ("ada stone", "ＡＤＡ　ＳＴＯＮＥ", "艾达·斯通"):
        a = idx.align(mention)
        assert a.best is not None and a.best.entity.key == "Ada Stone" and a.best.method == "exact"
    assert emb.queries == 0


def test_keyword_match_and_ambiguity() -> None:
    idx = EntityIndex(ENTS, None)
    a = idx.align("Stone")
    assert a.ambiguous and {c.entity.key for c in a.candidates} == {"Ada Stone", "Ben Stone"}
    b = idx.align("Stone", labels=["Film"])
    assert b.best is None


def test_a_name_part_several_names_hold_is_ambiguous_whatever_their_length() -> None:
    """'Queso' (gc-032) names two products; the shorter name scored higher (1/2 vs 1/4 of its
    words), so no tie: the ask-back hung on the runner-up's signal reaching the threshold, which
    it did not, and the question was answered ('Louisiana', gd-063, happened to reach it)."""
    idx = EntityIndex([
        Entity("Product", "65", "Louisiana Fiery Hot Pepper Sauce"),
        Entity("Product", "66", "Louisiana Hot Spiced Okra"),
        Entity("Product", "12", "Queso Manchego La Pastora"),
    ], None)  # fmt: skip
    a = idx.align("Louisiana")
    assert a.ambiguous and {c.entity.key for c in a.candidates} == {"65", "66"}
    (signal,) = entity_signals([a])  # the ask-back offers both
    assert set(signal.options) == {"Louisiana Fiery Hot Pepper Sauce", "Louisiana Hot Spiced Okra"}
    one = idx.align("Okra")  # one name holds it: no doubt
    assert not one.ambiguous and one.best is not None and one.best.entity.key == "66"
    hot = idx.align("Louisiana Okra")  # every word said is in one name only
    assert not hot.ambiguous and hot.best is not None and hot.best.entity.key == "66"


def test_vector_fallback_only_when_exact_and_keyword_fail() -> None:
    emb = CountingEmbedder()
    idx = EntityIndex(ENTS, emb, min_cosine=0.3)
    a = idx.align("the red river film")
    assert emb.queries == 1
    assert a.best is not None and a.best.entity.key == "Red River" and a.best.method == "vector"


def test_no_embedder_no_match() -> None:
    assert EntityIndex(ENTS, None).align("nothing like it").best is None


def test_mentions_found_in_questions() -> None:
    idx = EntityIndex(ENTS, None)
    assert idx.mentions("Which films did Ada Stone act in?") == ["ada stone"]
    assert idx.mentions("艾达·斯通出演了哪些电影？") == ["艾达·斯通"]
    assert idx.mentions("Is Adastone real?") == []


def test_the_default_thresholds_are_the_fitted_ones_and_their_record_holds() -> None:
    """`graph.min_cosine` / `graph.ambiguity_margin` = None read the calibration file (fitted by
    bench/graph_calibrate.py); the record's values are the ones its own rule picks from its
    curve, and an explicit setting wins."""
    from footnote.config import GraphSettings
    from footnote.config.graph import alignment_thresholds, calibration
    from footnote.index.graph.align import entity_index

    record = calibration()
    assert alignment_thresholds(GraphSettings()) == (
        record["min_cosine"],
        record["ambiguity_margin"],
    )
    assert alignment_thresholds(GraphSettings(min_cosine=0.5, ambiguity_margin=0.02)) == (0.5, 0.02)
    sweep = [p for p in record["curve"] if p["ambiguity_margin"] == 0.0][:-1]
    cos = min(p["min_cosine"] for p in sweep if p["false_rate"] <= record["false_alignment_bound"])
    assert record["min_cosine"] == cos
    at = [p for p in record["curve"] if p["min_cosine"] == cos]
    kept = next(p["right"] for p in at if p["ambiguity_margin"] == 0.0)
    allowed = [p for p in at if p["dropped_right"] <= record["right_dropped_bound"] * max(1, kept)]
    most = max(p["dropped_wrong"] for p in allowed)
    assert record["ambiguity_margin"] == min(
        p["ambiguity_margin"] for p in allowed if p["dropped_wrong"] == most
    )
    assert record["held_out"]["false_rate"] <= 2 * record["false_alignment_bound"]

    from types import SimpleNamespace

    store = SimpleNamespace(spec=SimpleNamespace(aliases={}, nodes={}),
                            entities=lambda: [("Film", "Red River", "Red River", [])])  # fmt: skip
    idx = entity_index(store, HashEmbedder(), GraphSettings(), None)  # type: ignore[arg-type]
    assert (idx.min_cosine, idx.margin) == (record["min_cosine"], record["ambiguity_margin"])


def test_the_intent_confidence_record_holds_to_its_rule() -> None:
    """bench/graph_intent_calibrate.py's record: the threshold its rule picks from its curve
    (the most AMBIGUOUS asked back within the bound on ORIGINAL ones, ties to the lower)."""
    from footnote.config.graph import calibration

    intent = calibration()["intent"]
    for key, curve in (("min_confidence", "curve"), (None, "rules_curve")):
        ok = [
            p
            for p in intent[curve]
            if p["answerable_clarify"] <= intent["clarify_on_answerable_bound"]
        ]
        best = max(ok, key=lambda p: (p["ambiguous_clarify"], -p["threshold"]))
        want = intent[key] if key else intent["rules"]["min_confidence"]
        assert best["threshold"] == want
    assert intent["n_fit"] > 0 and intent["n_held_out"] > 0


def test_a_latin_name_touching_chinese_is_a_mention() -> None:
    """A Latin-script name written against Chinese characters ("Ada Stone演过…") has a word
    boundary there: a CJK character is not a letter of the name."""
    idx = EntityIndex(ENTS, None)
    assert idx.mentions("Ada Stone演过哪些电影？") == ["ada stone"]
    assert idx.mentions("哪些电影有Ada Stone？") == ["ada stone"]
    assert idx.mentions("Is Adastone演员?") == []


def test_a_single_latin_letter_names_nothing() -> None:
    """A query variable ('节点a' in a tugraph question) aligned by keyword to "A Few Good Men"
    and asked back on a tie with "A League of Their Own" (seen in the embedded run)."""
    films = [Entity("Movie", t, t) for t in ("A Few Good Men", "A League of Their Own")]
    emb = CountingEmbedder()
    idx = EntityIndex([*ENTS, *films], emb, min_cosine=0.0)
    for mention in ("a", "A", " n ", "ａ"):
        a = idx.align(mention)
        assert a.candidates == (), mention
    assert emb.queries == 0
    whole = idx.align("A Few Good Men")  # a title that starts with 'A' still aligns
    assert whole.best is not None
