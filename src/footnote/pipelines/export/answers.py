"""Ask answers and chat threads as export documents: each sentence with its citations, the
cited passages in the evidence appendix; passages a user may not read are withheld.

An answer comes from a file or the store, so it passes the gate again before it is shown: each
citation's id must resolve to a stored block, its quote occur there and the sentence's numbers
match it (`verify.check_citation`); a verdict is never stronger than the recomputed one, and a
sentence with no passing citation is left out (and counted). The appendix shows the stored
block's text, never the file's quote; a citation whose block is gone is shown as such."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from footnote.pipelines.export.document import (
    WEAK_FLAG,
    DocSection,
    EvidenceItem,
    ExportDoc,
    Paragraph,
    withheld_notice,
)
from footnote.types import Block
from footnote.verify import Evidence, EvidenceSet, Judge, check_citation, is_factual

CitedPassage = Callable[[str], tuple[Block, EvidenceItem, bool] | None]
"""`evidence id -> (its stored block, appendix entry without its ref, readable by the user)`,
or None when the passage no longer exists."""
NOT_VERIFIED = "not verified: the cited passage is no longer in the library"
GONE_QUOTE = "(this passage is no longer in the library; nothing was checked against it)"
_RANK = {"unsupported": 0, "weak": 1, "supported": 2}
MAX_CITES = 3
"""Citations re-checked per sentence, as at answer time (`verify.gate.MAX_CITES_CHECKED`)."""
UNTITLED_SESSION = "New conversation"
"""The title the chat stores give a session created without one (never a thread's title)."""
MAX_TITLE = 160


def stored_span(text: str, quote: str) -> str | None:
    """The stored text's own words that a quote matches (case and spacing folded), or None."""
    words = quote.split()
    if not words:
        return None
    found = re.search(r"\s+".join(re.escape(w) for w in words), text, re.IGNORECASE)
    return found.group(0) if found else None


@dataclass
class _Recheck:
    """What re-checking found over a document's sentences."""

    failed: int = 0
    unverified: int = 0
    supported: int = 0
    factual: int = 0
    reasons: list[str] = field(default_factory=list)

    def note(self) -> str:
        out = (f"Re-checked against the library on export (deterministic checks: ids, quotes, "
               f"numbers; verdicts never stronger than recomputed): {self.supported} of "
               f"{self.factual} factual sentence(s) supported")  # fmt: skip
        if self.failed:
            out += f"; {self.failed} sentence(s) failed the checks and are left out"
        if self.unverified:
            out += f"; {self.unverified} sentence(s) not verified (cited passage gone)"
        return out + "."


class _Appendix:
    def __init__(self, cited: CitedPassage, judge: Judge | None) -> None:
        self.cited, self.judge = cited, judge
        self.found: dict[str, tuple[Block, EvidenceItem] | None] = {}
        self.items: dict[str, EvidenceItem] = {}
        self.hidden: dict[str, tuple[str, ...]] = {}
        self.dropped = 0
        self.check = _Recheck()

    def _lookup(self, eid: str) -> tuple[Block, EvidenceItem] | bool | None:
        """A citation's stored block and entry (None: gone; False: withheld from this user)."""
        if eid in self.hidden:
            return False
        if eid not in self.found:
            hit = self.cited(eid)
            if hit is not None and not hit[2]:
                self.hidden[eid] = hit[1].labels
                return False
            self.found[eid] = (hit[0], hit[1]) if hit is not None else None
        return self.found[eid]

    def _ref(self, eid: str, quote: str) -> int:
        """The appendix number of a kept sentence's citation; its quote is the stored text."""
        if eid not in self.items:
            hit = self.found.get(eid)
            if hit is None:
                item = EvidenceItem(0, eid, GONE_QUOTE, "(unknown source)", "gone")
            else:
                block, item = hit
                item = replace(item, quote=stored_span(block.text, quote) or block.text[:400])
            self.items[eid] = replace(item, ref=len(self.items) + 1)
        return self.items[eid].ref

    def sentence(self, s: dict[str, Any]) -> Paragraph | None:
        """The sentence re-checked: a paragraph, or None when it is left out."""
        text = str(s.get("text", ""))
        factual = is_factual(text)
        verdicts: list[str] = []
        cites: list[tuple[str, str]] = []
        gone = False
        for c in (s.get("citations") or [])[:MAX_CITES]:
            eid, quote = str(c.get("id", "")), str(c.get("quote") or "")
            hit = self._lookup(eid)
            if hit is False:
                self.dropped += 1
                return None
            cites.append((eid, quote))
            if not isinstance(hit, tuple):
                gone = True
                continue
            verdicts.append(self._verdict(text, eid, quote, hit[0], str(c.get("verdict"))))
        self.check.factual += factual
        passing = [v for v in verdicts if v != "unsupported"]
        if gone and not verdicts:
            self.check.unverified += 1
            flags: tuple[str, ...] = (NOT_VERIFIED,)
        elif factual and not passing:
            self.check.failed += 1
            return None
        else:
            supported = "supported" in passing
            self.check.supported += factual and supported
            weak = factual and (not supported or bool(s.get("insufficient")))
            flags = (WEAK_FLAG,) if weak else ()
        refs = tuple(dict.fromkeys(self._ref(eid, quote) for eid, quote in cites))
        return Paragraph(text, refs, flags)

    def _verdict(self, text: str, eid: str, quote: str, block: Block, claimed: str) -> str:
        base = block.table.as_text() if block.table is not None else block.text
        evidence = EvidenceSet([Evidence(block.id, base, block)])
        check = check_citation(text, eid, evidence, quote=quote, judge=self.judge)
        if check.fabricated:
            return "unsupported"
        claim = claimed if claimed in _RANK else "unsupported"
        return check.verdict if _RANK[check.verdict] <= _RANK[claim] else claim

    def paragraphs(self, answer: dict[str, Any]) -> list[Paragraph]:
        out = [self.sentence(s) for s in answer.get("sentences") or []]
        return [p for p in out if p is not None]

    def withheld(self) -> tuple[str, ...]:
        if not self.hidden:
            return ()
        return (withheld_notice("cited passage", self.hidden, self.dropped),)


def answer_document(
    answer: dict[str, Any], cited: CitedPassage, *, judge: Judge | None = None
) -> ExportDoc:
    """One answer (the public answer contract), re-checked, as an export document."""
    appendix = _Appendix(cited, judge)
    body = appendix.paragraphs(answer)
    notes = (
        f"Status: {answer.get('status')}"
        + (f" ({answer['reason']})" if answer.get("reason") else ""),
        appendix.check.note(),
    )
    share = appendix.check.supported / appendix.check.factual if appendix.check.factual else 0.0
    meta = (("Run", str(answer.get("run_id") or "")), ("Status", str(answer.get("status", ""))),
            ("Supported share (re-checked)", f"{share:.2f}"))  # fmt: skip
    return ExportDoc("answer", str(answer.get("question", "")), meta,
                     (DocSection("Answer", tuple(body), notes=notes),),
                     tuple(appendix.items.values()), appendix.withheld())  # fmt: skip


def thread_title(title: str, messages: Sequence[dict[str, Any]]) -> str:
    """The conversation's own name, or its first question when it was never named."""
    if title.strip() and title.strip() != UNTITLED_SESSION:
        return title.strip()
    first = next((" ".join(str(m.get("content", "")).split()) for m in messages
                  if m.get("role") == "user" and str(m.get("content", "")).strip()), "")  # fmt: skip
    if len(first) > MAX_TITLE:
        first = first[:MAX_TITLE].rsplit(" ", 1)[0] + "…"
    return first or "Chat thread"


def thread_document(title: str, session_id: str, messages: Sequence[dict[str, Any]],
                    cited: CitedPassage, *, judge: Judge | None = None) -> ExportDoc:  # fmt: skip
    """A chat thread: each question and its re-checked answer, one shared evidence appendix."""
    appendix = _Appendix(cited, judge)
    sections = []
    question = ""
    for m in messages:
        if m.get("role") == "user":
            question = str(m.get("content", ""))
            continue
        answer = (m.get("data") or {}).get("answer") if m.get("role") == "assistant" else None
        if not answer:
            continue
        body = appendix.paragraphs(answer)
        sections.append(DocSection(question or str(answer.get("question", "")), tuple(body),
                                   notes=(f"Status: {answer.get('status')}",)))  # fmt: skip
    meta = (("Chat session", session_id), ("Turns", str(len(sections))),
            ("Re-check", appendix.check.note()))  # fmt: skip
    return ExportDoc("chat", thread_title(title, messages), meta, tuple(sections),
                     tuple(appendix.items.values()), appendix.withheld())  # fmt: skip
