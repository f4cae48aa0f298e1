"""`answering.repair_quotes`: a quote the model paraphrased is replaced by the cited passage's own
sentence that holds the answer (found in the dev run: "Multi-LexSum contains 9,280 expert-authored
summaries …" for "we introduce Multi-LexSum, a collection of 9,280 expert-authored summaries …"
failed the quote check and a right answer was refused). The model is scripted; retrieval, the
checks and the answer builder are real."""

from __future__ import annotations

from test_ask_responsive import ask, store  # noqa: F401  (fixture)

from footnote.pipelines.ask.compose import repair_quotes
from footnote.store.sqlite import SqliteStore
from footnote.types import Block
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import Evidence, EvidenceSet

PASSAGE = (
    "Motivated by this effort, we introduce Multi-LexSum, a collection of 9,280 expert-authored "
    "summaries drawn from ongoing CRLC writing. Each case has three summaries."
)
ABOUT = "Multi-LexSum contains 9,280 expert-authored summaries drawn from ongoing CRLC writing."


def evidence() -> EvidenceSet:
    block = Block("b1-p1-aaaaaa", "b1", "paragraph", PASSAGE, 1)
    return EvidenceSet([Evidence(block.id, PASSAGE, block, relevance=1.0)])


def test_a_paraphrased_quote_becomes_the_passage_sentence_that_holds_the_answer() -> None:
    draft = Draft([DraftSentence("9,280", ["b1-p1-aaaaaa"], ABOUT)])
    repair_quotes(draft, evidence())
    assert draft.sentences[0].quote == PASSAGE.split(" Each")[0]


def test_a_quote_already_verbatim_or_about_something_else_is_left_as_written() -> None:
    verbatim = "Each case has three summaries."
    draft = Draft(
        [
            DraftSentence("three", ["b1-p1-aaaaaa"], verbatim),
            DraftSentence("9,281", ["b1-p1-aaaaaa"], ABOUT),  # no sentence holds this value
            DraftSentence("9,280", ["b1-p1-aaaaaa"], "An unrelated remark about 9,280 cats."),
        ]
    )
    repair_quotes(draft, evidence())
    assert [s.quote for s in draft.sentences] == [
        verbatim,
        ABOUT,
        "An unrelated remark about 9,280 cats.",
    ]


def test_the_setting_turns_a_refused_right_draft_into_a_checked_answer(
    store: SqliteStore,  # noqa: F811
) -> None:
    question = "How many nodes does the literature graph have?"
    paraphrase = "The literature graph contains more than 280M nodes and 1B edges."
    drafts = [(paraphrase, "More than 280M nodes.")]
    off, _ = ask(store, question, drafts, answering={"repair_quotes": False}, max_revisions=0,
                 locate="280M")  # fmt: skip
    on, _ = ask(store, question, drafts, answering={"repair_quotes": True}, max_revisions=0,
                locate="280M")  # fmt: skip
    assert off.status != "answered" and off.sentences == ()
    assert on.status == "answered" and "280M" in on.text
    [cite] = on.sentences[0].citations
    assert cite.quote == "We describe a literature graph with more than 280M nodes and 1B edges."
