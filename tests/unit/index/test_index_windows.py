"""Sentence-window scoring: the block whose one sentence answers outranks a long block that
mentions each query word once; Chinese is matched on character bigrams; debris is recognised."""

from __future__ import annotations

from footnote.index.windows import WindowScorer, garbled, stem, terms, windows

ANSWER = (
    "We describe the tool in detail. On average, each query required the annotators to review "
    "76 candidate papers. The interface is shown in Figure 2."
)
SPREAD = (
    "Annotators joined in March. The query log was cleaned. Candidate lists were long. "
    "Papers were sampled at random. Review took place online, and the average was not recorded."
)


def test_the_answering_window_beats_scattered_mentions() -> None:
    scorer = WindowScorer.over([ANSWER, SPREAD, "Unrelated text about datasets."])
    q = "On average, how many candidate papers did the annotators review for each query?"
    best_answer, window = scorer.best_window(q, ANSWER)
    best_spread, _ = scorer.best_window(q, SPREAD)
    assert best_answer > best_spread
    assert "76 candidate papers" in window


def test_stems_join_inflections() -> None:
    assert stem("annotators") == stem("annotated") == "annot"
    assert stem("gpu") == "gpu"
    assert "review" in terms("reviewed papers") or "review" in {stem("reviewed")}


def test_chinese_is_matched_on_bigrams() -> None:
    scorer = WindowScorer.over(["模型的准确率为 85%。", "数据集包含一千篇论文。"])
    q = "模型的准确率是多少？"
    assert (
        scorer.best_window(q, "模型的准确率为 85%。")[0]
        > scorer.best_window(q, "数据集包含一千篇论文。")[0]
    )
    assert "准确" in terms(q)


def test_windows_are_runs_of_two_sentences() -> None:
    assert windows("One here. Two here. Three here.") == [
        "One here. Two here.",
        "Two here. Three here.",
    ]
    assert windows("Only one sentence") == ["Only one sentence"]


def test_garbled_text_is_recognised() -> None:
    assert garbled("( ) = ∑ ( , ) − λ ‖ ‖ 2 + ∈ ≤ 0 1 ( ) x y")
    assert garbled("a b c d e f g h i j k l m n")
    assert not garbled(ANSWER)
    assert not garbled("模型的准确率为百分之八十五，数据来自公开的论文。")


def test_excerpt_keeps_the_answering_sentences_within_the_limit() -> None:
    from footnote.index.windows import excerpt

    filler = " ".join(
        f"Sentence number {w} talks about something else entirely." for w in "abcdefghij"
    )
    text = f"{filler} On average, each query required the annotators to review 76 candidate papers. {filler}"
    scorer = WindowScorer.over([text, SPREAD])
    q = "How many candidate papers did the annotators review per query?"
    cut = excerpt(q, text, scorer, 300)
    assert "76 candidate papers" in cut and len(cut) <= 300 and cut in text
    assert excerpt(q, "Short text.", scorer, 300) == "Short text."
