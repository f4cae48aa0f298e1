"""The agent's `graph_query` tool: graph QA (guard-checked, read-only Cypher) in the chat's
conversation.

The tool does not keep the conversation itself: the injected `ask(graph, question)` runs the
graph pipeline in the chat session's graph conversation (`workspace.graph.add_agent_graph_tool`),
so a follow-up ("and which of them were born after 1960?") is read with the earlier graph
questions of the session. Its results are never cached: the same words mean another thing
after another turn. Given `shown`, each row it shows carries an id (`graph:<call>:<row>`) that
the agent's final answer may cite (`pipelines.graph.agent_cite`: checked against that row by the graph
answer gate's rule).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from footnote.agent.tools import ToolRegistry
from footnote.errors import ToolRetry
from footnote.pipelines.graph.agent_cite import GraphRowsShown

GraphAskFn = Callable[[str, str], dict[str, Any]]
"""`ask(graph, question)`: the graph answer contract of one question in this conversation."""
MAX_ROWS_SHOWN = 20


def add_graph_tool(
    tools: ToolRegistry,
    graphs: Sequence[str],
    ask: GraphAskFn,
    *,
    shown: GraphRowsShown | None = None,
    vocabulary: Mapping[str, Collection[str]] | None = None,
) -> None:
    """Register `graph_query` over `graphs` (the names the user may use; none: no tool).
    `shown` records the rows it shows, citable by id; `vocabulary`: each graph's schema words
    (what a sentence citing its rows may say besides the question and the rows)."""
    if not graphs:
        return
    names = ", ".join(graphs)

    def graph_query(question: str, graph: str = "") -> dict[str, Any]:
        """Answer from a property graph with read-only, guard-checked Cypher.

        Args:
            question: the user's question in their words; a follow-up may lean on the
                earlier graph questions of this conversation ("and which of them ...").
            graph: the graph's name (may be left out when there is only one).
        """
        name = graph or (graphs[0] if len(graphs) == 1 else "")
        if name not in graphs:
            raise ToolRetry(f"no graph {graph!r}: the graphs are {names}")
        out = ask(name, question)
        rows = list(out.get("rows", []))
        result = {
            "graph": name,
            "status": out.get("status"),
            "answer": out.get("answer") or "",
            "reason": out.get("reason") or "",
            "options": out.get("options", []),
            "cypher": out.get("cypher", ""),
            "rows": rows[:MAX_ROWS_SHOWN],
            "rows_total": len(rows),
        }
        if shown is not None:  # every answered call counts, so ids follow the graph runs
            words = (vocabulary or {}).get(name, ())
            ids = shown.add(name, rows[:MAX_ROWS_SHOWN], out.get("params") or {}, words)
            result["rows"] = [{"id": i, "values": r} for i, r in zip(ids, result["rows"],
                                                                     strict=True)]  # fmt: skip
        return result

    doc = (graph_query.__doc__ or "").replace("Cypher.", f"Cypher (graphs: {names}).", 1)
    if shown is not None:
        cite = "Each row shown has an id; cite it in the final answer like [graph:1:0]."
        doc = doc.replace("\n\n", f"\n        {cite}\n\n", 1)
    graph_query.__doc__ = doc
    tools.add(graph_query, cache=False)
