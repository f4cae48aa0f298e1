"""A refusal that still helps: what the paper does say about the question's topic, cited.

When evidence was found but no answer passed (weak evidence, or the answerability call said the
passages do not answer), the reader gets the best-matching sentence of up to two of the passages
shown, each with its block id and page, in the refusal's reason and on its evidence board. They
are offered as what the paper says nearby, never as the answer: the status stays a refusal.
"""

from __future__ import annotations

from dataclasses import replace

from footnote.index.windows import WindowScorer
from footnote.types import Answer, Citation
from footnote.verify import EvidenceSet

MAX_RELATED = 2


def what_the_paper_says(answer: Answer, question: str, shown: EvidenceSet) -> Answer:
    """The refusal with the paper's nearest statements (cited) added; other answers unchanged."""
    if answer.status == "answered" or not len(shown):
        return answer
    scorer = WindowScorer.over(e.text for e in shown)
    ranked = sorted(
        ((*scorer.best_window(question, e.text, width=1), e) for e in shown if e.text.strip()),
        key=lambda x: -x[0],
    )
    seen: set[str] = set()
    distinct = []
    for score, window, e in ranked:
        if score > 0 and window not in seen:
            seen.add(window)
            distinct.append((score, window, e))
    related = [
        Citation(
            e.id,
            quote=window[:300],
            page=e.page,
            section=e.section,
            verdict="unsupported",
            relevance=e.relevance,
            checks={"related": "what the paper says nearby; it does not answer the question"},
        )
        for _score, window, e in distinct[:MAX_RELATED]
    ]
    if not related:
        return answer
    said = "; ".join(f"«{c.quote}» [{c.evidence_id}, p. {c.page}]" for c in related)
    reason = f"{answer.reason or 'no answer passed the checks'}. What the paper does say: {said}"
    board = answer.evidence_board or tuple(related)
    return replace(answer, reason=reason, evidence_board=board)
