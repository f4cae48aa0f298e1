"""Exports (composition): a reviewed brief, an answer or a chat thread becomes an `ExportDoc`
with its evidence appendix (snapshot or document hash, fetch time), filtered for the
requesting user — a source they may not read (`readable_by`) or a restricted label
(`access.label_refusal` with `export.label_readers`) keeps its text out — then rendered. Every brief export is logged."""

from __future__ import annotations

from typing import Any

from footnote.access import label_refusal, readable_by
from footnote.errors import NotFound
from footnote.pipelines.export.answers import CitedPassage, answer_document, thread_document
from footnote.pipelines.export.document import (
    EvidenceItem,
    ExportDoc,
    Work,
    brief_document,
    public_location,
)
from footnote.pipelines.export.render import render
from footnote.pipelines.export.works import work_key
from footnote.pipelines.research.roles import readable_cards
from footnote.types import Block, EvidenceCard, Source
from footnote.workspace.core import Workspace
from footnote.workspace.research import research_store
from footnote.workspace.review import review_store, signed_brief


class _Works:
    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.by_origin: dict[str, Work] = {}

    def get(self, origin: str, **kw: Any) -> Work:
        if origin not in self.by_origin:
            key = work_key(str(kw.get("title", "")), kw.get("issued"), self.keys)
            self.by_origin[origin] = Work(key, **kw)
        return self.by_origin[origin]


def _source_work(works: _Works, source: Source) -> Work:
    kind = "article" if source.doi or source.arxiv_id else "document"
    return works.get(source.id, title=source.title, url=public_location(source.uri)[0],
                     doi=source.doi, arxiv_id=source.arxiv_id, authors=source.authors,
                     issued=source.published_at, kind=kind)  # fmt: skip


def _brief_doc(ws: Workspace, run_id: str, user_groups: tuple[str, ...] | None,
               version: int | None) -> ExportDoc:  # fmt: skip
    brief = signed_brief(ws, run_id, version)
    research, works = research_store(ws), _Works()
    readers = ws.settings.export.label_readers

    def source_of(card: EvidenceCard) -> Source | None:
        block = ws.store.get_block(card.block_id) if card.block_id else None
        record = ws.store.get_source(block.source_id) if block else None
        return record.source if record else None

    def provenance(card: EvidenceCard) -> tuple[str, str, Work | None]:
        snap = research.get_snapshot(card.snapshot_id) if card.snapshot_id else None
        if snap is not None:
            kind = "article" if snap.doi or snap.arxiv_id else "webpage"
            work = works.get(f"snap:{snap.canonical_url or snap.final_url}", title=snap.title or card.source_title,
                             url=snap.final_url, doi=snap.doi, arxiv_id=snap.arxiv_id,
                             issued=snap.published_at, kind=kind)  # fmt: skip
            return snap.fetched_at, snap.sha256, work
        source = source_of(card)
        if source is not None:
            return source.fetched_at or "", source.sha256, _source_work(works, source)
        return "", "", None

    def source_by_id(source_id: str) -> Source | None:
        record = ws.store.get_source(source_id)
        return record.source if record else None

    def readable(card: EvidenceCard) -> bool:  # the exporter's rule (`roles.readable_cards`)
        kept, _ = readable_cards([card], user_groups, source_by_id, readers)
        return bool(kept)

    return brief_document(brief, provenance, readable)


def export_brief(
    ws: Workspace, run_id: str, fmt: str, *, actor: str = "local",
    user_groups: tuple[str, ...] | None = None, version: int | None = None,
) -> tuple[bytes, ExportDoc]:  # fmt: skip
    """A brief (as reviewed now, or a signed `version`) in `fmt`; the export is logged."""
    doc = _brief_doc(ws, run_id, user_groups, version)
    out = render(doc, fmt)
    review_store(ws).append_action(run_id, actor, "export", fmt, {
        "version": version, "bytes": len(out), "withheld": list(doc.withheld),
        "evidence": len(doc.evidence)})  # fmt: skip
    return out, doc


def _cited(ws: Workspace, user_groups: tuple[str, ...] | None) -> CitedPassage:
    works, readers = _Works(), ws.settings.export.label_readers

    def cited(evidence_id: str) -> tuple[Block, EvidenceItem, bool] | None:
        """The stored block and its appendix entry: page, section and text all from the store."""
        block = ws.store.get_block(evidence_id.split("#", 1)[0])
        record = ws.store.get_source(block.source_id) if block else None
        if block is None or record is None:
            return None
        s = record.source
        where = " › ".join(block.section_path)
        locator = f"p. {block.page}" + (f", {where}" if where else "")
        url, file_name = public_location(s.uri)
        item = EvidenceItem(0, evidence_id, block.text[:400],
                            s.title or file_name, locator, url=url,
                            fetched_at=s.fetched_at or record.created_at, content_hash=s.sha256,
                            published_at=s.published_at, labels=s.labels,
                            work=_source_work(works, s), file_name=file_name)  # fmt: skip
        ok = readable_by(s, user_groups) and (
            label_refusal(s.labels, user_groups, s.acl_groups, readers) is None
        )
        return block, item, ok

    return cited


def export_answer(ws: Workspace, answer: dict[str, Any], fmt: str, *,
                  user_groups: tuple[str, ...] | None = None) -> tuple[bytes, ExportDoc]:  # fmt: skip
    """An answer (the public answer contract) in `fmt`, re-checked against the library first
    (`pipelines.export.answers`): a file's sentences, quotes and verdicts are not trusted."""
    doc = answer_document(answer, _cited(ws, user_groups))
    return render(doc, fmt), doc


def export_thread(ws: Workspace, user_id: str, session_id: str, fmt: str, *,
                  user_groups: tuple[str, ...] | None = None,
                  message_id: str | None = None) -> tuple[bytes, ExportDoc]:  # fmt: skip
    """A chat thread (or one answer of it, `message_id`) in `fmt`."""
    session = ws.chats.get_session(user_id, session_id)
    if session is None:
        raise NotFound(f"no chat session {session_id!r}")
    messages = [m.to_dict() for m in ws.chats.messages(user_id, session_id)]
    if message_id is not None:
        found = next((m for m in messages if m["id"] == message_id), None)
        if found is None or not (found.get("data") or {}).get("answer"):
            raise NotFound(f"no answer {message_id!r} in this session")
        return export_answer(ws, found["data"]["answer"], fmt, user_groups=user_groups)
    doc = thread_document(session.title, session_id, messages, _cited(ws, user_groups))
    return render(doc, fmt), doc
