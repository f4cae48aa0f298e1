"""A planner that reads (#32): the `understand` model proposes the outline for a free question,
each sub-question loops search → read → what is still missing → next query, independent
sub-questions run at the same time and a dependent one waits for, and reads, what it needs.
The model is scripted behind the real RoleModel; the web is the fixture web on loopback and the
workspace is a real SQLite one."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from research_support import collect, of_type, open_ws, parts, role, web_settings

from footnote.errors import ConfigError
from footnote.eval.fixture_web import FixtureWeb
from footnote.ingest.web.search import SearxngSearch, WebResult
from footnote.models.base import Message
from footnote.pipelines.research.models import ResearchModels
from footnote.workspace import Workspace
from footnote.workspace.research import (
    ResearchParts,
    confirm_outline,
    planner_model,
    research_store,
    start_research,
)

pytestmark = pytest.mark.integration

COMPOUND_Q = "Who are the main battery recyclers in Veldmark, and where is regulation heading?"


@pytest.fixture(scope="module")
def web() -> Iterator[FixtureWeb]:
    with FixtureWeb() as w:
        yield w


def item(id_: str, asks: str, terms: str = "", depends_on: Sequence[str] = ()) -> dict[str, Any]:
    return {"id": id_, "title": id_.title(), "asks": asks, "terms": terms,
            "depends_on": list(depends_on)}  # fmt: skip


COMPOUND_OUTLINE = {
    "kinds": ["players", "regulation"],
    "items": [
        item(
            "leaders", "Which companies recycle batteries in Veldmark?", "Korvath recycling plant"
        ),
        item(
            "rules",
            "What does the battery producer responsibility notice require?",
            "battery producer responsibility notice",
        ),
    ],
}
_SECTION = re.compile(r"^(?:Section question|章节问题)[:：]\s*(.*)$", re.M)


class Planner:
    """A scripted `understand` model: the outline it is given, and per section question a list
    of "missing" replies (the last one repeats); every prompt is kept, by kind."""

    def __init__(
        self,
        outline: Any,
        missing: dict[str, list[dict[str, Any]]] | None = None,
        hook: Callable[[str, str], None] | None = None,
    ) -> None:
        self.outline, self.missing, self.hook = outline, missing or {}, hook
        self.plans: list[str] = []
        self.reads: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, messages: Sequence[Message]) -> str:
        prompt = messages[-1].content
        if "You plan research" in messages[0].content:
            self.plans.append(prompt)
            return self.outline if isinstance(self.outline, str) else json.dumps(self.outline)
        if "library search queries" in messages[0].content:  # the library-language query
            return json.dumps({"query": LIBRARY_QUERY})
        m = _SECTION.search(prompt)
        assert m is not None, prompt
        asks = m.group(1)
        with self.lock:
            self.reads.append((asks, prompt))
            n = sum(1 for a, _ in self.reads if a == asks)
        if self.hook is not None:
            self.hook(asks, prompt)
        replies = next(
            (r for k, r in self.missing.items() if asks.startswith(k)), [{"missing": []}]
        )
        return json.dumps(replies[min(n, len(replies)) - 1], ensure_ascii=False)

    def reads_of(self, asks: str) -> list[str]:
        return [p for a, p in self.reads if a.startswith(asks)]


def start(ws: Workspace, planner: Planner, question: str = COMPOUND_Q, **kw: Any) -> str:
    run_id, _ = start_research(ws, question, parts=parts(planner=role("understand", planner)), **kw)
    return run_id


def run(ws: Workspace, run_id: str, planner: Planner) -> list[Any]:
    confirm_outline(ws, run_id)
    return collect(ws, run_id, parts(planner=role("understand", planner)))


def test_the_model_plans_a_compound_question_and_each_item_reads_until_nothing_is_missing(
    tmp_path: Path, web: FixtureWeb
) -> None:
    planner = Planner(
        COMPOUND_OUTLINE,
        {"Which companies": [
            {"missing": ["how much each plant shreds"], "next_query": "Lumen Cycle shredding capacity"},
            {"missing": []}]},
    )  # fmt: skip
    ws = open_ws(
        tmp_path / "ws", web, planner="model", cards_per_question=20
    )  # the reader decides when to stop
    run_id = start(ws, planner)
    store = research_store(ws)
    outline = store.get_artifact(run_id, "outline")
    assert outline is not None and outline["template"] == "players+regulation"
    assert [i["id"] for i in outline["items"]] == ["leaders", "rules"]
    events = run(ws, run_id, planner)
    assert events[-1].type == "brief" and of_type(events, "checklist")
    said = [e.message for e in of_type(events, "status") if e.stage == "plan"]
    assert any("outline proposed by the model" in s for s in said)
    leaders = store.get_artifact(run_id, "investigate", "sq-leaders")
    rules = store.get_artifact(run_id, "investigate", "sq-rules")
    assert leaders is not None and rules is not None
    # the follow-up query the reader asked for was searched, then the reader found nothing missing
    assert leaders["queries"][-1] == "Lumen Cycle shredding capacity"
    assert len(planner.reads_of("Which companies")) == 2
    assert any("nothing missing" in n for n in leaders["notes"])
    # nothing missing after the first search: the plan's second query is never searched
    assert len(rules["queries"]) == 1 and len(planner.reads_of("What does the battery")) == 1
    assert "Queries already tried: " + leaders["queries"][0] in planner.reads_of("Which")[1]


def test_an_invalid_outline_falls_back_to_the_template_and_the_run_says_so(
    tmp_path: Path, web: FixtureWeb
) -> None:
    cyclic = {"kinds": [], "items": [item("a", "What is a?", depends_on=["b"]),
                                     item("b", "What is b?", depends_on=["a"])]}  # fmt: skip
    ws = open_ws(tmp_path / "ws", web, planner="model")
    planner = Planner(cyclic)
    run_id = start(ws, planner)
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None and outline["template"] == "players"
    events = run(ws, run_id, planner)
    assert events[-1].type == "brief"
    said = " ".join(e.message for e in of_type(events, "status") if e.stage == "plan")
    assert "the players template: the model's outline was invalid" in said and "cycle" in said
    record = research_store(ws).get_research(run_id)
    assert record is not None and record.options["planner"]["by"] == "template"


def test_a_budget_too_small_for_the_planner_call_gets_the_template(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = open_ws(tmp_path / "ws", web, planner="model")
    planner = Planner(COMPOUND_OUTLINE)
    run_id = start(ws, planner, budget_tokens=50)
    record = research_store(ws).get_research(run_id)
    assert record is not None and record.options["planner"]["by"] == "template"
    assert "budget refused the planner call" in record.options["planner"]["note"]
    assert planner.plans == []  # refused before it was made


def test_the_planner_setting_chooses_model_or_template(tmp_path: Path, web: FixtureWeb) -> None:
    planner = Planner(COMPOUND_OUTLINE, {"Which": [{"missing": ["x"], "next_query": "Korvath"}]})
    ws = open_ws(tmp_path / "t", web, planner="template")
    run_id = start(ws, planner)
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None and outline["template"] == "players"
    events = run(ws, run_id, planner)
    assert events[-1].type == "brief"
    assert planner.plans == [] and planner.reads == []  # no planning, no reading
    default = open_ws(tmp_path / "d", web)  # the default is the template
    outline = research_store(default).get_artifact(start(default, planner), "outline")
    assert outline is not None and outline["template"] == "players" and planner.plans == []
    ws = open_ws(tmp_path / "a", web, planner="auto")
    run_id = start(ws, planner)
    outline = research_store(ws).get_artifact(run_id, "outline")
    assert outline is not None and outline["template"] == "players+regulation"
    # `model` with no understand role bound is a configuration error; `auto` is the template
    strict = Workspace.open(tmp_path / "m", overrides=web_settings(web, planner="model"))
    with pytest.raises(ConfigError, match="understand"):
        planner_model(strict)
    assert planner_model(open_ws(tmp_path / "u", web, planner="auto")) is None
    bound = web_settings(web, select="rules", planner="auto")
    bound["models"]["understand"] = {"url": "local:qwen2.5-coder-1.5b"}  # bound, never loaded here
    assert planner_model(Workspace.open(tmp_path / "r", overrides=bound)) is None
    bound["research"].update(select="auto", planner="template")
    assert planner_model(Workspace.open(tmp_path / "p", overrides=bound)) is None
    bound["research"].update(planner="auto")
    assert planner_model(Workspace.open(tmp_path / "b", overrides=bound)) is not None


def test_independent_items_run_at_once_and_a_dependent_one_waits_for_and_reads_its_need(
    tmp_path: Path, web: FixtureWeb
) -> None:
    both = threading.Barrier(2, timeout=20)
    overlapped: list[bool] = []

    def meet(asks: str, _prompt: str) -> None:
        if asks.startswith(("How large", "What does")):  # the two independent items
            try:
                both.wait()  # returns only when the other item's call is in flight too
                overlapped.append(True)
            except threading.BrokenBarrierError:
                overlapped.append(False)

    outline = {
        "kinds": ["market_size", "regulation"],
        "items": [
            item("size", "How large is the battery recycling market in Veldmark?",
                 "battery recycling market size"),
            item("rules", "What does the battery producer responsibility notice require?",
                 "battery producer responsibility notice"),
            item("growth", "How fast will that market grow?", "battery recycling market growth",
                 depends_on=["size"]),
        ],
    }  # fmt: skip
    planner = Planner(outline, hook=meet)
    ws = open_ws(tmp_path / "ws", web, planner="model", parallel=2, cards_per_question=20)
    run_id = start(ws, planner)
    events = run(ws, run_id, planner)
    assert events[-1].type == "brief"
    assert overlapped == [True, True]
    order = [(e.type, e.sub_question.id if e.type == "subquestion_start" else e.sub_question_id)
             for e in events if e.type in ("subquestion_start", "subquestion_stop")]  # fmt: skip
    assert order.index(("subquestion_stop", "sq-size")) < order.index(
        ("subquestion_start", "sq-growth")
    )
    store = research_store(ws)
    size = store.get_artifact(run_id, "investigate", "sq-size")
    assert size is not None and size["card_ids"]
    needed = [c for c in store.cards(run_id) if c.id in size["card_ids"]]
    growth_reads = planner.reads_of("How fast")
    assert growth_reads and all(c.snippet[:60] in growth_reads[0] for c in needed[:3])
    assert all(needed[0].snippet[:60] not in p for p in planner.reads_of("What does"))


LIBRARY_DOC = (
    "# Korvath Recovery annual note\n\n"
    "Korvath Recovery processed 14,000 tonnes of spent lithium-ion batteries at Port Sarrow in "
    "2024.\n\nThe Port Sarrow plant has a permitted recycling capacity of 20,000 tonnes a year, "
    "and Korvath plans a second line by 2026.\n"
)


def korvath_library(tmp_path: Path, web: FixtureWeb, **research: Any) -> Workspace:
    """A workspace whose library is the one English note on Korvath (a small embedder)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "korvath.md").write_text(LIBRARY_DOC, encoding="utf-8")
    overrides = web_settings(web, **research)
    overrides["models"]["embed"] = {"url": "local:wordllama"}
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)
    ws.ingest([docs / "korvath.md"])
    return ws


