"""Issue #30, finding 11: a premise correction is a claim like any other. Its number must be the
referent of the question's metric noun, and the correction, with its question, passes the
same checks and the judge; otherwise the note says the evidence does not state the figure."""

from __future__ import annotations

from footnote.types import Answer, Block, Usage
from footnote.verify import Evidence, EvidenceSet
from footnote.verify.answer import AnswerBuilder
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.gate import check_draft
from footnote.verify.premise import premise_note

MARGIN = "Our model improves accuracy by 3% over the strong baseline on SciQ."
SCIQ = "Our model reached an accuracy of 85% on the SciQ test set, beating the baseline."
ZH = "该模型在测试集上的准确率为85%，比基线高3%。"


def evidence(*texts: str) -> EvidenceSet:
    blocks = [
        Block(f"abcdef12-p{i}-00000{i}", "abcdef12", "paragraph", t, i, order=i)
        for i, t in enumerate(texts, 1)
    ]
    return EvidenceSet([Evidence(b.id, b.text, b, relevance=0.8) for b in blocks])


def answer(question: str, text: str, judge) -> Answer:  # type: ignore[no-untyped-def]
    shown = evidence(text)
    draft = Draft([DraftSentence(text, [shown.ids[0]])])
    builder = AnswerBuilder(question, shown, judge=judge)
    builder.add_round(draft, check_draft(draft, shown, judge=judge, question=question))
    return builder.build(nearest=(), usage=Usage())


def test_a_margin_is_not_the_figure_the_question_asks_about() -> None:
    """Issue #30: "95% accuracy" was "corrected" with the "3%" improvement margin."""
    q = "Why does the model reach 95% accuracy on SciQ?"
    out = answer(q, MARGIN, judge=lambda claim, passage: 0.9)
    note = out.sentences[-1]
    assert "95%" in note.text and "does not state" in note.text
    assert "3%" not in note.text and not note.citations
    shown = evidence(MARGIN)
    assert premise_note(q, list(shown), shown).evidence_id is None  # type: ignore[union-attr]


def test_the_correction_goes_to_the_judge_with_its_question() -> None:
    q = "Why does the model reach 95% accuracy on SciQ?"
    claims: list[str] = []

    def judge(claim: str, passage: str) -> float:
        claims.append(claim)
        return 0.9

    out = answer(q, SCIQ, judge)
    note = out.sentences[-1]
    assert "95%" in note.text and "85%" in note.text and note.citations
    assert any(q in c and "85%" in c for c in claims), claims  # the correction itself was judged


def test_a_correction_the_judge_rejects_becomes_does_not_state() -> None:
    q = "Why does the model reach 95% accuracy on SciQ?"

    def judge(claim: str, passage: str) -> float:
        return 0.05 if q in claim else 0.9  # the answer holds, the correction does not

    note = answer(q, SCIQ, judge).sentences[-1]
    assert "does not state" in note.text and "85%" not in note.text and not note.citations


def test_a_chinese_correction_uses_the_metric_noun() -> None:
    q = "为什么该模型的准确率达到95%？"
    shown = evidence(ZH)
    note = premise_note(q, list(shown), shown, "zh")
    assert note is not None and note.evidence_id == shown.ids[0]
    assert "85%" in note.text and "3%" not in note.text.split("：")[0]
