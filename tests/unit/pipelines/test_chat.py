"""Chat turns around scripted models: rewrite only on cues, fresh ask, memory and the window."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from footnote.config import ChatSettings
from footnote.events import Done, Event, Final
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.chat.pipeline import ChatDeps, ChatPipeline, ChatTurn, needs_rewrite
from footnote.pipelines.memory import ConversationMemory, LocalWindow
from footnote.store.sqlite import (
    SqliteChatStore,
    SqliteStore,
)
from footnote.types import Answer, Sentence


def role(script: object, name: str = "summarise") -> RoleModel:
    return RoleModel(name, FakeChatModel(script), ledger=Ledger(), external=False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What recall did hybrid retrieval reach on QASPER?", False),
        ("How many papers are in the corpus?", False),
        ("What dataset did they use?", True),
        ("And for Chinese?", True),
        ("What about recall?", True),
        ("Why?", True),
        ("它的准确率是多少?", True),
        ("BM25 的召回率是多少？", False),
    ],
)
def test_rewrite_cues(question: str, expected: bool) -> None:
    assert needs_rewrite(question) is expected


class Asked:
    def __init__(self) -> None:
        self.questions: list[str] = []

    def __call__(self, question: str) -> AsyncIterator[Event]:
        self.questions.append(question)
        return self._run(question)

    async def _run(self, question: str) -> AsyncIterator[Event]:
        yield Final(Answer(question, "answered", (Sentence(f"Answer to {question}."),)))
        yield Done()


@pytest.fixture()
def sessions(tmp_path: Path) -> SqliteChatStore:
    return SqliteChatStore(SqliteStore(tmp_path / "f.db"))


async def _turn(pipe: ChatPipeline, memory: ConversationMemory, sid: str, text: str) -> list[Event]:
    msg = await memory.add("u", sid, "user", text)
    reply = await memory.add("u", sid, "assistant", "", status="pending")
    return [e async for e in pipe.run(ChatTurn("u", sid, msg, reply))]


async def test_follow_up_is_rewritten_and_standalone_one_is_not(sessions: SqliteChatStore) -> None:
    sid = sessions.create_session("u").id
    settings = ChatSettings()
    memory = ConversationMemory(sessions, LocalWindow(20, 60), settings)

    def rewrite(messages: Sequence[Message]) -> str:
        assert "hybrid retrieval" in messages[-1].content  # the history reached the prompt
        return "Standalone question: What recall did hybrid retrieval reach?"

    model = role(rewrite)
    asked = Asked()
    unlabelled = lambda _msgs: ()  # noqa: E731  the fake answers cite no source
    pipe = ChatPipeline(
        ChatDeps(memory, asked, settings, rewrite_model=model, labels_for=unlabelled)
    )
    await _turn(pipe, memory, sid, "How does hybrid retrieval work?")
    events = await _turn(pipe, memory, sid, "What recall did it reach?")
    assert asked.questions == [
        "How does hybrid retrieval work?",
        "What recall did hybrid retrieval reach?",
    ]
    assert isinstance(events[-1], Done) and pipe.rewrites == 1
    await _turn(pipe, memory, sid, "How many papers are in the ACL Anthology corpus?")
    assert pipe.rewrites == 1  # no cue: no model call
    msgs = sessions.messages("u", sid)
    assert [m.status for m in msgs] == ["completed"] * 6
    assert msgs[3].data["standalone"] == "What recall did hybrid retrieval reach?"
    assert msgs[3].content == "Answer to What recall did hybrid retrieval reach?."


async def test_old_turns_fold_into_a_summary_within_budget(sessions: SqliteChatStore) -> None:
    sid = sessions.create_session("u").id
    settings = ChatSettings(history_turns=2, memory_tokens=200)
    memory = ConversationMemory(sessions, LocalWindow(20, 60), settings)
    summaries = role(lambda msgs: "They discussed BM25 and hybrid retrieval.")
    pipe = ChatPipeline(ChatDeps(memory, Asked(), settings, summarise_model=summaries))
    for i in range(5):
        await _turn(pipe, memory, sid, f"Question number {i} about retrieval methods")
    session = sessions.get_session("u", sid)
    assert session is not None and session.summary.startswith("They discussed")
    assert session.summary_upto == 6  # 3 old turns folded, 2 kept verbatim
    ctx = await memory.context("u", sid, before=11)
    assert [m.seq for m in ctx.turns] == [7, 8, 9, 10]
    assert "Summary of earlier turns" in ctx.render()


async def test_window_hits_rebuilds_and_survives_a_failing_cache(sessions: SqliteChatStore) -> None:
    sid = sessions.create_session("u").id
    window = LocalWindow(4, 60)
    memory = ConversationMemory(sessions, window, ChatSettings(window_messages=4))
    for i in range(6):
        await memory.add("u", sid, "user", f"m{i}")
    assert [m.content for m in await memory.recent("u", sid)] == ["m2", "m3", "m4", "m5"]
    assert memory.hits == 1
    await window.drop(memory.key("u", sid))
    assert [m.content for m in await memory.recent("u", sid)] == ["m2", "m3", "m4", "m5"]
    assert memory.misses == 1

    class Broken(LocalWindow):
        async def read(self, key: str) -> None:
            return None

        async def append(self, key: str, message: object) -> bool:
            return False

    broken = ConversationMemory(sessions, Broken(4, 60), ChatSettings(window_messages=4))
    assert [m.content for m in await broken.recent("u", sid)][-1] == "m5"


def test_a_rewrite_that_brings_in_foreign_words_is_rejected() -> None:
    from footnote.pipelines.chat.pipeline import _clean_rewrite

    history = "user: How does hybrid retrieval work?\nassistant: It fuses BM25 and vectors."
    assert _clean_rewrite("What recall did hybrid retrieval reach?", "What recall did it reach?",
                          history) == "What recall did hybrid retrieval reach?"  # fmt: skip
    assert _clean_rewrite("How big is the SciQ test set?", "And for Chinese?", history) == (
        "And for Chinese?"
    )


async def test_the_summary_carries_its_labels_to_the_rewrite_model(
    sessions: SqliteChatStore,
) -> None:
    """Turns citing a `no-external-model` source are folded into the summary; a later rewrite
    (whose prompt holds that summary) must reach the gate with the label (issue #15)."""
    sid = sessions.create_session("u").id
    settings = ChatSettings(history_turns=1, memory_tokens=400)
    memory = ConversationMemory(sessions, LocalWindow(20, 60), settings)
    ledger = Ledger()
    local = FakeChatModel(lambda msgs: "What about retrieval methods?")
    external = RoleModel("summarise", FakeChatModel(lambda msgs: "What about retrieval methods?"),
                         ledger=ledger, external=True, reroute=lambda: local)  # type: ignore[arg-type]  # fmt: skip
    summaries = role(lambda msgs: "They discussed the SECRET memo and retrieval methods.")

    def labels_for(msgs: Sequence[object]) -> tuple[str, ...]:
        return ("no-external-model",) if any("SECRET" in m.content for m in msgs) else ()  # type: ignore[attr-defined]

    deps = ChatDeps(memory, Asked(), settings, rewrite_model=external, summarise_model=summaries,
                    labels_for=labels_for)  # fmt: skip
    pipe = ChatPipeline(deps)
    await _turn(pipe, memory, sid, "What does the SECRET memo say about retrieval methods?")
    await _turn(pipe, memory, sid, "Which retrieval methods were compared in the study?")
    await _turn(pipe, memory, sid, "Which retrieval methods were fastest in the study?")
    session = sessions.get_session("u", sid)
    assert session is not None and "SECRET" in session.summary
    ctx = await memory.context("u", sid, before=99)
    assert not any("SECRET" in m.content for m in ctx.turns)  # only the summary holds it
    await _turn(pipe, memory, sid, "What about it?")
    rewrites = [r for r in ledger.records() if r.role == "summarise"]
    assert rewrites and all("rerouted" in r.note for r in rewrites), rewrites
    assert session.summary_labels == ("no-external-model",)


async def test_a_turns_own_model_calls_have_a_budget(sessions: SqliteChatStore) -> None:
    """`chat.max_model_calls` bounds the rewrite and summary calls of one turn (issue #15)."""
    sid = sessions.create_session("u").id
    settings = ChatSettings(history_turns=1, memory_tokens=400, max_model_calls=1)
    memory = ConversationMemory(sessions, LocalWindow(20, 60), settings)
    ledger = Ledger()
    rewriter = RoleModel("summarise", FakeChatModel(lambda m: "What about retrieval methods?"),
                         ledger=ledger, external=False)  # type: ignore[arg-type]  # fmt: skip
    summaries = RoleModel("understand", FakeChatModel(lambda m: "They discussed retrieval."),
                          ledger=ledger, external=False)  # type: ignore[arg-type]  # fmt: skip
    for text in ("Which retrieval methods were compared?", "Which ones were fastest?",
                 "What about it?"):  # fmt: skip
        pipe = ChatPipeline(ChatDeps(memory, Asked(), settings, rewrite_model=rewriter,
                                     summarise_model=summaries))  # fmt: skip
        before = len(ledger)
        await _turn(pipe, memory, sid, text)
        assert len(ledger) - before <= 1  # one call per turn at most, whatever it was for
    assert len(ledger) >= 2
