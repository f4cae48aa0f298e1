"""Papers' figures are undated, so the dated conflict rule never set them side by side: 0 of 28
gold conflict values of the research dev and multi-document sets were shown in a brief (issue
#32, "conflicts everywhere"). Sentences are the QASPER papers' own."""

from __future__ import annotations

from footnote.pipelines.research.conflicts import find_conflicts
from footnote.pipelines.research.figures import figures
from footnote.types import EvidenceCard

OLID = "INLINEFORM1 is .83 for Layer A (OFF vs NOT) indicating high agreement."
TURKISH = "We measured the Cohen's Kappa inter-annotator agreement score to be 0.82."
PI = "Taking 220 ms/query and consuming 300 mJ/query, AWD-LSTM and ptb-qrnn are still viable."
QRNN = "The wt103-qrnn model is completely unusable on phones, taking over 1.2 seconds per next-word prediction."
HATE = "BERT + CNN provides the best results as F1- score of 88% and 92% for datasets of Waseem and Davidson."
CLINICAL = "Our model achieves an F$_1$-score of 93.75% on the pathology reports."
ATTACK = "Simple 1-2 character attacks can bring down the accuracy of BERT significantly ( $89\\%$ to $31\\%$ )."
DAVIDSON = "Davidson et al. (2017) presented the hate speech detection dataset containing over 24,000 English tweets."
SURVEY = "DT BIBREF7: Formed by $24,783$ tweets annotated as hate, offensive language or neither."


def _card(cid: str, text: str, source: str) -> EvidenceCard:
    return EvidenceCard(cid, text, text, "l", source_id=source, source_title=source)


def _conflicts(cards: list[EvidenceCard], items: dict[str, list[str]] | None = None) -> list:
    return find_conflicts(
        cards, lambda c: c.source_id, lambda _c: "",
        lambda c: (items or {}).get(c.id, ["results"]),
    )  # fmt: skip


def test_what_an_undated_figure_measures() -> None:
    assert [(f.measure, f.norm) for f in figures(OLID)] == [("agreement", 0.83)]
    assert [(f.measure, f.text) for f in figures(ATTACK)][-2:] == [
        ("accuracy", "89%"), ("accuracy", "31%")
    ]  # fmt: skip
    assert [(f.measure, f.norm) for f in figures(PI)] == [
        ("time per item", 0.22), ("energy per item", 0.3)
    ]  # fmt: skip
    assert [(f.measure, f.norm) for f in figures(QRNN)] == [("time per item", 1.2)]
    assert [(f.measure, f.value) for f in figures(SURVEY)] == [("count of tweets", 24783)]
    assert [f.measure for f in figures("Inception achieves 2.9% higher accuracy than biLSTM.")] == [
        "accuracy (difference)"
    ]
    assert [f.measure for f in figures(CLINICAL)] == ["F1"]
    # a difference is told by the change words of its clause, a range by its far end
    assert [(f.value, f.measure) for f in figures(
        "Compared with BERT-Base, our model led to a 5.64% performance improvement in EM-score "
        "and 3.69% in F$_1$-score.")] == [(5.64, "exact match (difference)"), (3.69, "F1 (difference)")]  # fmt: skip
    assert [
        f.measure for f in figures("User information yielded 2–10% improvements in accuracy.")
    ] == ["accuracy (difference)", "accuracy (difference)"]
    assert [f.measure for f in figures(
        "These models achieve a better performance with an average F1 score of over 47%.")] == ["F1"]  # fmt: skip
    # what stands right before a number tells a result from a difference, and a list keeps it
    assert [f.measure for f in figures(
        "BERTbase outperforms previous baselines yielding F1-score of 81% and 91% for datasets "
        "of Waseem and Davidson respectively.")] == ["F1", "F1"]  # fmt: skip
    assert [f.measure for f in figures("We see an improvement of 3.2% in accuracy.")] == [
        "accuracy (difference)"
    ]
    # a number labelled with a name of its own is that name's; a table row is its columns'
    assert [f.value for f in figures("They report an F1 score of 83.6% (PU=87.5%, CO=80.1%).")] == [
        83.6
    ]
    assert not figures("Review Type & Precision & Recall & F-score \\ Human & 55% & 63% & 59%")
    # nothing comparable: a count of things that are no data, words, a label, a bare integer
    for text in ("Brannock sells heat pumps through 320 dealers.", "Four annotators labelled them.",
                 "See Figure 3 and Table 2.", "We use 12 layers and 768 hidden units."):  # fmt: skip
        assert not figures(text), text


