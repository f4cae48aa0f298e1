"""Issue #15, graph findings: a graph carries labels and ACL groups like a source (its model
calls are gated with its labels; callers outside its groups do not see it), and the library
graph copies only the sources a caller may read."""

from __future__ import annotations

from pathlib import Path

import pytest
from graph_films import FILMS

from footnote.config import GraphSettings
from footnote.errors import LicenceRefused
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.pipelines.graph.sources import NOBODY, library_graph
from footnote.store.graph.base import GraphSpec
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import Principal
from footnote.workspace import Workspace
from footnote.workspace.graph import principal_for


def _doc(tmp: Path, name: str, title: str) -> Path:
    p = tmp / f"{name}.md"
    p.write_text(f"# {title}\n\n## Method\n\nA paragraph of {title} long enough to be a block.\n")
    return p


def test_library_graph_copies_only_what_the_caller_may_read(tmp_path: Path) -> None:
    with Workspace.open(tmp_path / "ws") as ws:
        ws.ingest([_doc(tmp_path, "pub", "Public Paper")], index=False)
        ws.ingest([_doc(tmp_path, "a", "Team A Paper")], index=False, acl_groups=["team-a"],
                  labels=["no-external-model"])  # fmt: skip
        ws.ingest([_doc(tmp_path, "b", "Team B Secret")], index=False, acl_groups=["team-b"])
        alice = library_graph(ws.store, ("team-a", "user:alice"))
        everyone = library_graph(ws.store, ("user:carol",))
        operator = library_graph(ws.store, None)
    titles = sorted(p["title"] for p in alice.nodes["Paper"])
    assert titles == ["Public Paper", "Team A Paper"]
    assert "Team B Secret" not in str(alice.nodes) and "Team B Secret" not in str(alice.rels)
    assert alice.labels == ("no-external-model",) and alice.acl_groups == ("team-a",)
    assert [p["title"] for p in everyone.nodes["Paper"]] == ["Public Paper"]
    assert everyone.acl_groups == () and everyone.labels == ()
    assert len(operator.nodes["Paper"]) == 3 and operator.acl_groups == (NOBODY,)
    spec = alice.spec("lib-alice")
    assert spec.readable_by(("team-a",)) and not spec.readable_by(("team-b", "user:bob"))
    assert not operator.spec("lib").readable_by(("team-a", "team-b")) and operator.spec(
        "lib"
    ).readable_by(None)


def test_principal_from_groups() -> None:
    p = principal_for("alice", ("regions:US", "regions:CA", "team-a", "user:alice"))
    assert p.attributes == {"groups": ("regions:US", "regions:CA", "team-a", "user:alice"),
                            "regions": ("US", "CA"), "user": ("alice",)}  # fmt: skip
    assert not p.unrestricted and principal_for("root", None).unrestricted


async def test_model_calls_carry_the_graph_labels(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    labelled = GraphSpec.model_validate({**FILMS, "labels": ["no-external-model"]})
    films.spec = labelled
    try:
        external = RoleModel("cypher", FakeChatModel(["MATCH (f:Film) RETURN count(f) AS n"]),
                             ledger=Ledger(), external=True)  # fmt: skip
        cfg = GraphSettings(understand="rules", answer="template")
        p = GraphQAPipeline(GraphDeps(store=films, index=films_index, settings=cfg,
                                      cypher_model=external))  # fmt: skip
        assert p.labels == ("no-external-model",)
        events = [e async for e in p.run(GraphRequest("How many films are there in total?",
                                                      Principal(unrestricted=True)))]  # fmt: skip
        assert external.model.calls == []  # type: ignore[attr-defined]
        assert p.outcome.status == "refused"
        assert any(e.type == "error" and "LicenceRefused" in str(e) for e in events) or (
            "no-external-model" in p.outcome.reason
        )
    finally:
        films.spec = GraphSpec.model_validate(FILMS)
    with pytest.raises(LicenceRefused):
        external.complete([], labels=("no-external-model",))
