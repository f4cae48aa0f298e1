"""Turn drafts and their checks into the final `Answer`: keep, mark or drop, then score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from footnote.textnorm import quantities, same_quantity
from footnote.types import Answer, AnswerStatus, Citation, Hit, Sentence, Usage, cell_id
from footnote.verify.checks import CitationCheck, Judge, Thresholds, check_citation, is_factual
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import EvidenceSet
from footnote.verify.premise import premise_note
from footnote.verify.scoring import support_score


def refine_table_cites(draft: Draft, evidence: EvidenceSet) -> None:
    """Point a citation of a whole table at the cell that holds the sentence's number."""
    for sentence in draft.sentences:
        nums = [q for q in quantities(sentence.text)]
        if not nums:
            continue
        for i, cite in enumerate(sentence.cites):
            ev = evidence.resolve(cite)
            if ev is None or ev.block.table is None or "#" in cite:
                continue
            match = _find_cell(ev.block.table.all_rows, nums, sentence.text)
            if match is not None:
                sentence.cites[i] = cell_id(ev.block.id, *match)


def _find_cell(
    rows: Sequence[Sequence[str]], nums: Sequence[object], sentence: str
) -> tuple[int, int] | None:
    from footnote.textnorm import Quantity, tokens

    wanted = [n for n in nums if isinstance(n, Quantity)]
    words = set(tokens(sentence))
    best: tuple[int, tuple[int, int]] | None = None
    for r, row in enumerate(rows):
        row_score = sum(1 for cell in row for t in tokens(cell) if t in words)
        for c, cell in enumerate(row):
            hit = any(same_quantity(w, q) for w in wanted for q in quantities(cell))
            if hit and (best is None or row_score > best[0]):
                best = (row_score, (r, c))
    return best[1] if best else None


@dataclass
class _Kept:
    sentence: DraftSentence
    checks: list[CitationCheck]
    supported: bool


class AnswerBuilder:
    """Accumulates compose/verify rounds and builds the answer from the best one."""

    def __init__(
        self,
        question: str,
        evidence: EvidenceSet,
        lang: str = "en",
        *,
        judge: Judge | None = None,
        thresholds: Thresholds = Thresholds(),
    ) -> None:
        self.question = question
        self.evidence = evidence
        self.lang = lang
        self.judge = judge
        self.thresholds = thresholds
        self.best: list[_Kept] = []
        self.last_failures: list[str] = []
        self.fabricated = 0
        """Citations of ids the model was not shown, over all rounds (dropped)."""
        self.recited = 0
        """Citations moved to the shown item that holds their quote, over all rounds."""
        self.removed = 0
        self.refused_by_model = False

    def note_refusal(self, draft: Draft) -> None:
        """The model said the evidence does not answer the question."""
        self.refused_by_model = True

    def add_round(self, draft: Draft, checks: list[list[CitationCheck]]) -> None:
        """Judge one round: drop fabricated ids, keep supported/weak sentences, note failures."""
        kept: list[_Kept] = []
        self.last_failures = []
        for sentence, sentence_checks in zip(draft.sentences, checks, strict=True):
            real = [c for c in sentence_checks if not c.fabricated]
            self.fabricated += len(sentence_checks) - len(real)
            self.recited += sum(1 for c in real if c.recited_from is not None)
            good = [c for c in real if c.verdict in ("supported", "weak")]
            if not is_factual(sentence.text):
                kept.append(_Kept(sentence, good, False))
                continue
            if not good:
                self.removed += 1
                why = "; ".join(r for c in sentence_checks for r in c.reasons.values())
                self.last_failures.append(f'"{sentence.text}": {why or "no citation"}')
                continue
            kept.append(_Kept(sentence, good, any(c.verdict == "supported" for c in good)))
        if _strength(kept) >= _strength(self.best):
            self.best = kept

    def has_supported(self) -> bool:
        """Whether the best round has a sentence with a supported citation."""
        return any(k.supported for k in self.best)

    def feedback(self) -> str:
        """Reasons to send back to the model in a revision round."""
        if self.last_failures:
            return " ".join(self.last_failures)
        return "the cited evidence only weakly supports the answer"

    def build(self, *, nearest: Sequence[Hit], usage: Usage) -> Answer:
        """The final answer object."""
        sentences = [self._sentence(k) for k in self.best]
        status: AnswerStatus = "answered"
        reason = None
        if not any(k.supported for k in self.best):
            status = "weak_evidence"
            if sentences:
                reason = "evidence was found, but it only weakly supports this answer"
            elif self.refused_by_model:
                reason = "evidence was found, but none of it answers the question"
            else:
                reason = "evidence was found, but no answer sentence passed the citation checks"
        else:
            note = self._premise_note()
            if note is not None:
                sentences.append(note)
        board = _board(sentences)
        return Answer(
            self.question,
            status,
            tuple(sentences),
            support_score=support_score(sentences),
            reason=reason,
            evidence_board=board,
            nearest=tuple(nearest) if status != "answered" else (),
            usage=usage,
        )

    def _sentence(self, kept: _Kept) -> Sentence:
        citations = tuple(_citation(c) for c in kept.checks)
        return Sentence(
            kept.sentence.text,
            citations=citations,
            factual=is_factual(kept.sentence.text),
            marked_insufficient=not kept.supported,
        )

    def _premise_note(self) -> Sentence | None:
        """The premise check (`verify.premise`); a correction passes the citation checks."""
        cited = [
            c.evidence for k in self.best if k.supported for c in k.checks if c.evidence is not None
        ]
        note = premise_note(self.question, cited, self.evidence, self.lang)
        if note is None:
            return None
        if note.evidence_id is None:
            return Sentence(note.text, factual=False)
        check = check_citation(
            note.quote,
            note.evidence_id,
            self.evidence,
            quote=note.quote,
            judge=self.judge,
            thresholds=self.thresholds,
        )
        if check.fabricated or check.verdict == "unsupported":
            return None
        return Sentence(
            note.text,
            citations=(_citation(check),),
            factual=True,
            marked_insufficient=check.verdict != "supported",
        )


def _strength(kept: list[_Kept]) -> tuple[int, int]:
    return (sum(1 for k in kept if k.supported), len(kept))


def _citation(check: CitationCheck) -> Citation:
    ev = check.evidence
    assert ev is not None
    quote = check.quote if check.quote_match in ("exact", "fuzzy") else ev.text[:240]
    return Citation(
        check.evidence_id,
        quote=quote,
        page=ev.page,
        section=ev.section,
        verdict=check.verdict,
        relevance=ev.relevance,
        checks=dict(check.reasons),
    )


def _board(sentences: Sequence[Sentence]) -> tuple[Citation, ...]:
    seen: dict[str, Citation] = {}
    for s in sentences:
        for c in s.citations:
            seen.setdefault(c.evidence_id, c)
    return tuple(seen.values())
