"""Ask answers and chat threads as export documents: each sentence with its citations, the
cited passages in the evidence appendix; passages a user may not read are withheld."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from footnote.pipelines.export.document import (
    DocSection,
    EvidenceItem,
    ExportDoc,
    Paragraph,
    withheld_notice,
)

CitedPassage = Callable[[str, dict[str, Any]], tuple[EvidenceItem, bool] | None]
"""`(evidence id, citation) -> (appendix entry without its ref, readable by the user)`, or None
when the passage no longer exists."""


class _Appendix:
    def __init__(self, cited: CitedPassage) -> None:
        self.cited = cited
        self.items: dict[str, EvidenceItem] = {}
        self.hidden: dict[str, tuple[str, ...]] = {}
        self.dropped = 0

    def refs(self, citations: Sequence[dict[str, Any]]) -> tuple[int, ...] | None:
        """The refs of a sentence's citations; None when one of them is withheld."""
        out = []
        for c in citations:
            eid = str(c.get("id", ""))
            if eid in self.hidden:
                return None
            if eid not in self.items:
                found = self.cited(eid, c)
                if found is None:
                    continue
                item, readable = found
                if not readable:
                    self.hidden[eid] = item.labels
                    return None
                self.items[eid] = replace(item, ref=len(self.items) + 1)
            out.append(self.items[eid].ref)
        return tuple(out)

    def paragraphs(self, answer: dict[str, Any]) -> list[Paragraph]:
        out = []
        for s in answer.get("sentences") or []:
            refs = self.refs(s.get("citations") or [])
            if refs is None:
                self.dropped += 1
                continue
            flags = ("not enough evidence",) if s.get("insufficient") else ()
            out.append(Paragraph(str(s.get("text", "")), refs, flags))
        return out

    def withheld(self) -> tuple[str, ...]:
        if not self.hidden:
            return ()
        return (withheld_notice("cited passage", self.hidden, self.dropped),)


def answer_document(answer: dict[str, Any], cited: CitedPassage) -> ExportDoc:
    """One answer (the public answer contract) as an export document."""
    appendix = _Appendix(cited)
    body = appendix.paragraphs(answer)
    notes = (
        f"Status: {answer.get('status')}"
        + (f" ({answer['reason']})" if answer.get("reason") else ""),
    )
    meta = (("Run", str(answer.get("run_id") or "")), ("Status", str(answer.get("status", ""))),
            ("Support score", f"{float(answer.get('support_score') or 0):.2f}"))  # fmt: skip
    return ExportDoc("answer", str(answer.get("question", "")), meta,
                     (DocSection("Answer", tuple(body), notes=notes),),
                     tuple(appendix.items.values()), appendix.withheld())  # fmt: skip


def thread_document(title: str, session_id: str, messages: Sequence[dict[str, Any]],
                    cited: CitedPassage) -> ExportDoc:  # fmt: skip
    """A chat thread: each question and its checked answer, one shared evidence appendix."""
    appendix = _Appendix(cited)
    sections = []
    question = ""
    for m in messages:
        if m.get("role") == "user":
            question = str(m.get("content", ""))
            continue
        answer = (m.get("data") or {}).get("answer")
        if not answer:
            continue
        body = appendix.paragraphs(answer)
        sections.append(DocSection(question or str(answer.get("question", "")), tuple(body),
                                   notes=(f"Status: {answer.get('status')}",)))  # fmt: skip
    meta = (("Chat session", session_id), ("Turns", str(len(sections))))
    return ExportDoc("chat", title or "Chat thread", meta, tuple(sections),
                     tuple(appendix.items.values()), appendix.withheld())  # fmt: skip
