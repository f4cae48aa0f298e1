"""The answering settings around a scripted model: table cells by code, the answerability call
with its threshold, refusals that say what the paper does say, the translated query."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from test_ask import RoleAdapter, cite, search_fn, store, sure  # noqa: F401  (fixture)

from footnote.config import load_settings
from footnote.events import Event, Final
from footnote.index import SearchFilters
from footnote.models.base import Completion, Message
from footnote.models.fake import FakeChatModel
from footnote.pipelines.ask.pipeline import AskDeps, AskPipeline, AskRequest
from footnote.store.sqlite import SqliteStore
from footnote.types import Answer, Hit


class Role(RoleAdapter):
    """The adapter of test_ask, also dropping the role-level `cache` and `note` arguments."""

    def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        kw.pop("cache", None)
        kw.pop("note", None)
        return super().complete(messages, **kw)


def ask(
    store: SqliteStore,  # noqa: F811
    question: str,
    script: list[str],
    answering: dict[str, Any] | None = None,
    queries: list[str] | None = None,
    spans: list[Any] | None = None,
    judge_fn: Any = None,
) -> tuple[Answer, FakeChatModel]:
    settings = load_settings(
        store.path.parent,
        {"answering": answering or {}, "verify": {"max_revisions": 0}},
        environ={},
    )
    fake = FakeChatModel(script)
    base = search_fn(store)

    def search(q: str, k: int, f: SearchFilters) -> list[Hit]:
        if queries is not None:
            queries.append(q)
        return base(q, k, f)

    deps = AskDeps(store=store, search=search, settings=settings, compose_model=Role(fake),
                   judge_model=Role(FakeChatModel([])) if judge_fn else None,
                   judge_fn=judge_fn)  # fmt: skip
    events: list[Event] = []

    async def go() -> None:
        async for e in AskPipeline(deps).run(AskRequest(question, mode="cite")):
            events.append(e)

    asyncio.run(go())
    if spans is not None:
        spans += deps.trace.spans
    [final] = [e for e in events if isinstance(e, Final)]
    return final.answer, fake


def test_a_named_cell_is_answered_by_code_without_the_model(store: SqliteStore) -> None:  # noqa: F811
    answer, fake = ask(store, "In Table 2, what is the F1 of Baseline?", [])
    assert answer.status == "answered" and fake.calls == []
    [c] = answer.sentences[0].citations
    assert c.evidence_id.endswith("#r1c1") and "71.2" in answer.text


def test_a_cell_sentence_written_by_code_is_not_left_to_the_judge(store: SqliteStore) -> None:  # noqa: F811
    # the sentence is built from the cell's own labels and value: entailed by construction, so a
    # judge's doubt (the 1.5B judge gave 0.57 to a right cell) must not refuse it
    claims: list[str] = []

    def doubtful(model: Any, claim: str, passage: str, **kw: Any) -> float:
        claims.append(claim)
        return 0.4

    answer, _ = ask(store, "In Table 2, what is the F1 of Baseline?", [], judge_fn=doubtful)
    assert answer.status == "answered" and claims == []
    assert answer.sentences[0].citations[0].verdict == "supported"
    script = [cite("Baseline | 71.2", "E1", "Baseline gets 71.2 F1.")]
    answer, _ = ask(store, "In Table 2, what is the F1 of Baseline?", script, {"tables": False},
                    judge_fn=doubtful)  # fmt: skip
    assert claims and answer.status != "answered"  # a model's sentence is still judged


def test_tables_off_asks_the_composer(store: SqliteStore) -> None:  # noqa: F811
    script = [cite("Baseline | 71.2", "E1", "Baseline gets 71.2 F1.")]
    answer, fake = ask(store, "In Table 2, what is the F1 of Baseline?", script, {"tables": False},
                       judge_fn=sure)  # fmt: skip
    assert len(fake.calls) == 1 and "71.2" in answer.text


def test_below_the_threshold_the_answer_becomes_a_refusal_that_cites_the_paper(
    store: SqliteStore,  # noqa: F811
) -> None:
    script = [
        cite("The corpus contains 1,213 annotated papers", "E1", "1,213 papers."),
        "No",  # the answerability call
    ]
    q = "How many annotators labelled the corpus papers?"
    answer, fake = ask(store, q, script, {"answerable_threshold": 0.5})
    assert len(fake.calls) == 2 and "answer the question" in fake.calls[1][0].content
    assert answer.status == "weak_evidence" and answer.sentences == ()
    assert answer.reason and "What the paper does say" in answer.reason and "1,213" in answer.reason
    assert answer.evidence_board and answer.evidence_board[0].page is not None


def test_above_the_threshold_the_answer_stands(store: SqliteStore) -> None:  # noqa: F811
    script = [cite("The corpus contains 1,213 annotated papers", "E1", "1,213 papers."), "Yes"]
    q = "How many annotated papers does the corpus contain?"
    answer, fake = ask(store, q, script, {"answerable_threshold": 0.5}, judge_fn=sure)
    assert answer.status == "answered" and len(fake.calls) == 2


def test_answerability_off_makes_no_call(store: SqliteStore) -> None:  # noqa: F811
    script = [cite("The corpus contains 1,213 annotated papers", "E1", "1,213 papers.")]
    q = "How many annotated papers does the corpus contain?"
    answer, fake = ask(store, q, script, {"answerable_threshold": 0.5, "answerability": False},
                       judge_fn=sure)  # fmt: skip
    assert answer.status == "answered" and len(fake.calls) == 1


def test_a_chinese_question_about_an_english_paper_is_also_searched_in_english(
    store: SqliteStore,  # noqa: F811
) -> None:
    queries: list[str] = []
    script = [
        "How many annotated papers does the corpus contain?",  # the translation
        cite(
            "The corpus contains 1,213 annotated papers",
            "E1",
            "The corpus contains 1,213 annotated papers.",
        ),
    ]
    answer, fake = ask(store, "语料库包含多少篇 annotated papers？", script, queries=queries)
    assert "Translate the question" in fake.calls[0][0].content
    assert queries[-1] == "How many annotated papers does the corpus contain?"
    assert answer.status == "answered"
    # without the translated query the Chinese question matches too little of the English text
    off, fake_off = ask(
        store, "语料库包含多少篇 annotated papers？", script[1:], {"translate": False}, queries=[]
    )
    assert off.status == "no_evidence" and fake_off.calls == []


def test_the_retrieval_setting_picks_the_strategy(store: SqliteStore) -> None:  # noqa: F811
    q = "How many annotated papers does the corpus contain?"
    script = [cite("The corpus contains 1,213 annotated papers", "E1", "1,213 papers.")]
    names = {}
    for setting in ("search", "windows"):
        spans: list[Any] = []
        ask(store, q, list(script), {"retrieval": setting}, spans=spans)
        names[setting] = next(s.data["strategy"] for s in spans if s.kind == "retrieve")
    assert names == {"search": "today", "windows": "windows+prose+sections"}


def test_the_default_order_puts_prose_before_formula_debris_today_keeps_first(
    tmp_path: Any,
) -> None:
    from footnote.pipelines.ask.retrieve import DEFAULT, TODAY, Retriever
    from footnote.pipelines.ask.understand import understand_by_rules
    from footnote.types import Block, Document, Source, make_block_id, sha256_hex

    s = SqliteStore(tmp_path / "r.db")
    sha = sha256_hex(b"r")
    texts = [
        ("formula", "( ) = ∑ annotated , papers − λ ‖ corpus ‖ 2 + ∈ ≤ 0 1 ( ) x y"),
        (
            "paragraph",
            "The corpus contains 1,213 annotated papers collected from the ACL Anthology.",
        ),
    ]
    blocks = tuple(
        Block(make_block_id(sha, 1, i, t), sha[:12], k, t, 1, order=i)  # type: ignore[arg-type]
        for i, (k, t) in enumerate(texts)
    )
    s.save_document(Document(Source(sha[:12], "pdf", "P", "/r.pdf", sha), blocks))

    def search(q: str, k: int, f: SearchFilters) -> list[Hit]:
        return [Hit(b, 1.0 / (i + 1)) for i, b in enumerate(blocks)]  # the formula first

    q = "How many annotated papers does the corpus contain?"
    und = understand_by_rules(q)
    kinds = {}
    for strategy in (TODAY, DEFAULT):
        got = Retriever(search, s, evidence_k=4, k=8, strategy=strategy)(q, und, SearchFilters())
        kinds[strategy.name] = [e.block.kind for e in got.evidence]
    assert kinds == {"today": ["formula", "paragraph"], DEFAULT.name: ["paragraph", "formula"]}


def test_a_multi_part_question_gets_one_checked_sentence_per_part(store: SqliteStore) -> None:  # noqa: F811
    import json

    parts = {
        "parts": [
            {
                "quote": "an accuracy of 85% on the SciQ test set",
                "cite": "E1",
                "answer": "It reached 85% accuracy on SciQ.",
            },
            {
                "quote": "The corpus contains 1,213 annotated papers",
                "cite": "E2",
                "answer": "The corpus has 1,213 papers.",
            },
            {"quote": "", "cite": "none", "answer": "unanswerable"},
        ]
    }
    q = "What accuracy did the model reach on SciQ, and how many annotated papers does the corpus contain?"
    answer, fake = ask(store, q, [json.dumps(parts)], judge_fn=sure)
    assert "parts" in fake.calls[0][-1].content
    assert answer.status == "answered"
    assert [s.text for s in answer.sentences][-2:] == [
        "It reached 85% accuracy on SciQ.",
        "The corpus has 1,213 papers.",
    ]
    one, fake_one = ask(
        store,
        q,
        [cite("an accuracy of 85% on the SciQ test set", "E1", "85% on SciQ.")],
        {"parts": False},
        judge_fn=sure,
    )
    assert "parts" not in fake_one.calls[0][-1].content
    # the part no sentence answers is said to be unanswered (issue #29), not silently dropped
    answered, unanswered = one.sentences
    assert answered.text == "85% on SciQ." and not unanswered.factual
    assert "how many annotated papers" in unanswered.text


def test_multi_part_detection() -> None:
    from footnote.pipelines.ask.parts import is_multi_part

    assert is_multi_part("How many participants took part in Study 1, and how many in Study 2?")
    assert is_multi_part("Paper Plain 的形成性研究和可用性研究分别有多少名参与者？")
    assert not is_multi_part("How many annotated papers does the corpus contain?")
    assert not is_multi_part("What is the seed lexicon and its size")  # one question word


def test_a_named_table_is_the_only_one_read(store: SqliteStore) -> None:  # noqa: F811
    # the fixture's only table is Table 2: a question about Table 1 is not answered from it
    script = [cite("Baseline | 71.2", "E1", "Baseline gets 71.2 F1.")]
    _, fake = ask(store, "In Table 1, what is the F1 of Baseline?", script)
    assert len(fake.calls) == 1  # the composer was asked; no cell of Table 2 was taken


def test_a_chinese_cell_answer_passes_the_checks_without_a_judge(store: SqliteStore) -> None:  # noqa: F811
    # one call: the translated query (the paper is English); the cell itself needs no model
    answer, fake = ask(
        store, "表 2 中，Baseline 的 F1 是多少？", ["In Table 2, what is the F1 of Baseline?"]
    )
    assert len(fake.calls) == 1 and answer.status == "answered"
    assert answer.sentences[0].text == "Baseline，F1：71.2。"
    assert answer.sentences[0].citations[0].verdict == "supported"


def test_the_default_threshold_is_the_fitted_one_and_its_record_holds() -> None:
    """`answering.answerable_threshold = None` reads the calibration file; the record names its
    cases (all from the dev set's fit half), its bound, and the threshold its own rule picks."""
    from footnote.config.answering import AnsweringSettings, answerable_threshold, calibration
    from footnote.eval.loaders import DEV_SET, dev_half, read_cases

    record = calibration()
    assert answerable_threshold(AnsweringSettings()) == record["answerable_threshold"]
    assert answerable_threshold(AnsweringSettings(answerable_threshold=0.9)) == 0.9
    if not record["fitted"]:
        assert record["answerable_threshold"] == 0.0  # unfitted: never refuses
        return
    dev_ids = {c.id for c in read_cases(DEV_SET)}
    assert record["n"] == len(record["cases"]) > 0
    assert set(record["cases"]) <= dev_ids and {dev_half(i) for i in record["cases"]} == {"fit"}
    allowed = [p for p in record["curve"] if p["added_false_refusals"] <= record["false_refusal_bound"]
               and p["precision"] is not None]  # fmt: skip
    best = max(allowed, key=lambda p: (p["precision"], -p["threshold"]))
    assert record["answerable_threshold"] == best["threshold"]
