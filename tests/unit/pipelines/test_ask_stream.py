"""Issue #34 item 3: the ask pipeline streams what can be shown honestly — the passages shown to
the composer before it writes, and each checked sentence as soon as the answer is sure to keep
it, never one the final answer leaves out. The composer and the judge are scripted (fakes around
the model); retrieval, the checks, the answer builder and the release rule are real."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from test_ask import RoleAdapter, search_fn
from test_ask_responsive import store as graph_store  # noqa: F401  (fixture)

from footnote.config import load_settings
from footnote.events import (
    CheckedSentence,
    Event,
    EvidenceShown,
    Final,
    Status,
    Thinking,
    Verification,
)
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
from footnote.pipelines.ask.stream import RoundRelease
from footnote.store.sqlite import SqliteStore
from footnote.types import Block, make_block_id
from footnote.verify import Evidence, EvidenceSet
from footnote.verify.answer import AnswerBuilder
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.gate import check_draft

NODES_Q = "How many nodes does the literature graph have?"
NODES = "The literature graph has more than 280M nodes and 1B edges."
SIX = "Six participants were recruited from the university for the study."


class StreamAdapter(RoleAdapter):
    """`RoleAdapter` that also takes the response-cache flag of `RoleModel.stream`."""

    def stream(self, messages: Sequence[Message], **kw: Any):  # type: ignore[no-untyped-def]
        kw.pop("cache", None)
        return super().stream(messages, **kw)


def run(
    store: SqliteStore,
    question: str,
    drafts: Sequence[str],
    judge: Callable[[str], float],
    log: list[str] | None = None,
) -> list[Event]:
    """Attach mode (free text, one sentence per line of the draft): the n-th compose call writes
    drafts[n]; `judge(claim)` is the judge's P(yes). `log` gets "judge: claim" per judge call
    and "event: type" per event, in the order they happened."""
    log = [] if log is None else log
    settings = load_settings(
        store.path.parent,
        {
            "answering": {"answerability": False, "translate": False},
            "verify": {"relevance_threshold": 0.1},
        },
        environ={},
    )
    calls = {"n": 0}

    def compose(messages: Sequence[Message]) -> str:
        calls["n"] += 1
        return drafts[min(calls["n"] - 1, len(drafts) - 1)]

    def judge_fn(model: Any, claim: str, passage: str, **kw: Any) -> float:
        log.append(f"judge: {claim}")
        return judge(claim)

    deps = AskDeps(
        store=store,
        search=search_fn(store),
        settings=settings,
        compose_model=StreamAdapter(FakeChatModel(compose)),
        judge_model=StreamAdapter(FakeChatModel([])),
        judge_fn=judge_fn,
    )
    events: list[Event] = []

    async def go() -> None:
        async for e in AskPipeline(deps).run(AskRequest(question, mode="attach")):
            log.append(f"event: {e.type}")
            events.append(e)

    asyncio.run(go())
    return events


def sentences(events: Sequence[Event]) -> list[CheckedSentence]:
    return [e for e in events if isinstance(e, CheckedSentence)]


def final_answer(events: Sequence[Event]):  # type: ignore[no-untyped-def]
    [final] = [e for e in events if isinstance(e, Final)]
    return final.answer


def test_the_evidence_board_is_sent_before_the_composer_writes(
    graph_store: SqliteStore,  # noqa: F811
) -> None:
    events = run(graph_store, NODES_Q, [NODES], lambda claim: 0.9)
    kinds = [e.type for e in events]
    [board] = [e for e in events if isinstance(e, EvidenceShown)]
    writing = next(
        i for i, e in enumerate(events) if isinstance(e, Status) and e.stage == "compose"
    )
    assert kinds.index("evidence") < writing < kinds.index("thinking")
    assert board.passages and all(p["text"] and p["id"] and p["page"] for p in board.passages)
    assert any("280M nodes" in p["text"] for p in board.passages)
    assert {p["title"] for p in board.passages} == {"Graph"}


def test_each_sentence_is_sent_when_it_passes_before_the_next_is_checked(
    graph_store: SqliteStore,  # noqa: F811
) -> None:
    log: list[str] = []
    events = run(graph_store, NODES_Q, [f"{NODES} {SIX}"], lambda claim: 0.9, log)
    answer = final_answer(events)
    sent = sentences(events)
    assert answer.status == "answered" and len(answer.sentences) >= 2
    # every sentence sent is the final answer's sentence at that index, once, in order
    assert [s.index for s in sent] == list(range(len(answer.sentences)))
    assert [s.sentence for s in sent] == list(answer.sentences)
    # the first one reached the consumer before the second sentence was judged
    first = log.index("event: sentence")
    assert log.index(f"judge: {NODES}") < first < log.index(f"judge: {SIX}")
    assert first < log.index("event: final")
    # and after its own checks: its verification events came first
    first_event = events.index(sent[0])
    assert any(isinstance(e, Verification) and e.sentence == 0 for e in events[:first_event])
    # its text and citations follow as the events older clients read
    assert events[first_event + 1].type == "answer_delta"
    assert events[first_event + 2].type == "citation"


def test_a_sentence_the_answer_drops_is_never_sent(graph_store: SqliteStore) -> None:  # noqa: F811
    """Sentences the whole-answer checks remove after the first one passed (words no shown
    passage contains; a bare "Yes." to a count question) are sent neither early nor at the end,
    and the first one still goes as soon as it passes."""
    outside = "The literature graph keeps its 280M nodes in a Neo4j database cluster."
    log: list[str] = []
    events = run(graph_store, NODES_Q, [f"{NODES} {outside} Yes."], lambda claim: 0.9, log)
    answer = final_answer(events)
    texts = [s.sentence.text for s in sentences(events)]
    assert [s.text for s in answer.sentences] == texts == [NODES]
    assert log.index("event: sentence") < log.index(f"judge: {outside}")


def test_a_refusal_sends_no_sentence(graph_store: SqliteStore) -> None:  # noqa: F811
    """A weak sentence alone is a refusal (no answer sentence): nothing is sent as checked,
    in any round."""
    events = run(graph_store, NODES_Q, [NODES], lambda claim: 0.45)
    answer = final_answer(events)
    assert answer.status == "weak_evidence" and not answer.sentences
    assert sentences(events) == []


def test_a_round_that_may_be_revised_waits_and_only_the_answer_is_sent(
    graph_store: SqliteStore,  # noqa: F811
) -> None:
    """Round 0's sentence is weak (so the draft is revised): it is not sent; the revision's
    supported sentence is, as soon as it passes."""
    weak = "The literature graph has many nodes and edges."
    log: list[str] = []
    events = run(graph_store, NODES_Q, [weak, NODES], lambda c: 0.45 if c == weak else 0.9, log)
    answer = final_answer(events)
    assert [s.text for s in answer.sentences] == [NODES]
    assert [s.sentence.text for s in sentences(events)] == [NODES]
    revising = next(
        i
        for i, e in enumerate(events)
        if isinstance(e, Status) and e.message.startswith("revising")
    )
    assert events.index(sentences(events)[0]) > revising
    assert isinstance(events[revising + 1], Thinking)


# -- the release rule itself ---------------------------------------------------------------------
ZH_Q = "文献图有多少个节点？"
ZH_TEXT = "文献图有超过2.8亿个节点和10亿条边。"
EN_TEXT = "The literature graph was built from the metadata of all papers in the corpus."


def _evidence() -> EvidenceSet:
    items = []
    for i, text in enumerate((ZH_TEXT, EN_TEXT)):
        block = Block(make_block_id("s" * 64, 1, i, text), "s" * 12, "paragraph", text, 1, order=i)
        items.append(Evidence(block.id, text, block, relevance=0.9))
    return EvidenceSet(items)


def _released_after_first(second: str, second_quote: str) -> list[str]:
    evidence = _evidence()
    ids = [e.id for e in evidence]
    draft = Draft(
        [
            DraftSentence("文献图有超过2.8亿个节点。", [ids[0]], "文献图有超过2.8亿个节点"),
            DraftSentence(second, [ids[1] if second_quote == EN_TEXT else ids[0]], second_quote),
        ],
        raw="draft",
    )
    checks = check_draft(draft, evidence, judge=lambda c, p: 0.9, question=ZH_Q)
    builder = AnswerBuilder(ZH_Q, evidence, "zh", judge=lambda c, p: 0.9)
    release = RoundRelease(builder, draft, ends_anyway=False)
    return [s.text for _, s in release.after(checks[:1])]


def test_a_sentence_waits_while_the_rest_could_turn_the_answer_into_another_language() -> None:
    """A Chinese question: the first (Chinese) sentence passes, but a long English sentence after
    it, if kept, would make the answer English and send it back for a revision — so the first
    waits for the round's end; with a Chinese second sentence it goes at once."""
    assert _released_after_first(EN_TEXT, EN_TEXT) == []
    assert _released_after_first("文献图有10亿条边。", "10亿条边") == ["文献图有超过2.8亿个节点。"]
