"""`retrieval.rerank` (issue 13, finding 9): documented but never read (no reranker was ever
composed). Now the workspace composes one from the `rerank` role, else the `judge` role, and
the setting reorders the hits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from footnote.models.base import Message
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.rerank import model_reranker
from footnote.models.roles import RoleModel
from footnote.types import Hit
from footnote.workspace import Workspace

DOC = (
    "# Study\n\nGlacier retreat was measured with drones over glacier fields.\n\n"
    "Glacier retreat: the answer is 41 metres per year at the alpha site.\n"
)
REMOTE = "openai+http://127.0.0.1:9/v1?model=judge"


def open_ws(tmp: Path, rerank: bool) -> Workspace:
    overrides = {"models": {"embed": {"url": "local:wordllama"}, "judge": {"url": REMOTE}},
                 "retrieval": {"rerank": rerank}}  # fmt: skip
    return Workspace.open(tmp / ("on" if rerank else "off"), overrides=overrides)


def test_the_setting_composes_a_reranker_from_the_judge_role(tmp_path: Path) -> None:
    on, off = open_ws(tmp_path, True), open_ws(tmp_path, False)
    assert on.searcher.reranker is not None and off.searcher.reranker is None
    on.close()
    off.close()


def test_rerank_reorders_hits_by_the_models_yes(tmp_path: Path) -> None:
    ws = Workspace.open(
        tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}}
    )
    (tmp_path / "s.md").write_text(DOC)
    assert not ws.ingest([tmp_path / "s.md"]).failed

    def judge(messages: Sequence[Message]) -> str:
        return "Yes" if "41 metres" in messages[-1].content else "No"

    model = RoleModel("judge", FakeChatModel(judge), ledger=Ledger(), external=False)  # type: ignore[arg-type]
    plain = ws.searcher.search("glacier retreat glacier drones", k=2)
    assert "drones" in plain[0].block.text
    ws.searcher.reranker = model_reranker(model)
    ws.searcher.settings = ws.settings.retrieval.model_copy(update={"rerank": True})
    reranked = ws.searcher.search("glacier retreat glacier drones", k=2)
    assert "41 metres" in reranked[0].block.text and reranked[0].scores["rerank"] == 1.0
    ws.close()


def test_an_external_reranker_never_sees_labelled_hits_and_says_so(tmp_path: Path) -> None:
    """Issue 31, finding 13: one `no-external-model` candidate refused the whole search after
    the unlabelled ones were already sent. Labelled hits are left out of the external calls,
    keep their fused place and are marked `rerank_withheld`."""
    ws = Workspace.open(
        tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}}
    )
    (tmp_path / "s.md").write_text(DOC)
    (tmp_path / "l.md").write_text("# Licensed\n\nGlacier retreat at the LICENSEDSITE: 9 m.\n")
    assert not ws.ingest([tmp_path / "s.md"]).failed
    assert not ws.ingest([tmp_path / "l.md"], labels=["no-external-model"]).failed
    sent: list[str] = []

    def judge(messages: Sequence[Message]) -> str:
        sent.append(messages[-1].content)
        return "Yes" if "41 metres" in messages[-1].content else "No"

    model = RoleModel("rerank", FakeChatModel(judge), ledger=Ledger(), external=True)  # type: ignore[arg-type]

    def labels_of(hit: Hit) -> tuple[str, ...]:
        record = ws.store.get_source(hit.block.source_id)
        return record.source.labels if record else ()

    ws.searcher.reranker = model_reranker(model, labels_of)
    ws.searcher.settings = ws.settings.retrieval.model_copy(update={"rerank": True})
    hits = ws.searcher.search("glacier retreat", k=3)
    licensed = [h for h in hits if "LICENSEDSITE" in h.block.text]
    assert licensed and licensed[0].scores["rerank_withheld"] == 1.0
    assert "rerank" not in licensed[0].scores
    assert sent and not any("LICENSEDSITE" in s for s in sent)
    assert "41 metres" in hits[0].block.text
    ws.close()
