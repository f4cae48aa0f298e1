"""Values the question gives, bound to a generated query's parameters that have none.

The Cypher model often lifts a value the user typed into a parameter of its own
("找所有name属性值大于或等于'Peter'的节点" → `WHERE a.name >= $peter`); the guard then refuses
"parameter $peter has no value" and the question is lost. Code binds such a parameter to a
value written in the question — its own name spelled like the value ($peter ↔ 'Peter',
$andres ↔ Andres), the one value left for the one parameter left, or numbered parameters
($name1, $name2) first used in number order to as many values in the question's order — and
never guesses between several otherwise. Values are the question's quoted strings and, in a Chinese question, its
Latin-script runs (names written in the original). A bound value is a parameter like any
other: the guard checks the query and the value never becomes query text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from footnote.pipelines.graph.outcome import latin_runs
from footnote.textnorm import CJK_IDEOGRAPHS
from footnote.verify.cypher.guard import RESERVED_PREFIX
from footnote.verify.cypher.parse import CypherSyntaxError, scan

_QUOTED = (
    re.compile(r"(?:^|(?<=[\s(\[:,=" + CJK_IDEOGRAPHS + r"]))'([^'\n]{1,80})'"),
    re.compile(r"(?:^|(?<=[\s(\[:,=" + CJK_IDEOGRAPHS + r"]))\"([^\"\n]{1,80})\""),
    re.compile(r"[‘“「『]([^’”」』\n]{1,80})[’”」』]"),
)


def question_literals(question: str) -> list[str]:
    """The values written in `question`: quoted strings, then (in a Chinese question) the
    Latin-script runs (`outcome.latin_runs`) not inside them, in order, each once."""
    quoted = [v for p in _QUOTED for m in p.finditer(question) if (v := m.group(1).strip())]
    runs = [r for r in latin_runs(question) if not any(r in q for q in quoted)]
    return list(dict.fromkeys([*quoted, *runs]))


def _squashed(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def literal_params(
    cypher: str, params: Mapping[str, Any], question: str, *, schema_names: Collection[str] = ()
) -> dict[str, str]:
    """Bindings for the parameters of `cypher` that `params` has no value for: a parameter
    spelled like one of the question's values gets it; then, when exactly one parameter and
    exactly one value (not a parameter's, not a name the query or the schema uses —
    `schema_names`: its labels and properties —, not one letter) are left, that one; or
    numbered parameters in order. Nothing else."""
    try:
        s = scan(cypher)
    except CypherSyntaxError:
        return {}
    unbound = [p for p in dict.fromkeys(s.params)
               if p not in params and not p.startswith(RESERVED_PREFIX)]  # fmt: skip
    if not unbound:
        return {}
    # a value already a parameter's, or a word the query uses as a name ("返回name和born属性"
    # names properties), is not a value left to bind
    taken = {_squashed(str(v)) for v in params.values()}
    taken |= {_squashed(t.value if t.kind == "name" else t.text)
              for t in s.tokens if t.kind in ("word", "name")}  # fmt: skip
    taken |= {_squashed(n) for n in schema_names}  # "返回name和born属性": properties, not values
    values = [v for v in question_literals(question)
              if _squashed(v) not in taken and len(_squashed(v)) > 1]  # fmt: skip
    out: dict[str, str] = {}
    for p in unbound:
        same = [v for v in values if _squashed(v) == _squashed(p)]
        if len(same) == 1:
            out[p] = same[0]
            values.remove(same[0])
    left = [p for p in unbound if p not in out]
    if len(left) == 1 and len(values) == 1:
        out[left[0]] = values[0]
    elif left and len(left) == len(values) and _numbered_in_order(left):
        out |= dict(zip(left, values, strict=True))
    return out


_NUMBERED = re.compile(r"^(?P<stem>[A-Za-z_]*?)_?(?P<n>\d+)$")


def _numbered_in_order(params: list[str]) -> bool:
    """Parameters of one numbered family ($name1, $name2 …), first used in the query in their
    numbers' order (`params` is in order of first use): then the query reads them as the
    question writes its values."""
    found = [m for p in params if (m := _NUMBERED.match(p))]
    if len(found) != len(params) or len({m.group("stem").casefold() for m in found}) != 1:
        return False
    numbers = [int(m.group("n")) for m in found]
    return numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
