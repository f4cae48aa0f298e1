"""Graph answers go through the one verification path (issue #13, "one verification path serves
every pipeline"): the rows shown become the gate's evidence, `verify.gate.check_draft` checks
each sentence, and the judge role (when bound and `graph.judge` is on) decides among the
model's sentences that pass the value checks — a sentence that reverses its rows is dropped."""

from __future__ import annotations

from collections.abc import Sequence

from footnote.config import GraphSettings
from footnote.events import Final
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.answer import compose_answer
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphRows
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify import gate
from footnote.verify.cypher.guard import Principal
from footnote.verify.graph_answer import ShownRows, check_graph_sentence, verify_graph_answer

REVERSED = "Ada Stone directed Blue Lake (1999)."  # she acted in it; every word is supported
TRUE = "Ada Stone acted in Blue Lake (1999)."


def role(name: str, replies: Sequence[str]) -> RoleModel:
    return RoleModel(name, FakeChatModel(list(replies)), ledger=Ledger(), external=False)


def test_graph_sentences_are_checked_by_the_gate(monkeypatch: object) -> None:
    seen: list[int] = []
    real = gate.check_draft

    def spy(draft: gate.Draft, evidence: gate.EvidenceSet, **kw: object) -> object:
        seen.append(len(draft.sentences))
        assert all(e.kind == "row" for e in evidence)
        return real(draft, evidence, **kw)  # type: ignore[arg-type]

    import footnote.verify.graph_answer as ga

    monkeypatch.setattr(ga, "check_draft", spy)  # type: ignore[attr-defined]
    shown = ShownRows({"row:0": "title: Blue Lake; year: 1999"}, ("Ada Stone",))
    v = verify_graph_answer([(TRUE, ["row:0"]), ("Ben acted in X.", ["row:7"])], shown)
    assert seen == [2]
    assert v.fabricated == 1 and v.support == 0.5


def test_a_reversed_sentence_passes_the_value_checks_but_not_the_judge() -> None:
    shown = ShownRows({"row:0": "title: Blue Lake; year: 1999"}, ("Ada Stone",))
    assert check_graph_sentence(REVERSED, ["row:0"], shown).ok  # names and year are all there
    asked: list[tuple[str, str]] = []

    def judge(claim: str, passage: str) -> float:
        asked.append((claim, passage))
        return 0.05 if "directed" in claim else 0.95

    bad = check_graph_sentence(REVERSED, ["row:0"], shown, judge=judge)
    assert (
        not bad.ok
        and bad.verdict == "unsupported"
        and bad.reasons["judge"] == "P(supported) = 0.05"
    )
    assert check_graph_sentence(TRUE, ["row:0"], shown, judge=judge).ok
    assert asked[0] == (REVERSED, "Ada Stone\ntitle: Blue Lake; year: 1999")


def test_a_sentence_that_states_no_value_is_weak_and_not_shown() -> None:
    shown = ShownRows({"row:0": "title: Blue Lake; year: 1999"})
    c = check_graph_sentence("That is the answer.", ["row:0"], shown)
    assert c.verdict == "weak" and not c.ok
    assert "states no name" in c.reasons["values"]


def test_every_cited_row_counts_for_a_list_sentence() -> None:
    rows = {f"row:{i}": f"title: Film {chr(65 + i)}" for i in range(5)}
    s = "She acted in Film A, Film B, Film C, Film D and Film E."
    assert check_graph_sentence(s, list(rows), ShownRows(rows)).ok  # five rows, not only three


def test_compose_answer_judges_model_sentences_only() -> None:
    rows = GraphRows(("title", "year"), (("Blue Lake", 1999),))
    reply = f'{{"sentences": [{{"text": "{REVERSED}", "rows": ["row:0"]}}]}}'
    calls: list[str] = []

    def judge(claim: str, passage: str) -> float:
        calls.append(claim)
        return 0.0

    out = compose_answer("Which films?", rows, model=role("compose", [reply]),
                         params={"person": "Ada Stone"}, judge=judge)  # fmt: skip
    assert calls == [REVERSED]  # the template fallback is not judged
    assert out.method == "template" and out.discarded is not None
    assert "P(supported) = 0.00" in out.discarded.reason


def _pipe(films: LadybugGraph, index: EntityIndex, judge: bool) -> GraphQAPipeline:
    reply = f'{{"sentences": [{{"text": "{REVERSED}", "rows": ["row:0"]}}]}}'
    cfg = GraphSettings(understand="rules", answer="model", judge=judge)
    return GraphQAPipeline(GraphDeps(
        store=films, index=index, settings=cfg, answer_model=role("compose", [reply]),
        judge_model=role("judge", ["no"] * 4),
    ))  # fmt: skip


async def _answer(p: GraphQAPipeline) -> str:
    q = "Which films did Ada Stone act in?"
    events = [e async for e in p.run(GraphRequest(q, Principal(unrestricted=True)))]
    return next(e for e in events if isinstance(e, Final)).answer.text


async def test_graph_judge_setting_has_an_effect(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    unjudged = await _answer(_pipe(films, films_index, judge=False))
    judged_pipe = _pipe(films, films_index, judge=True)
    judged = await _answer(judged_pipe)
    assert "directed" in unjudged  # the value and word checks cannot see a reversal
    assert "directed" not in judged  # the judge said no: the template answer is shown
    assert judged_pipe.deps.judge_model is not None
    assert judged_pipe.deps.judge_model.model.calls  # type: ignore[attr-defined]
