"""The server-side row cap: every RETURN part gets a LIMIT, larger literal LIMITs are
lowered, non-literal ones refused — so no engine materialises more than the cap. The cap is
a probe of the server's, not the question's: the query as shown leaves it out."""

from __future__ import annotations

import pytest

from footnote.config import GraphSettings
from footnote.events import GraphAnswer
from footnote.index.graph.align import EntityIndex
from footnote.models.fake import FakeChatModel
from footnote.models.ledger import Ledger
from footnote.models.roles import RoleModel
from footnote.pipelines.graph.qa import GraphDeps, GraphQAPipeline, GraphRequest
from footnote.store.graph.base import GraphQueryError
from footnote.store.graph.ladybug import LadybugGraph
from footnote.verify.cypher.guard import GraphGuard, Principal, cap_rows


def test_cap_rows_rewrites() -> None:
    assert cap_rows("MATCH (n) RETURN n", 201) == ("MATCH (n) RETURN n LIMIT 201", "")
    assert cap_rows("MATCH (n) RETURN n LIMIT 5", 201)[0] == "MATCH (n) RETURN n LIMIT 5"
    assert cap_rows("MATCH (n) RETURN n LIMIT 5000", 201)[0] == "MATCH (n) RETURN n LIMIT 201"
    union = cap_rows("MATCH (n) RETURN n.a AS a UNION ALL MATCH (m) RETURN m.a AS a", 3)[0]
    assert union == "MATCH (n) RETURN n.a AS a LIMIT 3 UNION ALL MATCH (m) RETURN m.a AS a LIMIT 3"
    assert cap_rows("MATCH (n) RETURN n LIMIT $x", 3) == (None, "LIMIT must be a literal number")
    assert cap_rows("MATCH (n) RETURN n LIMIT 1 + 9", 3)[0] is None
    with_limit = "MATCH (n) WITH n LIMIT 900 RETURN n"  # only the RETURN part is capped
    assert cap_rows(with_limit, 3)[0] == with_limit + " LIMIT 3"


def test_guard_caps_what_the_engine_returns(films: LadybugGraph) -> None:
    guard = GraphGuard(films, row_cap=2)
    v = guard.check(
        "MATCH (p:Person) RETURN p.name AS name LIMIT 100", {}, Principal(unrestricted=True)
    )
    assert v.ok and v.cypher.endswith("LIMIT 2") and "LIMIT 2" in v.injected
    assert len(films.query(v.cypher, v.params, limit=100, timeout_s=5).rows) == 2
    bad = guard.check("MATCH (p:Person) RETURN p.name AS name LIMIT $n", {"n": 5})
    assert not bad.ok and bad.reasons == ("LIMIT must be a literal number",)


def test_guard_shows_the_query_without_its_row_cap_probe(films: LadybugGraph) -> None:
    guard = GraphGuard(films, row_cap=201)  # row_limit + 1: tells a full result from a cut one
    who = Principal(unrestricted=True)
    v = guard.check("MATCH (p:Person) RETURN p.name AS name", {}, who)
    assert v.ok and v.cypher.endswith(" LIMIT 201") and "LIMIT" not in v.shown
    assert v.cypher == v.shown + " LIMIT 201"
    asked = guard.check("MATCH (p:Person) RETURN p.name AS name LIMIT 5", {}, who)
    assert asked.ok and asked.cypher.endswith("LIMIT 5") and asked.shown == ""  # as it ran


async def test_answer_shows_the_query_with_its_values_and_rows_as_sentences(
    films: LadybugGraph, films_index: EntityIndex
) -> None:
    written = (
        "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = 'Ada Stone' AND f.year > 1990 "
        "RETURN f.title AS title, f.year AS year ORDER BY year"
    )
    cypher = RoleModel("cypher", FakeChatModel([written]), ledger=Ledger(), external=False)
    cfg = GraphSettings(understand="rules", answer="template", retries=1)
    pipe = GraphQAPipeline(
        GraphDeps(store=films, index=films_index, settings=cfg, cypher_model=cypher)
    )
    req = GraphRequest("Which films after 1990 did Ada Stone act in?", Principal(unrestricted=True))
    events = [e async for e in pipe.run(req)]
    answer = next(e for e in events if isinstance(e, GraphAnswer))
    assert answer.status == "answered" and pipe.outcome.cypher.endswith("LIMIT 201")  # it ran so
    assert "LIMIT" not in answer.cypher and "$__s0" in answer.cypher
    assert answer.params == {"__s0": "Ada Stone"}
    # the rows as sentences (template fallback for a generated query), not `title: …` dumps
    assert answer.text == "Blue Lake (year 1999). Red River (year 2001)."


def test_a_compile_error_quotes_the_query_not_the_guards_explain(films: LadybugGraph) -> None:
    """Seen in the embedded-model run: the engine's message quoted `EXPLAIN MATCH …` (the
    guard's wrapper), the retry prompt showed it, and the model wrote EXPLAIN into every retry
    — refused as a forbidden clause until the attempts ran out."""
    with pytest.raises(GraphQueryError) as caught:
        films.explain("MATCH (p:Person RETURN p", {})
    reason = str(caught.value)
    assert "EXPLAIN" not in reason, reason
    assert "offset: 16)" in reason and '\n"MATCH (p:Person RETURN p"\n' in reason
    caret = reason.rsplit("\n", 1)[1]
    assert caret.index("^") == 1 + len("MATCH (p:Person ")  # under the quoted query's RETURN
    with pytest.raises(GraphQueryError) as second_line:
        films.explain("MATCH (p:Person) RETURN p.name\nMATCH (q:Person) RETURN q", {})
    assert "(line: 2, offset: 0)" in str(second_line.value)  # other lines are left as they are
