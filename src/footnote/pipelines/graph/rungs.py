"""Which rung of the graph ladder a model role serves (`models probe`, the workspace's wiring):
the one home of the rule that decides between a stronger fallback model and a fallback
strategy on the `cypher` model."""

from __future__ import annotations


def fallback_rung(cypher_url: str, fallback_url: str) -> str:
    """What the fallback rung is: `model` when `cypher_fallback` is bound to another model
    than `cypher`; `strategy` (the `cypher` model with the full schema, retrieved examples and
    more candidates) when it is unbound or the same model. The one home of that rule."""
    same = fallback_url.strip() == cypher_url.strip()
    return "model" if fallback_url.strip() and not same else "strategy"


def graph_rung(role: str, cypher_url: str, fallback_url: str, candidates: int) -> str:
    """Which rung of the graph ladder `role` serves, in words (`models probe`), or ""."""
    rung = fallback_rung(cypher_url, fallback_url)
    strategy = (
        f"the fallback rung as a strategy ({candidates} candidates by agreement, full schema, "
        "examples retrieved for the failing pattern)"
        if candidates
        else "no fallback rung (graph.fallback_candidates = 0)"
    )
    if role == "cypher":
        first = "graph ladder: generated candidates and retries"
        return first + ("" if rung == "model" else f", and {strategy}")
    if role == "cypher_fallback":
        if rung == "model":
            return "graph ladder: the fallback rung (a stronger model than `cypher`)"
        why = "unbound" if not fallback_url.strip() else "the same model as `cypher`"
        return f"graph ladder: none ({why}); `cypher` serves {strategy}"
    return ""
