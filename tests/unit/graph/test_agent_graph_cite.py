"""The agent's final answer may cite the rows its `graph_query` showed in the same run
(`graph:<call>:<row>`), checked by the graph answer gate's rule (#33): names, numbers and dates
in a cited row, every other content word from the question, the schema or the cited rows.
Rows come from a real LadybugDB films graph; no model (the gate runs without a judge)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from footnote.agent.tools import ToolRegistry
from footnote.events import Final, Verification
from footnote.pipelines.graph.agent_cite import GraphRowsShown, cited_draft, verify_agent_answer
from footnote.pipelines.graph.agent_tool import add_graph_tool
from footnote.store.graph.ladybug import LadybugGraph
from footnote.types import Answer, Block
from footnote.verify.evidence import EvidenceSet
from footnote.verify.graph_answer import schema_words

QUESTION = "Which films did Ada Stone act in?"
FILMS_OF = (
    "MATCH (p:Person)-[:ACTED_IN]->(f:Film) WHERE p.name = $person "
    "RETURN f.title AS title, f.year AS year ORDER BY year"
)
BLOCK = Block("0123abcd-p1-abcdef", "src", "paragraph", "Blue Lake was shot in Norway.", 1)


def _tool(films: LadybugGraph) -> tuple[ToolRegistry, GraphRowsShown]:
    def ask(graph: str, question: str) -> dict[str, Any]:
        params = {"person": "Ada Stone"}
        res = films.query(FILMS_OF, params, limit=10, timeout_s=5)
        rows = [dict(zip(res.columns, r, strict=True)) for r in res.rows]
        return {"status": "answered", "answer": "", "cypher": FILMS_OF, "params": params,
                "rows": rows}  # fmt: skip

    tools, shown = ToolRegistry(), GraphRowsShown()
    add_graph_tool(tools, ["films"], ask, shown=shown,
                   vocabulary={"films": schema_words(films.spec)})  # fmt: skip
    return tools, shown


def _verify(text: str, shown: GraphRowsShown, blocks: tuple[Block, ...] = ()) -> tuple[Answer, list[Verification]]:  # fmt: skip
    async def run() -> list[Any]:
        return [e async for e in verify_agent_answer(QUESTION, text, blocks, shown, judge=None)]

    events = asyncio.run(run())
    final = next(e.answer for e in events if isinstance(e, Final))
    return final, [e for e in events if isinstance(e, Verification)]


def test_graph_query_rows_carry_citable_ids(films: LadybugGraph) -> None:
    tools, shown = _tool(films)
    assert "[graph:1:0]" in tools.describe()
    out = json.loads(tools.call("graph_query", {"question": QUESTION}))
    assert [r["id"] for r in out["rows"]] == ["graph:1:0", "graph:1:1"]
    assert out["rows"][0]["values"] == {"title": "Blue Lake", "year": 1999}
    again = json.loads(tools.call("graph_query", {"question": QUESTION}))
    assert again["rows"][1]["id"] == "graph:2:1" and len(shown) == 4
    row = shown.get("graph:1:0")
    assert row is not None and row.text == "title: Blue Lake; year: 1999"
    assert row.context == ("Ada Stone",) and "film" in row.vocabulary


def test_a_sentence_citing_shown_rows_is_answered(films: LadybugGraph) -> None:
    tools, shown = _tool(films)
    tools.call("graph_query", {"question": QUESTION})
    answer, checks = _verify(
        "Ada Stone acted in Blue Lake (1999) [graph:1:0] and Red River (2001) [graph:1:1].", shown
    )
    assert answer.status == "answered", (answer.reason, checks)
    cited = [c for s in answer.sentences for c in s.citations]
    assert [c.evidence_id for c in cited] == ["graph:1:0", "graph:1:1"]
    assert (
        cited[0].quote == "title: Blue Lake; year: 1999" and cited[0].checks["words"] == "present"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Ada Stone acted in the comedy Blue Lake [graph:1:0].", ("words", "comedy")),
        ("Ada Stone acted in Blue Lake, released in 2005 [graph:1:0].", ("numbers", "2005")),
        ("Ada Stone acted in Green Hill [graph:1:0].", ("names", "Green Hill")),
    ],
)
def test_a_sentence_stating_what_its_rows_lack_is_dropped(
    films: LadybugGraph, text: str, why: tuple[str, str]
) -> None:
    tools, shown = _tool(films)
    tools.call("graph_query", {"question": QUESTION})
    answer, checks = _verify(text, shown)
    assert answer.status != "answered" and not answer.sentences
    kind, word = why
    assert checks and checks[0].verdict == "unsupported"
    assert word in checks[0].reasons[kind], checks[0].reasons


def test_rows_never_shown_are_fabricated(films: LadybugGraph) -> None:
    tools, shown = _tool(films)
    answer, _ = _verify("Ada Stone acted in Blue Lake [graph:1:0].", shown)  # no call yet
    assert answer.status != "answered"
    tools.call("graph_query", {"question": QUESTION})
    for fake in ("graph:2:0", "graph:1:7"):
        answer, checks = _verify(f"Ada Stone acted in Blue Lake [{fake}].", shown)
        assert answer.status != "answered" and checks[0].verdict == "fabricated", fake


def test_blocks_and_rows_are_cited_side_by_side(films: LadybugGraph) -> None:
    tools, shown = _tool(films)
    tools.call("graph_query", {"question": QUESTION})
    text = ("Ada Stone acted in Blue Lake (1999) [graph:1:0]. "
            "Blue Lake was shot in Norway [0123abcd-p1-abcdef].")  # fmt: skip
    answer, checks = _verify(text, shown, (BLOCK,))
    assert answer.status == "answered", (answer.reason, checks)
    assert [c.evidence_id for s in answer.sentences for c in s.citations] == [
        "graph:1:0", "0123abcd-p1-abcdef",
    ]  # fmt: skip
    # a row does not vouch for what only a block says
    _, checks = _verify(
        "Ada Stone acted in Blue Lake, shot in Norway [graph:1:0].", shown, (BLOCK,)
    )
    assert checks[0].verdict == "unsupported" and "norway" in checks[0].reasons["words"]


def test_the_draft_reads_graph_row_markers() -> None:
    draft = cited_draft("Blue Lake [graph:3:0; graph:3:1]. Norway [0123abcd-p1-abcdef].",
                        EvidenceSet([]))  # fmt: skip
    assert [s.cites for s in draft.sentences] == [
        ["graph:3:0", "graph:3:1"], ["0123abcd-p1-abcdef"]
    ]  # fmt: skip
