"""The research pipeline end to end on the fixture web (real HTTP on loopback, real SQLite),
with scripted models behind the real RoleModel: budgets that fire, wrap-up, resume after a
crash, citations bound to chapters, numbers checked, no network during synthesis, the licence
gate. Nothing here needs the embedded models."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from research_support import (
    MARKET_Q,
    cards_in,
    collect,
    of_type,
    open_ws,
    parts,
    role,
    web_settings,
    writer_script,
)

from footnote.errors import UsageError
from footnote.eval.fixture_web import FixtureWeb
from footnote.models.base import Message
from footnote.models.ledger import Ledger
from footnote.pipelines.research.models import ResearchModels
from footnote.serialize import brief_to_dict, to_plain
from footnote.verify import overlap
from footnote.workspace import Workspace
from footnote.workspace.research import (
    ResearchParts,
    confirm_outline,
    research_store,
    start_research,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/pgtest.py
from pgtest import fresh_database

pytestmark = pytest.mark.integration


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str:
    """The store a test runs on: the embedded SQLite, then PostgreSQL + pgvector."""
    return fresh_database() if request.param == "postgres" else ""


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def started(ws, question=MARKET_Q, keep=None, **kw):  # type: ignore[no-untyped-def]
    run_id, outline = start_research(ws, question, **kw)
    edits = None
    if keep is not None:
        edits = {"items": [to_plain(i) for i in outline.items if i.id in keep]}
    confirm_outline(ws, run_id, edits)
    return run_id


def test_outline_must_be_confirmed_before_any_search(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web)
    run_id, outline = start_research(ws, MARKET_Q)
    assert outline.template == "market_size" and len(outline.items) == 6
    before = len(web.requests)
    with pytest.raises(UsageError, match="not been confirmed"):
        collect(ws, run_id)
    assert len(web.requests) == before  # nothing was searched or fetched
    assert research_store(ws).get_research(run_id).state == "outline_proposed"


def test_brief_end_to_end_with_a_model_writer(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web)
    writer = role("compose", writer_script())
    run_id = started(ws, keep=("size", "growth"))
    events = collect(ws, run_id, parts(writer=writer))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["outline", "plan"] and kinds[-1] == "brief"
    assert kinds.index("subquestion_start") < kinds.index("card") < kinds.index("draft")
    brief = events[-1].brief
    data = brief_to_dict(brief)
    cards = {c["id"]: c for c in data["cards"]}
    claims = [c for s in data["sections"] for c in s["claims"]]
    assert claims and all(c["verdict"] in ("supported", "weak") for c in claims)
    for s in data["sections"]:
        for c in s["claims"]:
            assert set(c["card_ids"]) <= set(s["bound_cards"])  # chapter-bound citations only
            for cite in c["citations"]:
                card = cards[cite["id"]]
                assert cite["snippets"] == [card["snippet"]]
                snap = research_store(ws).get_snapshot(card["snapshot_id"])
                a, b = card["span"]
                assert snap is not None and snap.text[a:b] == card["snippet"]  # exact span
    # the scorer's shape: sections with text and citations {id, snippets, title, metadata}
    assert {"title", "text", "citations"} <= set(data["sections"][0])
    # the market-size conflict is side by side, not averaged
    (conflict,) = [c for c in brief.conflicts if "USD" in c.metric]
    assert {v.text for v in conflict.values} == {"USD 1.2 billion", "USD 950 million"}
    assert all(v.scope for v in conflict.values)
    assert research_store(ws).get_research(run_id).state == "completed"
    stages = {k for k in ("plan", "merge", "conflicts", "checklist", "brief")
              if research_store(ws).artifacts(run_id, k)}  # fmt: skip
    assert stages == {"plan", "merge", "conflicts", "checklist", "brief"}


def test_a_card_outside_the_chapter_is_fabricated_and_a_changed_number_dropped(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web)

    def mutate(label: str, snippet: str) -> tuple[str, list[str]]:
        if label == "C1":
            return snippet, ["C99"]  # a label that was never shown
        return snippet.rstrip(".") + ", up 37% on 2019.", [label]  # figures no card states

    run_id = started(ws, keep=("size",))
    events = collect(ws, run_id, parts(writer=role("compose", writer_script(mutate))))
    checks = of_type(events, "check")
    dropped = [c for c in checks if not c.kept]
    assert len(dropped) >= 2
    assert any("was not among the evidence given" in " ".join(c.reasons.values()) for c in dropped)
    assert any("not in the cited text" in " ".join(c.reasons.values()) for c in dropped)
    stored = research_store(ws).get_artifact(run_id, "checks", "size")
    assert stored is not None and stored["fabricated"] >= 1
    brief = events[-1].brief
    texts = [c.text for s in brief.sections for c in s.claims]
    assert not any("37%" in t for t in texts)


@pytest.mark.parametrize(
    "limits, reason",
    [
        ({"budget_searches": 3}, "budget_searches"),
        ({"budget_fetches": 2}, "budget_fetches"),
    ],
)
def test_search_and_fetch_limits_fire(
    tmp_path: Path, web: FixtureWeb, limits: dict[str, int], reason: str
) -> None:
    ws = open_ws(tmp_path / "ws", web, **limits)
    run_id = started(ws, keep=("size", "growth"))
    events = collect(ws, run_id)
    stops = of_type(events, "subquestion_stop")
    assert reason in {s.stop_reason for s in stops}
    used = events[-1].brief.budget_used
    key = "searches" if reason == "budget_searches" else "fetches"
    assert used[key] <= limits[f"budget_{key}"]  # never over the run's limit


def test_token_limit_fires_and_the_run_wraps_up(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, select="model", wrap_up_fraction=0.5)
    # each selection costs its prompt plus a 400-token reply (over the 160 asked, so past the
    # estimate made before the call): a few of them spend the run's budget
    select = role(
        "understand", lambda _m: json.dumps({"relevant": ["C1", "C2"], "why": "x " * 400})
    )
    run_id, _ = start_research(ws, MARKET_Q, budget_tokens=6000)
    confirm_outline(ws, run_id)
    events = collect(ws, run_id, parts(select=select, writer=role("compose", writer_script())))
    stops = of_type(events, "subquestion_stop")
    reasons = [s.stop_reason for s in stops]
    assert set(reasons) <= {"done", "budget_tokens"} and reasons[-1] == "budget_tokens"
    assert reasons.count("budget_tokens") >= 3  # the sub-tasks' and then the run's limit
    # the checklist is written first, then chapters from the cards' own sentences
    kinds = [e.type for e in events]
    first_checklist = kinds.index("checklist")
    assert of_type(events, "checklist")[0].wrapped_up and first_checklist < kinds.index("draft")
    assert {d.writer for d in of_type(events, "draft")} <= {"extractive", "none"}
    brief = events[-1].brief
    assert brief.wrapped_up and brief.not_covered
    assert research_store(ws).get_research(run_id).state == "wrapped_up"
    warn = [t for t in of_type(events, "budget") if t.warning]
    assert warn, "a warning event at 80 % of a budget"


def test_time_limit_fires(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, select="model")
    clock = {"t": 0.0}

    def slow_select(_messages: object) -> str:
        clock["t"] += 400.0  # each call takes 400 s of the run's 10 minutes
        return json.dumps({"relevant": ["C1"]})

    run_id, _ = start_research(ws, MARKET_Q, budget_minutes=10)
    confirm_outline(ws, run_id)
    from footnote.workspace import research as wr

    events_parts = parts(select=role("understand", slow_select))
    original = wr.ResearchDeps
    try:
        wr.ResearchDeps = lambda **kw: original(**kw, clock=lambda: clock["t"])  # type: ignore[misc]
        events = collect(ws, run_id, events_parts)
    finally:
        wr.ResearchDeps = original  # type: ignore[misc]
    reasons = [s.stop_reason for s in of_type(events, "subquestion_stop")]
    assert "budget_time" in reasons
    assert events[-1].brief.wrapped_up


def test_resume_after_a_crash_redoes_nothing(
    tmp_path: Path, web: FixtureWeb, store_url: str
) -> None:
    ws = Workspace.open(
        tmp_path / "ws", overrides={**web_settings(web), "store": {"url": store_url}}
    )

    def crash(_messages: object) -> str:
        raise RuntimeError("the writer process died")

    run_id = started(ws, keep=("size", "growth"))
    with pytest.raises(RuntimeError, match="died"):
        collect(ws, run_id, ResearchParts(models=ResearchModels(writer=role("compose", crash))))
    store = research_store(ws)
    assert store.get_research(run_id).state == "failed"
    assert len(store.artifacts(run_id, "investigate")) == 2 and store.cards(run_id)
    requests = len(web.requests)
    events = collect(ws, run_id, parts(writer=role("compose", writer_script())))
    assert len(web.requests) == requests  # no search or fetch repeated
    assert not of_type(events, "subquestion_start")
    assert events[-1].type == "brief" and store.get_research(run_id).state == "completed"


def test_synthesis_has_no_network(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web)
    captured = {}
    holder: dict[str, ResearchParts] = {}

    def writer(messages: object) -> str:
        from footnote.models.budget import Budget
        from footnote.pipelines.research.sources import SourceLog

        log = SourceLog()
        sources = holder["sources"]
        got = sources.fetch(
            f"http://vepd.example:{web.port}/notices/2024/epr-batteries-faq.html", Budget(), log
        )  # type: ignore[attr-defined]
        captured["fetch"], captured["refused"] = got, log.refused
        return writer_script()(messages)  # type: ignore[arg-type]

    from footnote.workspace import research as wr

    original = wr.Sources

    def spy(**kw: object) -> object:
        s = original(**kw)  # type: ignore[arg-type]
        holder["sources"] = s  # type: ignore[assignment]
        return s

    run_id = started(ws, keep=("size",))
    try:
        wr.Sources = spy  # type: ignore[misc,assignment]
        collect(ws, run_id, parts(writer=role("compose", writer)))
    finally:
        wr.Sources = original  # type: ignore[misc]
    assert captured["fetch"] is None
    assert "no network access" in " ".join(captured["refused"])


def test_reprints_are_never_independent(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, fetches_per_search=8)
    run_id = started(
        ws, "Who are the main battery recycling companies in Veldmark?", keep=("leaders", "recent")
    )
    events = collect(ws, run_id)
    merge = research_store(ws).get_artifact(run_id, "merge")
    assert merge is not None
    (group,) = [d for d in merge["decisions"] if len(d["members"]) >= 3]  # the Korvath story
    assert group["decided_by"] == "code" and group["origin"]
    statuses = {merge["independence"][m] for m in group["members"] if m != group["origin"]}
    assert statuses == {"same_origin"}
    brief = events[-1].brief
    origin_cards = [c for c in brief.cards if c.source_id in group["members"]]
    assert all(
        c.independence != "independent" for c in origin_cards if c.source_id != group["origin"]
    )


def test_licence_gate_on_licensed_text(
    tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api_servers import LICENSED, ApiServer, json_route

    srv = ApiServer({"/search": json_route(LICENSED)})
    monkeypatch.setenv("LIC_KEY", "k")
    try:
        ws = open_ws(
            tmp_path / "ws",
            web,
            licensed_url=srv.base,
            licensed_api_key_env="LIC_KEY",
            search_url="",
        )  # the licensed database is the only source
        question = "How much did Korvath process? Korvath recycling tonnes"
        ledger = Ledger()
        external = role("compose", writer_script(), external=True, ledger=ledger)
        run_id = started(ws, question, template="players", keep=("capacity",))
        events = collect(ws, run_id, parts(writer=external))
        brief = events[-1].brief
        licensed = [c for c in brief.cards if "no-external-model" in c.labels]
        assert licensed, "the licensed record became a card with its label"
        assert not [r for r in ledger.records() if r.role == "compose"]  # never sent out
        (section,) = brief.sections
        assert any("LicenceRefused" in n for n in section.notes)
        # with reroute allowed, the local model writes instead
        local = role("compose", writer_script())
        rerouted = role(
            "compose", writer_script(), external=True, ledger=ledger, reroute=lambda: local.model
        )
        run2 = started(ws, question, template="players", keep=("capacity",))
        events2 = collect(ws, run2, parts(writer=rerouted))
        notes = [r.note for r in ledger.records() if r.role == "compose"]
        assert events2[-1].brief.sections[0].claims
        assert notes and all("rerouted" in n for n in notes)
    finally:
        srv.stop()


def test_scholarly_sources_with_open_access_pdfs_where_the_licence_allows(
    tmp_path: Path, web: FixtureWeb
) -> None:
    import sys

    from api_servers import ARXIV, OPENALEX, ApiServer, json_route

    sys.path.insert(0, str(Path(__file__).parents[1] / "data"))
    from make_pdfs import two_column

    pdf = two_column(tmp_path / "paper.pdf", pages=1).read_bytes()
    openalex = json.loads(json.dumps(OPENALEX))
    openalex["results"][0]["best_oa_location"]["license"] = "cc-by-nc-nd"  # not allowed by default
    srv = ApiServer({
        "/open.pdf": lambda _p, _h: (200, "application/pdf", pdf, {}),
        "/closed.pdf": lambda _p, _h: (200, "application/pdf", pdf, {}),
    })  # type: ignore[dict-item]  # fmt: skip
    host = f"http://papers.example:{srv.port}"
    srv.routes["/works"] = json_route(openalex, f"{host}/closed.pdf")
    srv.routes["/api/query"] = lambda _p, _h: (
        200,
        "application/atom+xml",
        ARXIV.replace("PDFURL", f"{host}/open.pdf"),
        {},
    )  # type: ignore[assignment]
    try:
        ws = open_ws(
            tmp_path / "ws",
            web,
            search_url="",
            scholarly=[f"openalex+{srv.base}", f"arxiv+{srv.base}"],
            resolve={"*.example": "127.0.0.1"},
        )
        run_id = started(ws, "How do citation-informed transformers learn document representations?",
                         template="literature_review", keep=("methods",))  # fmt: skip
        for item in research_store(ws).get_artifact(run_id, "outline")["items"]:
            assert item["standard"]["web"] is False  # a literature review stays in the library…
        edits = {"items": [{**research_store(ws).get_artifact(run_id, "outline")["items"][0],
                            "standard": {"web": True, "min_independent": 1}}]}  # fmt: skip
        confirm_outline(ws, run_id, edits)  # …unless the analyst allows outside sources
        events = collect(ws, run_id)
        stop = of_type(events, "subquestion_stop")[0]
        fetched = [path for path, _params, _headers in srv.seen if path.endswith(".pdf")]
        assert "/open.pdf" in fetched and "/closed.pdf" not in fetched
        assert any("cc-by-nc-nd not in research.pdf_licences" in r for r in stop.refused)
        origins = {
            research_store(ws).get_snapshot(c.snapshot_id).origin
            for c in events[-1].brief.cards
            if c.snapshot_id
        }  # type: ignore[union-attr]
        assert origins & {"openalex", "arxiv", "web"}
    finally:
        srv.stop()


def test_call_limit_fires(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, select="model", budget_calls=8)
    select = role("understand", lambda _m: json.dumps({"relevant": ["C1"]}))
    run_id = started(ws)
    events = collect(ws, run_id, parts(select=select))
    reasons = {s.stop_reason for s in of_type(events, "subquestion_stop")}
    assert "budget_calls" in reasons
    assert events[-1].brief.budget_used["calls"] <= 8


NONSENSE = [
    "amber", "badger", "cobalt", "dune", "ember", "falcon", "garnet", "harbor", "indigo",
    "juniper", "kestrel", "lagoon", "marble", "nectar", "onyx", "pebble", "quartz", "raven",
    "saffron", "thistle", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr", "acorn",
    "bramble", "cinder", "drizzle",
]  # fmt: skip


def lies() -> Iterator[str]:
    """Distinct false sentences (no two share most of their words, so none is dropped as a
    repeat of another)."""
    n = len(NONSENSE)
    for i in range(n):
        a, b, c, d = (NONSENSE[(i + k) % n] for k in (0, 7, 13, 19))
        yield f"{a.title()} {b} {c} {d} owns 93%."


def test_a_draft_with_nothing_true_falls_back_to_the_cards_sentences(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web)

    told = lies()

    def lie_about_every_card(messages: Sequence[Message]) -> str:
        return json.dumps({"claims": [{"text": next(told), "cards": [label]}
                                      for label, _ in cards_in(messages)]})  # fmt: skip

    run_id = started(ws, keep=("growth",))
    events = collect(ws, run_id, parts(writer=role("compose", lie_about_every_card)))
    (section,) = events[-1].brief.sections
    assert section.claims and not any("93%" in c.text for c in section.claims)
    assert any("no sentence of the model's draft passed" in n for n in section.notes), section.notes
    assert [e for e in of_type(events, "check") if not e.kept]  # the lies are reported as dropped


def test_a_card_whose_model_sentence_fails_the_checks_is_stated_in_its_own_sentence(
    tmp_path: Path, web: FixtureWeb
) -> None:
    """The writer lies about the first two cards it is shown and says nothing of the others:
    the lies are dropped, and every card of the chapter is still stated by a kept claim."""
    ws = open_ws(tmp_path / "ws", web)
    told = lies()
    liar = role("compose", writer_script(lambda label, _s: (next(told), [label])))
    run_id = started(ws, keep=("growth",))
    events = collect(ws, run_id, parts(writer=liar))
    (section,) = events[-1].brief.sections
    assert not any("93%" in c.text for c in section.claims)
    stated = {i for c in section.claims for i in c.card_ids}
    cards = {c.id: c for c in events[-1].brief.cards}
    unstated = [i for i in section.bound_cards if i not in stated]
    assert len(section.bound_cards) > 2 and len(unstated) < len(section.bound_cards) / 4
    for i in unstated:  # only a card whose sentence a kept claim repeats (a reprint)
        assert any(overlap(cards[i].claim, c.text) > 0.8 for c in section.claims), cards[i].claim
    assert any("card(s) whose model-written sentences failed the checks" in n
               for n in section.notes), section.notes  # fmt: skip
    assert any("written as their own sentences: the writer left them out" in n
               for n in section.notes)  # fmt: skip
    ids = [c.id for c in section.claims]
    assert len(ids) == len(set(ids))
    assert len([e for e in of_type(events, "check") if not e.kept]) >= 2


def test_library_evidence_respects_the_users_acl(
    tmp_path: Path, web: FixtureWeb, store_url: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "public.md").write_text(
        "# Public\n\nThe public report says the recycling market grew by 11% in 2023.\n"
    )
    (docs / "secret.md").write_text(
        "# Secret\n\nThe confidential memo says the recycling market grew by 19% in 2023.\n"
    )
    overrides = web_settings(web, search_url="")
    overrides["models"]["embed"] = {"url": "local:wordllama"}
    if store_url:
        overrides["store"] = {"url": store_url}
    ws2 = Workspace.open(tmp_path / "ws", overrides=overrides)
    ws2.ingest([docs / "public.md"])
    ws2.ingest([docs / "secret.md"], acl_groups=("board",))
    for groups, visible in [(("staff",), {"11%"}), (("board",), {"11%", "19%"})]:
        run_id, _ = start_research(
            ws2,
            "How fast did the recycling market grow?",
            template="market_size",
            user_groups=groups,
        )
        outline = research_store(ws2).get_artifact(run_id, "outline")
        confirm_outline(
            ws2, run_id, {"items": [i for i in outline["items"] if i["id"] == "growth"]}
        )
        snippets = " ".join(c.snippet for c in collect(ws2, run_id)[-1].brief.cards)
        assert {p for p in ("11%", "19%") if p in snippets} == visible


def test_dependent_items_wait_for_what_they_depend_on(tmp_path: Path, web: FixtureWeb) -> None:
    ws = open_ws(tmp_path / "ws", web, parallel=3)
    run_id, outline = start_research(ws, MARKET_Q)
    items = [to_plain(i) for i in outline.items if i.id in ("size", "growth", "conflicts")]
    items[0]["depends_on"] = ["conflicts"]  # size after conflicts
    confirm_outline(ws, run_id, {"items": items})
    order = [(e.type, getattr(e, "sub_question_id", None) or e.sub_question.id)
             for e in collect(ws, run_id) if e.type in ("subquestion_start", "subquestion_stop")]  # fmt: skip
    assert order.index(("subquestion_stop", "sq-conflicts")) < order.index(
        ("subquestion_start", "sq-size")
    )
    assert order.index(("subquestion_start", "sq-growth")) < order.index(
        ("subquestion_stop", "sq-conflicts")
    )
