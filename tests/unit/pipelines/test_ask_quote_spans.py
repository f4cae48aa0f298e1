"""`answering.quote_spans`: an answer shown as the verbatim quote it rests on — a "Yes" drafted
for a question that does not ask yes or no (dev run, fd-035: "按什么语种顺序分类排列？" answered
"Yes", quoting "语种顺序是：中文、日文、英文、俄文、其他文种", and refused), or a bare value whose
quote states the question's words (fd-001: "0.60", quoting "Averaged across datasets, we observe
+0.60 F1 when using SCIVOCAB", judged weak beside the question). The model is scripted;
retrieval, the checks and the answer builder are real."""

from __future__ import annotations

from test_ask_responsive import ask, store  # noqa: F401  (fixture)

from footnote.pipelines.ask.compose import quote_spans
from footnote.store.sqlite import SqliteStore
from footnote.types import Block
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import Evidence, EvidenceSet

ORDER = "条目先按文种分类排列，语种顺序是：中文、日文、英文、俄文、其他文种。"
SERVER = "The server parses the uploaded PDFs with Grobid before indexing them."
GAIN = "Averaged across datasets, we observe +0.60 F1 when using SCIVOCAB. Table 3 | 79.14 | 83.64"


def evidence() -> EvidenceSet:
    items = []
    for i, text in enumerate((ORDER, SERVER, GAIN)):
        block = Block(f"b1-p1-aaaaa{i}", "b1", "paragraph", text, 1)
        items.append(Evidence(block.id, text, block, relevance=1.0))
    return EvidenceSet(items)


def test_a_yes_to_an_open_question_becomes_its_verbatim_quote() -> None:
    quote = "语种顺序是：中文、日文、英文、俄文、其他文种"
    draft = Draft([DraftSentence("Yes", ["b1-p1-aaaaa0"], quote)])
    quote_spans(draft, evidence(), "使用著者-出版年制时，条目先按什么语种顺序分类排列？")
    assert draft.sentences[0].text == quote


def test_a_yes_to_a_yes_no_question_or_on_a_paraphrased_quote_stays() -> None:
    asked = "Does the server parse the uploaded PDFs with Grobid?"
    kept = Draft([DraftSentence("Yes.", ["b1-p1-aaaaa1"], SERVER)])
    quote_spans(kept, evidence(), asked)
    assert kept.sentences[0].text == "Yes."
    paraphrase = "The server uses Grobid to parse PDFs."  # not in the passage: no span to show
    loose = Draft([DraftSentence("Yes", ["b1-p1-aaaaa1"], paraphrase)])
    quote_spans(loose, evidence(), "Which parser does the server use for PDFs?")
    assert loose.sentences[0].text == "Yes"


def test_a_bare_value_becomes_its_quote_when_the_quote_states_what_was_asked() -> None:
    asked = "Averaged across datasets, how much F1 does SciBERT gain from using SCIVOCAB?"
    stated = "Averaged across datasets, we observe +0.60 F1 when using SCIVOCAB"
    draft = Draft([DraftSentence("0.60", ["b1-p1-aaaaa2"], stated)])
    quote_spans(draft, evidence(), asked)
    assert draft.sentences[0].text == stated
    # a quote that is the value alone, or one that does not hold the value, says nothing more
    bare = Draft([DraftSentence("79.14", ["b1-p1-aaaaa2"], "79.14")])
    other = Draft([DraftSentence("0.70", ["b1-p1-aaaaa2"], stated)])
    quote_spans(bare, evidence(), asked)
    quote_spans(other, evidence(), asked)
    assert (bare.sentences[0].text, other.sentences[0].text) == ("79.14", "0.70")
    # a quote that states little of the question is no answer to it
    far = Draft([DraftSentence("Grobid", ["b1-p1-aaaaa1"], SERVER)])
    quote_spans(far, evidence(), "Which citation parser scored best on the benchmark of Table 4?")
    assert far.sentences[0].text == "Grobid"


def test_the_setting_shows_the_quote_where_a_yes_was_refused(
    store: SqliteStore,  # noqa: F811
) -> None:
    question = "What does the server parse the uploaded PDFs with?"
    off, _ = ask(store, question, [(SERVER, "Yes")], answering={"quote_spans": False},
                 max_revisions=0)  # fmt: skip
    on, _ = ask(store, question, [(SERVER, "Yes")], answering={"quote_spans": True},
                max_revisions=0)  # fmt: skip
    assert off.status != "answered" and off.sentences == ()
    assert on.status == "answered" and "Grobid" in on.text and "Yes" not in on.text
    [cite] = on.sentences[0].citations
    assert cite.quote == SERVER
