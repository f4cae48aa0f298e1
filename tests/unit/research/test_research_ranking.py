"""Ranking the sentences of a search (`investigate.ranked`, `cards.candidates`): closeness in
meaning where the `embed` role may read the text, words alone where it may not."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.errors import LicenceRefused
from footnote.pipelines.research.cards import candidates
from footnote.pipelines.research.investigate import ranked
from footnote.pipelines.research.sources import Passage

TEXT = (
    "The corpus was collected from flagged accounts. In total, there are 1,716 tweets. "
    "Our weather is mild in spring."
)
PASSAGE = Passage(TEXT, "src-1", "Offensive tweets", "", labels=("no-external-model",))
QUESTION = "How large is the Twitter dataset?"


def never(_p: Passage, _a: int, _b: int) -> bool:
    return False


def by_hand(question: str, sentences: Sequence[str], labels: tuple[str, ...]) -> list[float]:
    # a stand-in for the embedder's cosine (the real one: test_research_sentences.py)
    return [0.9 if "1,716" in s else 0.8 if "corpus" in s else 0.1 for s in sentences]


def test_a_close_sentence_is_a_candidate_though_it_shares_no_word() -> None:
    by_words = [c.text for c in candidates(QUESTION, "dataset size", [PASSAGE], 5)]
    assert not any("1,716" in t for t in by_words)
    close = [c.text for c in candidates(QUESTION, "dataset size", [PASSAGE], 5,
                                        closeness=lambda s: by_hand(QUESTION, s, ()))]  # fmt: skip
    assert close[0] == "In total, there are 1,716 tweets."
    assert not any("weather" in t for t in close)  # far from the question: still no candidate


def test_an_embedder_the_licence_refuses_leaves_the_words_rule_and_says_so() -> None:
    seen: list[tuple[str, ...]] = []

    def gated(question: str, sentences: Sequence[str], labels: tuple[str, ...]) -> list[float]:
        seen.append(labels)
        raise LicenceRefused("embed", "no-external-model", "https://api.example/embed")

    found, why = ranked(QUESTION, "dataset size", [PASSAGE], 5, never, gated)
    assert seen == [("no-external-model",)]  # the passages' labels reach the gate
    assert "sentences ranked by words" in why and "LicenceRefused" in why
    assert [c.text for c in found] == [
        c.text for c in candidates(QUESTION, "dataset size", [PASSAGE], 5)
    ]
