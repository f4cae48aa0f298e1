"""The chat pipeline: rewrite the question from recent turns → ask with fresh retrieval → persist.

History only ever rewrites the question (coreference, ellipsis); evidence comes from a new
retrieval every turn. The rewrite model is skipped when the question has no pronoun or
ellipsis cue. Every answer comes from `AnswerFn` (ask, or the agent loop whose final answer
passes `verify.gate.verify_text_answer` with the judge): the reply stored is the checked
answer's text, never an unchecked `thinking` draft.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from footnote.config import ChatSettings
from footnote.errors import LicenceRefused
from footnote.events import (
    Done,
    Event,
    Final,
    Status,
)
from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.roles import NO_EXTERNAL
from footnote.pipelines.memory import ConversationMemory, MemoryContext, message_labels
from footnote.pipelines.trace import Trace
from footnote.prompts import render
from footnote.serialize import answer_to_dict
from footnote.store.records import ChatMessage
from footnote.textnorm import CJK_IDEOGRAPHS, has_cjk

if TYPE_CHECKING:
    from footnote.models import RoleModel

AnswerFn = Callable[[str], AsyncIterator[Event]]
"""Answers a standalone question (ask, or the agent loop); its events end with Final, Done."""
LabelsFn = Callable[[Sequence[ChatMessage]], tuple[str, ...]]
"""The labels of the sources a finished reply cites, read when it is produced."""
MayAskFn = Callable[[tuple[str, ...]], bool]
"""Whether a question carrying these labels may go to every model that answers it."""

_CUES = re.compile(
    r"\b(it|its|they|them|their|theirs|this|that|these|those|he|she|his|her|him|one|ones|"
    r"former|latter|above|same|also|too|else|another|instead|then|there|why not)\b"
    r"|^\s*(and|but|or|so|what about|how about|why)\b"
    r"|它|他们|她们|这个|那个|这些|那些|其|该|此|上述|呢\s*[?？]?\s*$",
    re.IGNORECASE,
)


def needs_rewrite(question: str) -> bool:
    """True when the question has a pronoun/ellipsis cue or is too short to stand alone."""
    return bool(_CUES.search(question)) or (len(question.split()) <= 3 and not has_cjk(question))


_WORD = re.compile(rf"[{CJK_IDEOGRAPHS}]|[^\W\d_]{{3,}}|\d+(?:\.\d+)?")


def _clean_rewrite(text: str, original: str, context: str = "") -> str:
    """The first line of the model's reply, or `original` when it is empty, far too long, or
    brings in words found neither in the question nor in the conversation (a small model
    copying something else instead of rewriting)."""
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(standalone question|question|rewritten)\s*:\s*", "", line, flags=re.I)
    line = line.strip().strip('"“”「」').strip()
    if not line or len(line) > max(4 * len(original), 300):
        return original
    known = {w.lower() for w in _WORD.findall(original + " " + context)}
    words = [w.lower() for w in _WORD.findall(line)]
    if words and sum(w in known for w in words) < 0.8 * len(words):
        return original
    return line


@dataclass(frozen=True)
class ChatTurn:
    """One turn: the user's stored message and the pending reply the run will fill in."""

    user_id: str
    session_id: str
    message: ChatMessage
    reply: ChatMessage


@dataclass
class ChatDeps:
    """What a chat turn needs; the server (composition) chooses each."""

    memory: ConversationMemory
    answer: AnswerFn
    settings: ChatSettings
    rewrite_model: RoleModel | None = None
    summarise_model: RoleModel | None = None
    labels_for: LabelsFn = lambda _msgs: (NO_EXTERNAL,)
    """Unknown unless the composition says: a reply of unknown provenance is restricted."""
    may_ask: MayAskFn = lambda labels: NO_EXTERNAL not in labels
    """Unknown unless the composition says: a restricted question never goes on."""
    trace: Trace = field(default_factory=Trace)


