"""Checked sentences released one by one, each as soon as the answer is known to keep it.

The ask loop checks a round's sentences one at a time. After each, `RoundRelease` asks a copy of
the run's `AnswerBuilder` what the answer would be if the round ended with the sentences checked
so far, and releases the sentences that no later step can change:

- whether a sentence is kept depends only on it and the sentences before it (its citations, the
  conformance check, a conflict with an earlier kept sentence), so a kept prefix stays kept;
- the round must become the answer: the loop ends after it whatever the rest holds (extractive
  mode, a repeated draft, the last revision, or a supported sentence that answers with the answer
  in the question's language for every way the remaining sentences can turn out), and it beats
  the best earlier round already (a round's strength only grows with its sentences);
- the builder's own `build` decides what is shown (a refusal shows no sentence, so nothing is
  released before a supported sentence that answers).

What cannot be known early waits for the round's end: a sentence is never sent as checked and
then left out of the final answer. Notes the final answer adds after its sentences (an unanswered
part, a premise correction checked by the judge) are sent with it.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from footnote.events import AnswerDelta, CheckedSentence, CitationEvent, Event
from footnote.types import Sentence, Usage, flat_sentence
from footnote.verify import CitationCheck
from footnote.verify.answer import AnswerBuilder
from footnote.verify.draft import Draft, DraftSentence

MAX_OPEN = 8
"""Remaining sentences whose every outcome is tried for the language rule; more: wait."""


def sentence_events(index: int, sentence: Sentence) -> list[Event]:
    """A final sentence as it streams: the typed sentence, then the same text and citations as
    `answer_delta` and `citation` events (for clients that read those)."""
    text = flat_sentence(sentence.text, insufficient=sentence.marked_insufficient)
    return [
        CheckedSentence(index, sentence),
        AnswerDelta(text + " "),
        *(CitationEvent(index, c) for c in sentence.citations),
    ]


@dataclass
class RoundRelease:
    """One round's release of final sentences (`released` carries over from earlier rounds)."""

    builder: AnswerBuilder
    """The run's builder before this round (copied, never changed here)."""
    draft: Draft
    ends_anyway: bool
    """The loop stops after this round whatever it holds (extractive, a repeat, the last round)."""
    cell: bool = False
    """A table cell's round: it ends (and is the answer) once it has a supported sentence."""
    released: list[Sentence] = field(default_factory=list)

    def after(self, checks: Sequence[list[CitationCheck]]) -> list[tuple[int, Sentence]]:
        """The sentences (with their answer index) that became final once the first
        `len(checks)` sentences of the draft were checked."""
        n = len(checks)
        probe = copy.deepcopy(self.builder, {id(self.builder.evidence): self.builder.evidence})
        probe.judge = None  # what the probe builds is read for its sentences only: no model call
        before = probe.best
        probe.add_round(Draft(self.draft.sentences[:n], raw=self.draft.raw), list(checks))
        if probe.best is before:
            return []  # an earlier round is still stronger: it may yet be the answer
        if not self._round_ends(probe, self.draft.sentences[n:]):
            return []
        shown = probe.build(nearest=(), usage=Usage()).sentences[: len(probe.best)]
        start = len(self.released)
        self.released.extend(shown[start:])
        return list(enumerate(shown[start:], start))

    def _round_ends(self, probe: AnswerBuilder, remaining: Sequence[DraftSentence]) -> bool:
        if self.cell:
            return probe.has_supported()
        if self.ends_anyway:
            return True
        return probe.has_supported() and _language_settled(probe, remaining)


def _language_settled(probe: AnswerBuilder, remaining: Sequence[DraftSentence]) -> bool:
    """Whether the answer is in the question's language however the remaining sentences turn
    out (each may or may not be kept as a supported sentence that answers): the builder's own
    language rule, tried on every outcome."""
    if len(remaining) > MAX_OPEN:
        return False
    template = next(k for k in probe.best if k.supported and k.answers)
    trial = copy.copy(probe)
    for size in range(len(remaining) + 1):
        for chosen in itertools.combinations(remaining, size):
            trial.best = [*probe.best, *(replace(template, sentence=s) for s in chosen)]
            if trial.language_problem() is not None:
                return False
    return True
