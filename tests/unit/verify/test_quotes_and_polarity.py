"""Issue #30, findings 7, 9, 10: uncited questions are claims like any other; a fuzzy quote is
shown as the document's words and never flips a negation; without the judge a paraphrase is at
most weak and a reversed polarity is unsupported."""

from __future__ import annotations

import pytest

from footnote.types import Answer, Block, Usage
from footnote.verify import Evidence, EvidenceSet
from footnote.verify.answer import AnswerBuilder
from footnote.verify.checks import check_citation, is_factual
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.gate import check_draft

SCIQ = "Our model reached an accuracy of 85% on the SciQ test set, beating the baseline."
ROBUST = "The results show that the proposed method is robust to label noise in all settings."
NEEDS = "The method does not need labelled data for the target domain at all."
ZH = "实验结果表明该方法在所有数据集上都显著提高了召回率。"
TRAIN = "We trained the final model on 400 papers from open archives in the spring."
MARKET = "The market is expected to reach $23 billion by 2030, analysts say."


def evidence(*texts: str) -> EvidenceSet:
    blocks = [
        Block(f"abcdef12-p{i}-00000{i}", "abcdef12", "paragraph", t, i, order=i)
        for i, t in enumerate(texts, 1)
    ]
    return EvidenceSet([Evidence(b.id, b.text, b, relevance=0.8) for b in blocks])


def build(question: str, draft: Draft, shown: EvidenceSet, judge=None) -> Answer:  # type: ignore[no-untyped-def]
    builder = AnswerBuilder(question, shown, judge=judge)
    builder.add_round(draft, check_draft(draft, shown, judge=judge, question=question))
    return builder.build(nearest=(), usage=Usage())


# -- finding 7: a question mark does not make a sentence non-factual ---------------------------


def test_an_uncited_question_with_content_is_dropped() -> None:
    shown = evidence(SCIQ)
    draft = Draft(
        [
            DraftSentence(SCIQ, [shown.ids[0]]),
            DraftSentence("Did the model reach 97% accuracy on SciQ?", []),
            DraftSentence("是否达到了97%的准确率？", []),
        ]
    )
    answer = build("What accuracy on SciQ?", draft, shown)
    assert [s.text for s in answer.sentences] == [SCIQ]
    assert answer.status == "answered"
    for text in (
        "Did the model reach 97% accuracy on SciQ?",
        "是否达到了97%的准确率？",
        "Why 97%?",
    ):
        assert is_factual(text), text
    assert not is_factual("So?") and not is_factual("")


# -- finding 9: fuzzy quotes -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,quote",
    [
        (ROBUST, "The results show that the proposed method is not robust to label noise in all"),
        (NEEDS, "The method does need labelled data for the target domain at all"),
        (ROBUST, "The results show that the proposed method is never robust to label noise in all"),
        (ZH, "实验结果表明该方法在所有数据集上都没有显著提高召回率"),
        (ZH, "实验结果表明该方法在所有数据集上都未显著提高了召回率"),
    ],
)
def test_a_fuzzy_quote_that_adds_or_removes_a_negation_is_no_match(text: str, quote: str) -> None:
    shown = evidence(text)
    check = check_citation("A claim.", shown.ids[0], shown, quote=quote)
    assert check.quote_match == "missing", check


def test_a_fuzzy_quote_is_shown_as_the_words_of_the_document() -> None:
    shown = evidence(TRAIN)
    quote = "We trained the model on 400 papers from open archives"  # "final" left out
    sentence = "The final model was trained on 400 papers from open archives."
    check = check_citation(sentence, shown.ids[0], shown, quote=quote)
    assert check.quote_match == "fuzzy"
    assert check.span == "We trained the final model on 400 papers from open archives"
    draft = Draft([DraftSentence(sentence, [shown.ids[0]], quote)])
    answer = build("How many papers?", draft, shown, judge=lambda claim, passage: 0.9)
    [c] = answer.sentences[0].citations
    assert c.quote == "We trained the final model on 400 papers from open archives"


def test_an_exact_quote_is_shown_as_the_document_writes_it() -> None:
    shown = evidence(SCIQ)
    check = check_citation("x", shown.ids[0], shown, quote="AN ACCURACY OF 85%  on the sciq")
    assert check.quote_match == "exact" and check.span == "an accuracy of 85% on the SciQ"