class ChatPipeline:
    """Runs one chat turn, yielding the ask (or agent) events and persisting the reply."""

    def __init__(self, deps: ChatDeps) -> None:
        self.deps = deps
        self.trace = deps.trace
        self.rewrites = 0
        self.rewrite_labels: tuple[str, ...] = ()
        """The labels of what the last rewrite read (its output carries them)."""
        self.budget = Budget(deps.settings.max_tokens, deps.settings.max_model_calls)
        """The turn's own model calls (rewrite, summary) are charged here; ask has its own."""

    async def run(self, turn: ChatTurn) -> AsyncIterator[Event]:
        """Yield the turn's events; the reply is stored (completed, cancelled or failed)."""
        question = turn.message.content
        standalone, final, status = question, None, "failed"
        try:
            yield Status("context", "reading the conversation")
            ctx = await self.deps.memory.context(
                turn.user_id, turn.session_id, before=turn.message.seq
            )
            standalone = await self.rewrite(question, ctx)
            if standalone != question and not self.deps.may_ask(self.rewrite_labels):
                self.trace.add("rewrite", "withheld", {"labels": list(self.rewrite_labels)},
                               time.time(), 0.0)  # fmt: skip
                yield Status("rewrite", "searching for your own words: the rewrite read "
                             "restricted text that an external model answering it may not see")  # fmt: skip
                standalone = question
            if standalone != question:
                yield Status("rewrite", f"searching for: {standalone}")
            async for event in self.deps.answer(standalone):
                if isinstance(event, Done):
                    continue
                if isinstance(event, Final):
                    final = event.answer
                yield event
            status = "completed"
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        finally:
            data: dict[str, Any] = {"question": question, "standalone": standalone}
            if final is not None:
                data["answer"] = answer_to_dict(final, run_id=self.trace.run_id)
            text = final.text if final else ""
            done = replace(turn.reply, content=text, data=data)
            labels = self._reply_labels(done) if text else ()
            await self.deps.memory.finish(turn.user_id, turn.reply, text, status, data, labels)
        if self.deps.summarise_model is not None:
            try:
                await self.deps.memory.fold(turn.user_id, turn.session_id, self._summarise)
            except Exception as exc:  # a failed fold keeps the old summary; the turn stands
                self.trace.add("error", "fold", {"message": str(exc)}, time.time(), 0.0)
        yield Done()

    def _reply_labels(self, reply: ChatMessage) -> tuple[str, ...] | None:
        """The labels a reply is kept with: those of the sources it cites now, as it is
        produced; None (restricted) when they cannot be read."""
        try:
            return self.deps.labels_for([reply])
        except Exception as exc:  # unknown labels are kept as unknown, never as none
            self.trace.add("error", "labels", {"message": str(exc)}, time.time(), 0.0)
            return None

    async def rewrite(self, question: str, ctx: MemoryContext) -> str:
        """The standalone form of `question` (unchanged without history or cues); a changed
        one carries the labels of the context it was written from (`rewrite_labels`)."""
        mode = self.deps.settings.rewrite
        model = self.deps.rewrite_model
        self.rewrite_labels = ()
        if model is None or mode == "never" or not (ctx.turns or ctx.summary):
            return question
        if mode == "auto" and not needs_rewrite(question):
            self.trace.add("rewrite", "skipped", {"reason": "no cue"}, time.time(), 0.0)
            return question
        if self.budget.exceeded():
            self.trace.add("rewrite", "skipped", {"reason": "budget"}, time.time(), 0.0)
            return question
        prompt = render("chat_rewrite", conversation=ctx.render(), question=question)
        labels = tuple(dict.fromkeys([*ctx.summary_labels, *message_labels(ctx.turns)]))
        with self.trace.span("model", "rewrite", role=model.role, question=question) as span:
            try:
                out = await asyncio.to_thread(
                    model.complete,
                    [Message("user", prompt)],
                    max_tokens=96,
                    labels=labels,
                    budget=self.budget,
                    run_id=self.trace.run_id,
                )
            except LicenceRefused as exc:  # the conversation may not reach this model
                span.update(output=question, skipped=str(exc))
                return question
            text = _clean_rewrite(out.text, question, ctx.render())
            span.update(output=text, tokens_in=out.tokens_in, tokens_out=out.tokens_out)
        self.rewrites += 1
        self.rewrite_labels = labels if text != question else ()
        return text

    async def _summarise(
        self, summary: str, summary_labels: tuple[str, ...], messages: list[ChatMessage]
    ) -> str:
        model = self.deps.summarise_model
        assert model is not None
        words = self.deps.settings.summary_tokens * 3 // 4
        turns = MemoryContext("", tuple(messages)).render()
        prompt = render(
            "chat_summarise", summary=summary or "(none)", turns=turns, max_words=str(words)
        )
        with self.trace.span("model", "summarise", role=model.role, folded=len(messages)) as span:
            out = await asyncio.to_thread(
                model.complete,
                [Message("user", prompt)],
                max_tokens=self.deps.settings.summary_tokens,
                labels=tuple(dict.fromkeys([*summary_labels, *message_labels(messages)])),
                budget=self.budget,
                run_id=self.trace.run_id,
            )
            span.update(output=out.text, tokens_in=out.tokens_in, tokens_out=out.tokens_out)
        return out.text.strip() or summary
