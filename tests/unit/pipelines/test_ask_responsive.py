"""Issue #29 through the ask pipeline: a supported sentence that does not answer the question is
never the answer. The model is scripted (it picks the evidence by its text, as the composer's
output names an evidence alias); retrieval, the checks and the answer builder are real."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_ask import RoleAdapter, search_fn
from test_ask import store as table_store  # noqa: F401  (fixture)

from footnote.config import load_settings
from footnote.events import Event, Final
from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
from footnote.store.sqlite import SqliteStore
from footnote.types import Answer, Block, Document, Source, make_block_id, sha256_hex

PARAS = [
    ("Abstract", "We describe a literature graph with more than 280M nodes and 1B edges."),
    ("Authors", "The literature graph has 12M nodes of this type, one per author."),
    ("System", "Processing a typical paper takes about 40 seconds on one CPU core."),
    ("Study", "Six participants were recruited from the university for the study."),
    ("Server", "The server parses the uploaded PDFs with Grobid before indexing them."),
]


@pytest.fixture()
def store(tmp_path: Path) -> SqliteStore:
    s = SqliteStore(tmp_path / "f.db")
    sha = sha256_hex(b"graph paper")
    blocks = [
        Block(
            make_block_id(sha, 1, i, text),
            sha[:12],
            "paragraph",
            text,
            1,
            order=i,
            section_path=(section,),
        )
        for i, (section, text) in enumerate(PARAS)
    ]
    s.save_document(Document(Source(sha[:12], "pdf", "Graph", "/g.pdf", sha), tuple(blocks)))
    return s


def composer(answers: Sequence[tuple[str, str]], locate: str = ""):  # type: ignore[no-untyped-def]
    """A scripted cite composer: the n-th call quotes answers[n][0] from the evidence item that
    holds it (or holds `locate`, for a quote the model paraphrased; found by its text in the
    prompt) and answers answers[n][1]."""
    calls = {"n": 0}

    def script(messages: Sequence[Message]) -> str:
        quote, text = answers[min(calls["n"], len(answers) - 1)]
        calls["n"] += 1
        prompt = "\n".join(m.content for m in messages)
        alias = next(
            (m.group(1) for m in re.finditer(r"\[(E\d+)\] \([^)]*\) ([^\n]*)", prompt)
             if (locate or quote) in m.group(2)),
            "none",
        )  # fmt: skip
        return json.dumps({"quote": quote, "cite": alias, "answer": text})

    return script


def ask(
    store: SqliteStore,
    question: str,
    answers: Sequence[tuple[str, str]],
    *,
    responsive: bool = True,
    answering: dict[str, bool] | None = None,
    max_revisions: int = 1,
    locate: str = "",
) -> tuple[Answer, FakeChatModel]:
    """The pipeline's answer (and the scripted composer) with `answering` settings on top of
    these tests' own (`locate`: see `composer`)."""
    settings = load_settings(
        store.path.parent,
        {
            "answering": {
                "answerability": False,
                "translate": False,
                "responsive": responsive,
                **(answering or {}),
            },
            "verify": {"max_revisions": max_revisions, "relevance_threshold": 0.1},
        },
        environ={},
    )
    fake = FakeChatModel(composer(answers, locate))
    deps = AskDeps(
        store=store,
        search=search_fn(store),
        settings=settings,
        compose_model=RoleAdapter(fake),
        judge_model=RoleAdapter(FakeChatModel([])),
        judge_fn=lambda model, claim, passage, **kw: 0.9,  # the judge says supported throughout
    )
    events: list[Event] = []

    async def go() -> None:
        async for e in AskPipeline(deps).run(AskRequest(question, mode="cite")):
            events.append(e)

    asyncio.run(go())
    [final] = [e for e in events if isinstance(e, Final)]
    return final.answer, fake


NODES_Q = "How many nodes does the literature graph have?"
PART = ("12M nodes of this type", "12M.")
WHOLE = ("more than 280M nodes", "The literature graph has more than 280M nodes.")


def test_a_part_for_the_whole_is_sent_back_and_the_whole_is_answered(store: SqliteStore) -> None:
    answer, fake = ask(store, NODES_Q, [PART, WHOLE])
    assert answer.status == "answered" and "280M" in answer.text and "12M" not in answer.text
    revision = fake.calls[1][-1].content
    assert "of this type" in revision  # the reason goes back to the model


def test_a_part_for_the_whole_alone_is_a_clean_refusal(store: SqliteStore) -> None:
    answer, _ = ask(store, NODES_Q, [PART])
    assert answer.status == "weak_evidence" and answer.sentences == ()
    assert "of this type" in (answer.reason or "")
    assert any("12M nodes of this type" in h.block.text for h in answer.nearest)


@pytest.mark.parametrize(
    ("question", "quote", "text"),
    [
        ("How long does it take to process a typical paper?", "Processing a typical paper", "Yes."),
        (
            "How long did the participants use the system in the study?",
            "Six participants were recruited",
            "Six participants were recruited.",
        ),
        ("What model does the server use?", "parses the uploaded PDFs with Grobid", "Grobid."),
    ],
)
def test_supported_sentences_that_answer_another_question_are_not_shown(
    store: SqliteStore, question: str, quote: str, text: str
) -> None:
    answer, _ = ask(store, question, [(quote, text)])
    assert answer.status != "answered" and answer.sentences == (), answer.text
    assert "does not answer" in (answer.reason or "") or "answers the question" in (
        answer.reason or ""
    )


def test_a_duration_answer_stands(store: SqliteStore) -> None:
    q = "How long does it take to process a typical paper?"
    answer, _ = ask(store, q, [("takes about 40 seconds", "It takes about 40 seconds.")])
    assert answer.status == "answered" and "40 seconds" in answer.text


def test_a_question_that_is_not_about_a_value_never_takes_the_cell_path(
    table_store: SqliteStore,  # noqa: F811
) -> None:
    q = "Why does the model beat the baseline F1?"
    answer, fake = ask(table_store, q, [("beating the baseline", "It beats the baseline.")])
    assert fake.calls, "the composer was not asked: the table cell answered a why-question"
    assert "71.2" not in answer.text


def test_the_responsive_setting_decides(store: SqliteStore, table_store: SqliteStore) -> None:  # noqa: F811
    """`answering.responsive=false` is the behaviour before issue #29 (kept for measurement):
    the part-for-whole count is answered and a why-question about F1 takes the cell path."""
    answer, _ = ask(store, NODES_Q, [PART], responsive=False)
    assert answer.status == "answered" and "12M" in answer.text
    q = "Why does the model beat the baseline F1?"
    old, fake = ask(
        table_store, q, [("beating the baseline", "It beats the baseline.")], responsive=False
    )
    assert not fake.calls and "71.2" in old.text


def test_the_answer_is_written_in_the_language_of_the_question(store: SqliteStore) -> None:
    q = "literature graph 一共有多少个节点？"
    english = ("more than 280M nodes", "The literature graph has more than 280M nodes.")
    chinese = ("more than 280M nodes", "该文献图有超过280M个节点。")
    answer, fake = ask(store, q, [english, chinese])
    assert answer.status == "answered" and answer.text.startswith("该文献图有超过280M个节点")
    assert "Chinese" in fake.calls[1][-1].content  # the revision asked for the asker's language
    assert answer.sentences[0].citations[0].quote == "more than 280M nodes"  # the source's words