def test_an_ocr_quote_is_shown_as_the_page_reads() -> None:
    page = "Tbe model was trained on 400 papers frorn open archives in the spring."
    block = Block("abc-p1-000001", "abc", "paragraph", page, 1, ocr_confidence=0.8)
    shown = EvidenceSet([Evidence("E1", page, block)])
    quote = "The model was trained on 400 papers from open archives"
    check = check_citation("It used 400 papers.", "E1", shown, quote=quote)
    assert check.quote_match == "fuzzy" and check.span.startswith("Tbe model was trained")
    assert "frorn open archives" in check.span and "spring" not in check.span
    flipped = "The model was not trained on 400 papers from open archives"
    assert check_citation("x", "E1", shown, quote=flipped).quote_match == "missing"


# -- finding 10: no judge, no negation ---------------------------------------------------------


@pytest.mark.parametrize(
    "text,claim",
    [
        (SCIQ, "Our model did not reach an accuracy of 85% on the SciQ test set."),
        (MARKET, "The market is not expected to reach $23 billion by 2030."),
        (NEEDS, "The method needs labelled data for the target domain."),
        ("该模型支持中文和英文两种语言。", "该模型不支持中文和英文两种语言。"),
        (SCIQ, "Our model never reached an accuracy of 85% on the SciQ test set."),
    ],
)
def test_without_the_judge_a_reversed_polarity_is_unsupported(text: str, claim: str) -> None:
    shown = evidence(text)
    check = check_citation(claim, shown.ids[0], shown)
    assert check.verdict == "unsupported" and "polarity" in check.reasons, check


def test_without_the_judge_only_a_verbatim_claim_is_supported() -> None:
    shown = evidence(SCIQ)
    verbatim = check_citation("Our model reached an accuracy of 85% on the SciQ test set.",
                              shown.ids[0], shown)  # fmt: skip
    assert verbatim.verdict == "supported"
    paraphrase = check_citation("On the SciQ test set our model reached 85% accuracy.",
                                shown.ids[0], shown)  # fmt: skip
    assert paraphrase.verdict == "weak" and "verbatim" in paraphrase.reasons
    negated_source = evidence(NEEDS)
    same = check_citation("The method does not need labelled target-domain data.",
                          negated_source.ids[0], negated_source)  # fmt: skip
    assert same.verdict == "weak" and "polarity" not in same.reasons


def test_without_the_judge_a_negated_sentence_over_result_rows_is_unsupported() -> None:
    """`graph.judge=false`: the value checks pass (name, title, year), the negation is not seen."""
    row = "title: Blue Lake; year: 1999"
    block = Block("row:0", "graph", "table", row, 0)
    shown = EvidenceSet([Evidence("row:0", row, block, context="Ada Stone", kind="row")])
    reversed_ = check_citation("Ada Stone never acted in Blue Lake (1999).", "row:0", shown)
    assert reversed_.verdict == "unsupported" and "polarity" in reversed_.reasons
    assert not reversed_.values_missing
    plain = check_citation("Ada Stone acted in Blue Lake (1999).", "row:0", shown)
    assert plain.verdict == "supported"


def test_a_sentence_code_wrote_from_a_cell_needs_no_judge() -> None:
    """The ask pipeline's cell answer is written by code from the cell's labels and value; the
    same words from a model are a paraphrase, weak without the judge."""
    cell = "Baseline, F1: 71.2"
    block = Block("abcdef12-p2-000002", "abcdef12", "table", cell, 2)
    ctx = "Table 2: Results.\nModel | F1\nBaseline | 71.2"
    shown = EvidenceSet([Evidence("abcdef12-p2-000002#r1c1", cell, block, context=ctx)])
    text = "The F1 value for Baseline is 71.2."
    by_code = Draft([DraftSentence(text, [shown.ids[0]], "71.2", by_code=True)])
    by_model = Draft([DraftSentence(text, [shown.ids[0]], "71.2")])
    assert [c.verdict for [c] in check_draft(by_code, shown)] == ["supported"]
    assert [c.verdict for [c] in check_draft(by_model, shown)] == ["weak"]