def test_a_question_in_another_language_than_the_library_also_searches_in_the_librarys(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = korvath_library(tmp_path, web, planner="model")
    question = "Korvath Recovery 在 Port Sarrow 的电池回收工厂产能有多大？"
    outline = {"kinds": ["players"], "items": [
        item("capacity", "Korvath Recovery 的 Port Sarrow 工厂每年能回收多少吨电池？", "Korvath 产能")]}  # fmt: skip
    planner = Planner(outline, {"Korvath": [
        {"missing": ["第二条产线何时投产"], "next_query": "Korvath 第二条产线",
         "library_query": "Korvath second line 2026"},
        {"missing": []}]})  # fmt: skip
    run_id = start(ws, planner, question, web=False)
    events = run(ws, run_id, planner)
    assert events[-1].type == "brief"
    reads = planner.reads_of("Korvath")
    assert "资料库是英文的" in reads[0]  # the prompt in the question's language asks for it
    record = research_store(ws).get_artifact(run_id, "investigate", "sq-capacity")
    assert record is not None
    assert "Korvath 第二条产线" in record["queries"]
    assert "Korvath second line 2026" in record["queries"]


class RecordingSearch(SearxngSearch):
    """The real SearXNG client on the fixture web, keeping each query it sends."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url)
        self.queries: list[str] = []

    def search(self, query: str, k: int) -> list[WebResult]:
        self.queries.append(query)
        return super().search(query, k)


def test_a_query_written_after_reading_library_text_never_reaches_the_web(
    tmp_path: Path, web: FixtureWeb
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "korvath.md").write_text(LIBRARY_DOC, encoding="utf-8")
    overrides = web_settings(web, planner="model", cards_per_question=20)
    overrides["models"]["embed"] = {"url": "local:wordllama"}
    ws = Workspace.open(tmp_path / "ws", overrides=overrides)
    ws.ingest([docs / "korvath.md"])
    outline = {"kinds": ["players"], "items": [
        item("capacity", "How much can Korvath Recovery recycle at Port Sarrow each year?",
             "Korvath Port Sarrow capacity")]}  # fmt: skip
    planner = Planner(outline, {"How much": [
        {"missing": ["second line"], "next_query": "Korvath permitted second line"},
        {"missing": []}]})  # fmt: skip
    run_id = start(ws, planner, "How much can Korvath Recovery recycle at Port Sarrow?")
    confirm_outline(ws, run_id)
    searcher = RecordingSearch(web.base)
    events = collect(ws, run_id, ResearchParts(
        models=ResearchModels(planner=role("understand", planner)), web=searcher))  # fmt: skip
    assert events[-1].type == "brief"
    assert "14,000 tonnes" in planner.reads_of("How much")[0]  # the reader saw library text
    record = research_store(ws).get_artifact(run_id, "investigate", "sq-capacity")
    assert record is not None and "Korvath permitted second line" in record["queries"]
    assert searcher.queries and "Korvath permitted second line" not in searcher.queries


LIBRARY_QUERY = "Korvath Recovery Port Sarrow plant recycling capacity"


def understand_for_selection(asked: list[str]) -> Any:
    """A scripted `understand` model bound for card selection (the template planner): it
    writes the library-language query when asked, keeps the first two passages when selecting,
    and writes no claim (each card's claim stays its snippet)."""

    def script(messages: Sequence[Message]) -> str:
        if "library search queries" in messages[0].content:
            asked.append(messages[-1].content)
            return json.dumps({"query": LIBRARY_QUERY})
        if '"relevant"' in messages[-1].content:
            return json.dumps({"relevant": ["C1", "C2"]})
        return "no claim"

    return role("understand", script)


def test_under_the_template_planner_a_question_in_another_language_is_searched_in_the_librarys_too(
    tmp_path: Path, web: FixtureWeb
) -> None:
    ws = korvath_library(tmp_path, web)  # research.planner: the default, template
    question = "Korvath Recovery 在 Port Sarrow 的电池回收工厂产能有多大？"
    store = research_store(ws)

    asked: list[str] = []
    with_model = parts(select=understand_for_selection(asked))
    run_id, _ = start_research(ws, question, web=False)
    confirm_outline(ws, run_id)
    events = collect(ws, run_id, with_model)
    assert events[-1].type == "brief"
    assert len(asked) == 1 and question in asked[0] and "in English" in asked[0]
    plan = store.get_artifact(run_id, "plan")
    assert plan is not None and plan["library_query"]["lang"] == "en"
    assert plan["library_query"]["query"] == LIBRARY_QUERY
    assert all(LIBRARY_QUERY in sq["queries"] for sq in plan["sub_questions"])
    searched = [store.get_artifact(run_id, "investigate", sq["id"]) for sq in plan["sub_questions"]]
    assert all(r is not None and LIBRARY_QUERY in r["queries"] for r in searched)

    # without a model nothing is written, nothing extra searched, and the plan is as before
    run_id, _ = start_research(ws, question, web=False)
    confirm_outline(ws, run_id)
    assert collect(ws, run_id)[-1].type == "brief"
    plan = store.get_artifact(run_id, "plan")
    assert plan is not None and plan["library_query"]["query"] == ""
    assert not any(LIBRARY_QUERY in sq["queries"] for sq in plan["sub_questions"])

    # a question in the library's own language gets no such call
    asked.clear()
    run_id, _ = start_research(ws, "How large is Korvath Recovery's Port Sarrow plant?", web=False)
    confirm_outline(ws, run_id)
    assert collect(ws, run_id, with_model)[-1].type == "brief"
    assert asked == []
