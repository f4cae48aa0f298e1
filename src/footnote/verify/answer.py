"""Turn drafts and their checks into the final `Answer`: keep, mark or drop, then score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from footnote.textnorm import quantities, same_quantity, text_lang
from footnote.types import Answer, AnswerStatus, Citation, Hit, Sentence, Usage, cell_id
from footnote.verify.checks import CitationCheck, Judge, Thresholds, check_citation, is_factual
from footnote.verify.draft import Draft, DraftSentence
from footnote.verify.evidence import EvidenceSet
from footnote.verify.premise import premise_note, unstated_note
from footnote.verify.question import analyse_question
from footnote.verify.responsive import Finding, check_responsive, single_value_conflict
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
    answers: bool = True
    """Whether the sentence answers the question by itself (`verify.responsive`)."""


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
        responsive: bool = True,
    ) -> None:
        self.question = question
        self.responsive = responsive
        """Check that sentences answer the question (`verify.responsive`); off: support only."""
        self.evidence = evidence
        self.lang = lang
        self.judge = judge
        self.thresholds = thresholds
        self.analysis = analyse_question(question)
        self.part_analyses = [(p, analyse_question(p)) for p in self.analysis.parts]
        self.best: list[_Kept] = []
        self.last_failures: list[str] = []
        self.fabricated = 0
        """Citations of ids the model was not shown, over all rounds (dropped)."""
        self.recited = 0
        """Citations moved to the shown item that holds their quote, over all rounds."""
        self.removed = 0
        self.unresponsive: list[str] = []
        """Why the best round's sentences do not answer the question (`verify.responsive`)."""
        self.refused_by_model = False

    def note_refusal(self, draft: Draft) -> None:
        """The model said the evidence does not answer the question."""
        self.refused_by_model = True

    def add_round(self, draft: Draft, checks: list[list[CitationCheck]]) -> None:
        """Judge one round: drop fabricated ids, keep supported/weak sentences that answer (or
        stand beside one that does), note failures."""
        kept: list[_Kept] = []
        self.last_failures = []
        unresponsive: list[str] = []
        shown = [e.text for e in self.evidence]
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
            finding_text, hard = None, False
            if self.responsive:
                finding = self._responsive(sentence.text, good, shown)
                if finding is not None:
                    finding_text, hard = finding.reason, finding.hard
                else:
                    finding_text = self._conflict(sentence.text, kept)
                    hard = finding_text is not None
            if finding_text is not None:
                unresponsive.append(f'"{sentence.text}": {finding_text}')
                self.last_failures.append(f'"{sentence.text}": {finding_text}')
                if hard:
                    self.removed += 1
                    continue
            supported = any(c.verdict == "supported" for c in good)
            kept.append(_Kept(sentence, good, supported, answers=finding_text is None))
        if _strength(kept) >= _strength(self.best):
            self.best = kept
            self.unresponsive = unresponsive

    def _responsive(
        self, text: str, good: Sequence[CitationCheck], shown: Sequence[str]
    ) -> Finding | None:
        """Why a sentence does not answer the question (or, for a multi-part question, any of
        its parts); None when it does."""
        quotes = [c.span or c.quote for c in good if c.quote_match in ("exact", "fuzzy")]
        cited = [c.evidence.text for c in good if c.evidence is not None]
        finding = check_responsive(
            text, self.question, self.analysis, quotes=quotes, cited=cited, shown=shown
        )
        if finding is None or finding.outside:
            return finding
        for part, analysis in self.part_analyses:
            if check_responsive(text, part, analysis, quotes=quotes, cited=cited) is None:
                return None
        return finding

    def _conflict(self, text: str, kept: Sequence[_Kept]) -> str | None:
        """A second, different value for a one-value question (against the kept answers)."""
        for k in kept:
            if k.answers and is_factual(k.sentence.text):
                why = single_value_conflict(self.analysis, k.sentence.text, text)
                if why is not None:
                    return why
        return None

    def has_supported(self) -> bool:
        """Whether the best round has a supported sentence that answers the question."""
        return any(k.supported and k.answers for k in self.best)

    def language_problem(self) -> str | None:
        """Why the best round's answer is not in the question's language (None when it is):
        the answer is written in the asker's language, quotes stay in the source's."""
        if not self.responsive:
            return None
        answers = [k.sentence.text for k in self.best if k.answers and k.supported]
        if not answers:
            return None
        written = text_lang(" ".join(answers))
        if self.analysis.lang == "zh" and written != "zh":
            return "Write the answer in Chinese, the language of the question (the quote stays as the source has it)."
        if self.analysis.lang == "en" and written == "zh":
            return "Write the answer in English, the language of the question (the quote stays as the source has it)."
        return None

    def feedback(self) -> str:
        """Reasons to send back to the model in a revision round."""
        if self.last_failures:
            return " ".join(self.last_failures)
        return "the cited evidence only weakly supports the answer"

    def build(self, *, nearest: Sequence[Hit], usage: Usage) -> Answer:
        """The final answer object. Without a supported sentence that answers the question it
        is a refusal that shows no answer sentence (what was found goes to the nearest passages).
        With `answering.responsive` off (the pipeline before issue #29, kept for measurement)
        every kept sentence answers, and a refusal shows its weak sentences, marked."""
        status: AnswerStatus = "answered"
        reason = None
        if not self.has_supported():
            status = "weak_evidence"
            sentences = [] if self.responsive else [self._sentence(k) for k in self.best]
            reason = self._refusal_reason(shown=bool(sentences))
            if self.responsive:
                nearest = _with_cited(nearest, self.best)
        else:
            sentences = [self._sentence(k) for k in self.best]
            if self.responsive:
                sentences += self._unanswered_parts()
            note = self._premise_note()
            if note is not None:
                sentences.append(note)
        return Answer(
            self.question,
            status,
            tuple(sentences),
            support_score=support_score(sentences),
            reason=reason,
            evidence_board=_board(sentences),
            nearest=tuple(nearest) if status != "answered" else (),
            usage=usage,
        )

    def _refusal_reason(self, *, shown: bool) -> str:
        """Why no answer is given (`shown`: weak sentences are shown, marked)."""
        if shown:
            return "evidence was found, but it only weakly supports this answer"
        if self.unresponsive:
            return (
                "evidence was found, but no checked sentence answers the question asked ("
                + "; ".join(self.unresponsive[:2])
                + ")"
            )
        if self.responsive and any(k.answers for k in self.best if is_factual(k.sentence.text)):
            return "evidence was found, but it only weakly supports an answer"
        if self.refused_by_model:
            return "evidence was found, but none of it answers the question"
        return "evidence was found, but no answer sentence passed the citation checks"

    def _unanswered_parts(self) -> list[Sentence]:
        """For a multi-part question, each part no kept sentence answers, said as such."""
        said = []
        for part, analysis in self.part_analyses:
            answered = any(
                k.supported
                and check_responsive(
                    k.sentence.text,
                    part,
                    analysis,
                    quotes=[
                        c.span or c.quote for c in k.checks if c.quote_match in ("exact", "fuzzy")
                    ],
                    cited=[c.evidence.text for c in k.checks if c.evidence is not None],
                )
                is None
                for k in self.best
                if is_factual(k.sentence.text)
            )
            if not answered:
                text = (
                    f"所示段落没有回答这一部分：「{part}」"
                    if self.lang == "zh"
                    else f"The passages shown do not answer this part: “{part}”"
                )
                said.append(Sentence(text, factual=False))
        return said

    def _sentence(self, kept: _Kept) -> Sentence:
        citations = tuple(_citation(c) for c in kept.checks)
        return Sentence(
            kept.sentence.text,
            citations=citations,
            factual=is_factual(kept.sentence.text),
            marked_insufficient=not kept.supported,
        )

    def _premise_note(self) -> Sentence | None:
        """The premise check (`verify.premise`): a correction's own claim passes the citation
        checks and the judge as the answer to the question, else the note says the evidence
        does not state the figure."""
        cited = [
            c.evidence for k in self.best if k.supported for c in k.checks if c.evidence is not None
        ]
        note = premise_note(self.question, cited, self.evidence, self.lang)
        if note is None:
            return None
        if note.evidence_id is None:
            return Sentence(note.text, factual=False)
        check = check_citation(
            note.claim,
            note.evidence_id,
            self.evidence,
            quote=note.quote,
            judge=self.judge,
            thresholds=self.thresholds,
            question=self.question,
            as_answer=True,
        )
        if check.fabricated or check.verdict == "unsupported" or check.quote_match != "exact":
            return Sentence(unstated_note(note.asked, self.lang).text, factual=False)
        return Sentence(
            note.text,
            citations=(_citation(check),),
            factual=True,
            marked_insufficient=check.verdict != "supported",
        )


def _strength(kept: list[_Kept]) -> tuple[int, int, int]:
    return (
        sum(1 for k in kept if k.supported and k.answers),
        sum(1 for k in kept if k.supported),
        len(kept),
    )


def _with_cited(nearest: Sequence[Hit], kept: Sequence[_Kept]) -> tuple[Hit, ...]:
    """The nearest passages, led by the blocks a refused draft cited (what the paper says)."""
    hits: dict[str, Hit] = {}
    for k in kept:
        for c in k.checks:
            if c.evidence is not None and c.evidence.block.id not in hits:
                hits[c.evidence.block.id] = Hit(c.evidence.block, c.evidence.relevance)
    for h in nearest:
        hits.setdefault(h.block.id, h)
    return tuple(hits.values())


def _citation(check: CitationCheck) -> Citation:
    """The citation shown: its quote is the evidence span the model's quote matched (the
    document's words, never the model's string), else the start of the evidence."""
    ev = check.evidence
    assert ev is not None
    matched = check.quote_match in ("exact", "fuzzy") and check.span
    quote = check.span if matched else ev.text[:240]
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
