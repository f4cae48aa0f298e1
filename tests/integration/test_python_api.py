"""The public Python API (`footnote.open`) on a real workspace: ingest, search, read, ask
(sync, async, event iterators), chat, graph questions and per-caller scoping."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from live import CONFIG, PAPER, SECRET, add_films

import footnote
from footnote.errors import NotFound, UsageError
from footnote.events import Final, Retrieval
from footnote.serialize import to_plain
from footnote.workspace.api import AskResult, Library, ResearchResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pgtest.py
from pgtest import fresh_database

pytestmark = pytest.mark.integration
QUESTION = "What recall@10 did hybrid retrieval reach?"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def folder(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The workspace on the embedded store, and on PostgreSQL + pgvector (the same tests: the
    pipelines run unchanged on either backend)."""
    root = tmp_path_factory.mktemp("api")
    (root / "ws").mkdir()
    store = ""
    if request.param == "postgres":
        store = f'[store]\nurl = "{fresh_database()}"\n\n'
    (root / "ws" / "config.toml").write_text(store + CONFIG, encoding="utf-8")
    (root / "study.md").write_text(PAPER, encoding="utf-8")
    (root / "memo.md").write_text(SECRET, encoding="utf-8")
    with footnote.open(root / "ws") as lib:
        assert lib.workspace.settings.store_url.startswith(request.param)
        assert [r.outcome for r in lib.ingest([root / "study.md"]).results] == ["added"]
        assert lib.ingest([root / "memo.md"], acl_groups=["staff"]).failed == []
    return root


def test_open_search_read_and_ask(folder: Path) -> None:
    with footnote.open(folder / "ws") as lib:
        assert isinstance(lib, Library)
        titles = sorted(s.title for s in lib.sources())
        assert titles == ["Internal memo", "Retrieval study"]
        hits = lib.search("recall@10 hybrid retrieval", k=3)
        assert "0.74" in hits[0].block.text
        block = lib.block(hits[0].block.id)
        assert block.section_path[-1] == "Results"
        section = lib.section(block.source_id, "method")
        assert [b.kind for b in section] == ["heading", "paragraph"]
        result = lib.ask(QUESTION)
        assert isinstance(result, AskResult) and result.status == "answered"
        assert "0.74" in result.text and result.support_score > 0
        assert result.answer.evidence_board[0].verdict == "supported"
        assert result.to_dict()["run_id"] == result.run_id
        run = lib.workspace.runs.get_run(result.run_id or "")
        assert run is not None and run["status"] == "answered"
        events = list(lib.stream(QUESTION, sources=[block.source_id]))
        assert isinstance(events[-2], Final) and events[-1].type == "done"
        assert any(isinstance(e, Retrieval) for e in events)


async def test_async_iterator_of_events(folder: Path) -> None:
    with footnote.open(folder / "ws") as lib:
        kinds = [e.type async for e in lib.ask_events(QUESTION)]
        assert kinds[-2:] == ["final", "done"] and "retrieval" in kinds
        result = await lib.aask("How many annotated papers are in the corpus?")
        assert "1,213" in result.text


def test_a_conversation_is_stored_and_resumable(folder: Path) -> None:
    with footnote.open(folder / "ws") as lib:
        conv = lib.chat(title="api test")
        first = conv.send(QUESTION)
        assert "0.74" in first.text and first.run_id
        second = conv.send("How many annotated papers does the corpus contain?")
        assert "1,213" in second.text
        assert [m.role for m in conv.messages()] == ["user", "assistant"] * 2
        again = lib.chat(conv.id)
        assert len(again.messages()) == 4
        assert conv.id in {s.id for s in lib.conversations()}
        with pytest.raises(NotFound):
            lib.chat("ses_nope")


def test_callers_see_only_what_their_groups_allow(folder: Path) -> None:
    with footnote.open(folder / "ws", user_id="bob", groups=[]) as bob:
        assert [s.title for s in bob.sources()] == ["Retrieval study"]
        memo_id = next(
            r.source.id for r in bob.workspace.store.list_sources() if r.source.acl_groups
        )
        with pytest.raises(NotFound):
            bob.source(memo_id)
        assert all(h.block.source_id != memo_id for h in bob.search("internal project budget"))
        answer = bob.ask("What was the internal project budget?")
        assert "48,000" not in answer.text
        staff = bob.as_user(type(bob.user)("alice", ("staff",)))
        assert "48,000" in staff.ask("What was the internal project budget?").text
        assert bob.conversations() == [] or all(s.user_id == "bob" for s in bob.conversations())


def test_graph_questions(folder: Path) -> None:
    with footnote.open(folder / "ws") as lib:
        add_films(lib.workspace)
        assert lib.graphs() == ["films"]
        out = lib.graph_ask("films", "When was Ada Stone born?")
        assert out["status"] == "answered" and out["intent"] == "person_born"
        assert "1970" in out["answer"] and out["cypher"].startswith("MATCH")
        assert out["rows"] == [{"name": "Ada Stone", "born": 1970}]


RESEARCH_Q = "How well did hybrid retrieval perform, and what was the internal project budget?"


def test_research_briefs_as_each_caller_may_read_them(folder: Path) -> None:
    with footnote.open(folder / "ws", user_id="alice", groups=["staff"]) as alice:
        run_id, outline = alice.research_outline(
            RESEARCH_Q, template="literature_review", web=False
        )
        assert outline.items and not outline.confirmed
        first = outline.items[0]
        result = alice.research(
            run_id=run_id, outline={"items": [{**to_plain(first), "title": "Findings"}]}
        )
        assert isinstance(result, ResearchResult) and result.run_id == run_id
        (section,) = result.brief.sections
        texts = " ".join(c.text for c in section.claims)
        assert section.title == "Findings" and "0.74" in texts and "48,000" in texts
        cards = {c.id for c in result.brief.cards}
        assert all(set(c.card_ids) <= cards for c in section.claims)
        data = result.to_dict()
        assert data["sections"][0]["claims"] and data["withheld"] == []
        assert "## Findings" in result.markdown
        kinds = {e.type for e in alice.workspace.events.events(run_id)}
        assert {"outline", "plan", "card", "brief"} <= kinds  # the run's events are stored
        # the exporter's view: bob never sees alice's run; an admin reading it without the
        # staff group gets the memo's card withheld, and told so
        bob = alice.as_user(type(alice.user)("bob", ()))
        with pytest.raises(NotFound):
            bob.brief(run_id)
        outsider = alice.as_user(type(alice.user)("alice", ("sales",)))
        view = outsider.brief(run_id)
        assert "48,000" not in json.dumps(view.to_dict())
        assert any("not readable" in w.reason for w in view.withheld)
        assert "0.74" in " ".join(c.text for s in view.brief.sections for c in s.claims)
    with footnote.open(folder / "ws", user_id="bob", groups=[]) as bob2:
        own = bob2.research(RESEARCH_Q, template="literature_review", web=False)
        assert "48,000" not in json.dumps(own.to_dict())  # the run itself never read the memo
        with pytest.raises(UsageError):
            bob2.research()


async def test_research_async(folder: Path) -> None:
    with footnote.open(folder / "ws") as lib:
        result = await lib.aresearch(RESEARCH_Q, template="literature_review", web=False)
        assert result.brief.sections and result.brief.run_id == result.run_id
