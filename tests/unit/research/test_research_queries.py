"""A sub-question's first query says each word once (seen in the multi-document run at
f0a8071: the model's section titled with the question itself was searched as "word embeddings
built evaluated languages word embeddings built evaluated" — the subject, then the same words
again as the section's focus, and none of what the section asks besides)."""

from __future__ import annotations

from footnote.pipelines.research.outline import plan
from footnote.types import Outline, OutlineItem

Q = ("How are word embeddings built and evaluated for languages other than English (Yorùbá, "
     "Twi, Turkish, Portuguese) in these papers, and how much do the size and quality of the "
     "training data matter?")  # fmt: skip


def test_the_first_query_says_each_word_once_and_keeps_what_the_section_asks() -> None:
    item = OutlineItem(
        "size",
        "How are word embeddings built and evaluated for languages other than English",
        "What are the methods used to build and evaluate word embeddings for these languages?",
    )
    (sq,) = plan(Outline(Q, "literature_review", (item,)), {}, reserve=0.3, parallel=1)
    first = sq.queries[0].split()
    assert len(first) == len(set(first)), sq.queries[0]
    assert "methods" in first  # the section's own ask reaches the query
