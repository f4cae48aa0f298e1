"""`answering.repair_quotes`: a quote the model paraphrased is replaced by the cited passage's own
sentence that holds the answer (found in the dev run: "Multi-LexSum contains 9,280 expert-authored
summaries …" for "we introduce Multi-LexSum, a collection of 9,280 expert-authored summaries …"
failed the quote check and a right answer was refused). The model is scripted; retrieval, the
checks and the answer builder are real."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence

from test_ask import RoleAdapter, search_fn
from test_ask_responsive import store  # noqa: F401  (fixture)

from footnote.config import load_settings
from footnote.events import Event, Final
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.pipelines.ask.compose import repair_quotes
from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
from footnote.store.sqlite import SqliteStore
from footnote.types import Answer, Block
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


def ask(db: SqliteStore, question: str, quote: str, text: str, repair: bool) -> Answer:
    settings = load_settings(
        db.path.parent,
        {
            "answering": {"answerability": False, "translate": False, "repair_quotes": repair},
            "verify": {"max_revisions": 0, "relevance_threshold": 0.1},
        },
        environ={},
    )

    def script(messages: Sequence[Message]) -> str:
        prompt = "\n".join(m.content for m in messages)
        alias = next(
            m.group(1)
            for m in re.finditer(r"\[(E\d+)\] \([^)]*\) ([^\n]*)", prompt)
            if "280M" in m.group(2)
        )
        return json.dumps({"quote": quote, "cite": alias, "answer": text})

    deps = AskDeps(
        store=db,
        search=search_fn(db),
        settings=settings,
        compose_model=RoleAdapter(FakeChatModel(script)),
        judge_model=RoleAdapter(FakeChatModel([])),
        judge_fn=lambda model, claim, passage, **kw: 0.9,
    )
    events: list[Event] = []

    async def go() -> None:
        async for e in AskPipeline(deps).run(AskRequest(question, mode="cite")):
            events.append(e)

    asyncio.run(go())
    [final] = [e for e in events if isinstance(e, Final)]
    return final.answer


def test_the_setting_turns_a_refused_right_draft_into_a_checked_answer(
    store: SqliteStore,  # noqa: F811
) -> None:
    question = "How many nodes does the literature graph have?"
    paraphrase = "The literature graph contains more than 280M nodes and 1B edges."
    off = ask(store, question, paraphrase, "More than 280M nodes.", repair=False)
    on = ask(store, question, paraphrase, "More than 280M nodes.", repair=True)
    assert off.status != "answered" and off.sentences == ()
    assert on.status == "answered" and "280M" in on.text
    [cite] = on.sentences[0].citations
    assert cite.quote == "We describe a literature graph with more than 280M nodes and 1B edges."
