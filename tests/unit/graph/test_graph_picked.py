"""The row a superlative asks for, picked by code from rows that hold it (`picked`)."""

from __future__ import annotations

from footnote.pipelines.graph.picked import pick_extreme
from footnote.store.graph.base import GraphRows

ALL = "MATCH (p:Person) RETURN p.name AS name, p.born AS born"
BORN = GraphRows(("name", "born"), (("Ada", 1970), ("Cy", 1965), ("Ben", 1980), ("Dee", 1965)))


def kept(question: str, rows: GraphRows = BORN, cypher: str = ALL) -> list[str] | None:
    p = pick_extreme(question, cypher, rows)
    return None if p is None else [str(r[0]) for r in p.rows.rows]


def test_ties_are_kept_and_the_direction_follows_the_word() -> None:
    assert kept("Which actor was born earliest?") == ["Cy", "Dee"]
    assert kept("Who is the oldest person?") == ["Cy", "Dee"]
    assert kept("Who is the youngest person?") == ["Ben"]
    assert kept("谁出生得最早？") == ["Cy", "Dee"]
    assert kept("哪位演员最年轻？") == ["Ben"]
    films = GraphRows(("title", "actors"), (("A", 3), ("B", 12), ("C", "12")))
    assert kept("Which movie has the most actors?", films) == ["B", "C"]
    assert kept("哪部电影的演员最少？", films) == ["A"]
    prices = GraphRows(("product", "unitPrice"), (("Chai", 18.0), ("Konbu", 6.0)))
    assert kept("Which product is the cheapest?", prices) == ["Konbu"]
    assert kept("Which product is the most expensive?", prices) == ["Chai"]


def test_no_pick_when_code_cannot_tell() -> None:
    assert kept("Who is the best actor?") is None  # best by what?
    ages = GraphRows(("name", "age"), (("Ada", 50), ("Cy", 61)))
    assert kept("Who is the oldest person?", ages) is None  # oldest of an age: not a year
    two = GraphRows(("name", "born", "films"), (("Ada", 1970, 2), ("Cy", 1965, 1)))
    assert kept("Which actor was born earliest?", two) is None  # which number?
    assert kept("Who has the most films and the fewest awards?") is None  # two superlatives
    cut = GraphRows(BORN.columns, BORN.rows, truncated=True)
    assert kept("Which actor was born earliest?", cut) is None  # the server cut the rows
    ordered = ALL + " ORDER BY born LIMIT 1"
    assert kept("Which actor was born earliest?", cypher=ordered) is None  # the query picked
    assert kept("Which films did Ada act in?") is None  # no superlative
    assert kept("返回最多100个人的出生年份。") is None  # a limit, not the largest
    assert kept("Return the birth years of at most 100 people.") is None
