"""The agent's `graph_query` tool: graph QA (guard-checked, read-only Cypher) in the chat's
conversation.

The tool does not keep the conversation itself: the injected `ask(graph, question)` runs the
graph pipeline in the chat session's graph conversation (`workspace.graph.add_agent_graph_tool`),
so a follow-up ("and which of them were born after 1960?") is read with the earlier graph
questions of the session. Its results are never cached: the same words mean another thing
after another turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from footnote.agent.tools import ToolRegistry
from footnote.errors import ToolRetry

GraphAskFn = Callable[[str, str], dict[str, Any]]
"""`ask(graph, question)`: the graph answer contract of one question in this conversation."""
MAX_ROWS_SHOWN = 20


def add_graph_tool(tools: ToolRegistry, graphs: Sequence[str], ask: GraphAskFn) -> None:
    """Register `graph_query` over `graphs` (the names the user may use; none: no tool)."""
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
        return {
            "graph": name,
            "status": out.get("status"),
            "answer": out.get("answer") or "",
            "reason": out.get("reason") or "",
            "options": out.get("options", []),
            "cypher": out.get("cypher", ""),
            "rows": rows[:MAX_ROWS_SHOWN],
            "rows_total": len(rows),
        }

    graph_query.__doc__ = (graph_query.__doc__ or "").replace(
        "Cypher.", f"Cypher (graphs: {names}).", 1
    )
    tools.add(graph_query, cache=False)