def test_papers_figures_of_one_measure_are_side_by_side_with_their_settings() -> None:
    cards = [_card("olid", OLID, "olid-paper"), _card("turkish", TURKISH, "turkish-paper"),
             _card("pi", PI, "pi-paper"), _card("qrnn", QRNN, "pi-paper"),
             _card("davidson", DAVIDSON, "olid-paper"), _card("survey", SURVEY, "mmhs-paper")]  # fmt: skip
    found = {c.metric: c for c in _conflicts(cards)}
    assert set(found) == {"agreement (undated)", "time per item (ms/seconds, undated)",
                          "count of tweets (tweets, undated)"}  # fmt: skip
    kappa = found["agreement (undated)"]
    assert {(v.card_id, v.value) for v in kappa.values} == {("olid", 0.83), ("turkish", 0.82)}
    assert all(v.scope.startswith("as stated:") for v in kappa.values)
    assert "not combined" in kappa.note and kappa.item_ids == ("results",)
    # one paper, two settings: 220 ms on the Pi and 1.2 s for another model, in their own units
    latency = found["time per item (ms/seconds, undated)"]
    assert {(v.value, v.unit) for v in latency.values} == {(220.0, "ms"), (1.2, "seconds")}
    # a citation's year does not date the figure it cites
    assert {v.value for v in found["count of tweets (tweets, undated)"].values} == {24000, 24783}


def test_what_is_not_set_side_by_side() -> None:
    hate, clinical = _card("hate", HATE, "hate-paper"), _card("clinical", CLINICAL, "cts-paper")
    attack = _card("attack", ATTACK, "attack-paper")
    # one sentence's own two values are already side by side: no second card, no conflict
    assert not _conflicts([hate])
    # F1 and accuracy are different measures; the F1s of two papers are one
    (f1,) = _conflicts([hate, clinical, attack])
    assert f1.metric == "F1 (%, undated)" and {v.value for v in f1.values} == {88, 92, 93.75}
    # one measure across the brief, attached to every item whose cards hold one of its values
    apart = {"hate": ["results"], "clinical": ["datasets"], "attack": ["robustness"]}
    (across,) = _conflicts([hate, clinical, attack], apart)
    assert across.item_ids == ("results", "datasets")
    # the same value from two papers agrees; the same paper restating it is one value
    same = [_card("a", "Embeddings are trained in dimension 300.", "p1"),
            _card("b", "We use vectors of dimension 300 per word.", "p2"),
            _card("c", "Vectors of dimension 300 are used throughout.", "p2")]  # fmt: skip
    assert not _conflicts(same)
    # a dated figure keeps the dated rule: no year-blind comparison with a paper's figure
    dated = _card("m", "In 2023 the classifier reached an accuracy of 71% on new data.", "report")
    assert [c.metric for c in _conflicts([attack, dated])] == []


def test_figures_for_different_settings_dispute_nothing() -> None:
    """A `settings` comparison made every item it touched `conflicting` and blocked sign-off
    until resolved: papers' F1s for different tasks are no disagreement to settle."""
    from footnote.pipelines.research.checks import coverage
    from footnote.pipelines.review.decisions import ReviewState, blockers
    from footnote.types import Brief, Claim, Conflict, ConflictValue, Outline, OutlineItem

    item = OutlineItem("results", "Results", "What F1 do they report?")
    card = _card("hate", HATE, "hate-paper")
    claim = Claim("results-c1", HATE, ("hate",), verdict="supported")
    values = (ConflictValue("hate", 88.0, "%", "88%"), ConflictValue("cts", 93.75, "%", "93.75%"))
    settings = Conflict(
        "conflict_s", "F1 (%, undated)", values, item_ids=("results",), kind="settings"
    )
    disagree = Conflict("conflict_d", "market size (USD, 2023)", values, item_ids=("results",))

    def state(conflicts: list[Conflict]) -> str:
        return coverage(item, [claim], {"hate": card}, conflicts, lambda cs: 1, ["done"], 1).state

    assert state([settings]) != "conflicting" and state([disagree]) == "conflicting"
    brief = Brief(
        "r",
        "q",
        Outline("q", "literature_review", (item,)),
        (),
        (card,),
        conflicts=(settings, disagree),
    )
    assert blockers(brief, ReviewState(), []) == ["conflict not resolved: market size (USD, 2023)"]
