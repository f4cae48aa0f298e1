"""The server-side row cap: every RETURN part gets a LIMIT, larger literal LIMITs are
lowered, non-literal ones refused — so no engine materialises more than the cap."""

from __future__ import annotations

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
