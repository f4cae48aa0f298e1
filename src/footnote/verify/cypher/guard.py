"""The guard every query passes before it runs: read-only, one statement, known schema,
no user text in the query string, and row-level permission filters that cannot be bypassed.

`CypherGuard(spec).check(cypher, params, principal)` returns a `GuardVerdict`: either the
reasons it was rejected, or the query to run — string literals lifted into parameters, and
for every variable bound to a restricted label a filter `v.prop IN $__allow_<Label>` added
to the WHERE of the MATCH that binds it, with values taken from the caller's `Principal`.
Where that rewrite could be sidestepped (unlabelled nodes, variable-length paths, subqueries,
pattern expressions outside MATCH) a restricted principal's query is refused instead.
`GraphGuard` adds the engine's EXPLAIN on top.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from footnote.store.graph.base import GraphQueryError, GraphSpec, GraphStore
from footnote.verify.cypher.parse import CLAUSES, CypherSyntaxError, Scan, Token, scan

FORBIDDEN = frozenset(
    {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "LOAD", "FOREACH", "COPY",
     "INSTALL", "UNINSTALL", "ATTACH", "USE", "ALTER", "IMPORT", "EXPORT", "BEGIN", "COMMIT",
     "ROLLBACK", "CHECKPOINT", "GRANT", "REVOKE", "DENY", "START", "STOP", "TERMINATE", "SHOW",
     "PROFILE", "EXPLAIN", "INSERT", "UPDATE", "TRUNCATE", "PERIODIC", "TRANSACTIONS",
     "DATABASE", "MACRO", "SEQUENCE", "EXTENSION", "FINISH"}
)  # fmt: skip
RESERVED_PREFIX = "__"
COMPILE_FAILED = "does not compile: "
"""How a rejection by the engine's EXPLAIN begins (the engine's message follows)."""
_WRITES = r"DETACH|DELETE|CREATE|MERGE|SET|REMOVE|DROP|CALL|LOAD|FOREACH|COPY"
_BREAK_OUT = (
    # a closing quote, then closing brackets or a statement end, then anything
    re.compile(r"(?<=\w)['\"`]\s*[})\]]+\s*(?:;|//|/\*|[A-Za-z])|['\"`]\s*;|['\"`]\s*(?://|/\*)"),
    # a closing quote straight into an upper-case write clause (`Ada' DETACH DELETE n`)
    re.compile(rf"(?<=\w)['\"`]\s+(?:{_WRITES})\b"),
)


def write_in_value(text: str) -> str:
    """The Cypher a value (a quoted name in a question, a string literal in a query) would
    break out into, when it carries a write clause after a closing quote and brackets or a
    statement end; "" for ordinary names ("Set It Off", "Rock 'n' Roll")."""
    for pattern in _BREAK_OUT:
        m = pattern.search(text)
        if m and re.search(rf"\b(?:{_WRITES})\b", text[m.start() :], re.I):
            return text[m.start() :].strip()
    return ""


@dataclass(frozen=True)
class Principal:
    """Who asks: an id and attributes set by the server from the authenticated identity."""

    id: str = "local"
    attributes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unrestricted: bool = False


@dataclass(frozen=True)
class GuardVerdict:
    """The guard's decision: `ok` with the query and params to run, or the reasons."""

    ok: bool
    cypher: str
    params: dict[str, Any]
    reasons: tuple[str, ...] = ()
    injected: tuple[str, ...] = ()
    shown: str = ""
    """The query as shown to people: `cypher` without the server's row-cap probe (the
    `LIMIT row_limit + 1` that tells a full result from a cut one); "" when it is `cypher`."""

    @property
    def reason(self) -> str:
        """All reasons as one line."""
        return "; ".join(self.reasons)


class CypherGuard:
    """Static checks and rewriting against one graph's spec."""

    def __init__(self, spec: GraphSpec) -> None:
        self.spec = spec
        self._node_props = {k: set(v.properties) for k, v in spec.nodes.items()}
        self._rel_props = {k: set(v.properties) for k, v in spec.relationships.items()}
        self._all_props = set().union(*self._node_props.values(), *self._rel_props.values())

    def check(
        self, cypher: str, params: Mapping[str, Any], principal: Principal | None = None
    ) -> GuardVerdict:
        """Decide about `cypher`; never raises on hostile input."""
        try:
            s = scan(cypher)
        except (CypherSyntaxError, ValueError) as exc:
            return GuardVerdict(False, cypher, dict(params), (f"unreadable query: {exc}",))
        reasons = self._static(s, params)
        if reasons:
            return GuardVerdict(False, cypher, dict(params), tuple(reasons))
        inserts, extra, injected, problems = self._permissions(s, principal or Principal())
        if problems:
            return GuardVerdict(False, cypher, dict(params), tuple(problems))
        text, lifted = _rewrite(cypher, s.tokens, inserts, s.label_tokens)
        out = {**{k: v for k, v in params.items() if k in set(s.params)}, **lifted, **extra}
        return GuardVerdict(True, text, out, (), tuple(injected))

    # -- static rules --------------------------------------------------------------------
    def _static(self, s: Scan, params: Mapping[str, Any]) -> list[str]:
        reasons: list[str] = []
        if not s.tokens:
            return ["empty query"]
        if s.statements > 1:
            reasons.append("multiple statements")
        for i, t in enumerate(s.tokens):
            prev = s.tokens[i - 1].text if i else ""
            if t.kind == "word" and prev != "." and t.upper in FORBIDDEN:
                reasons.append(f"{t.upper} is not allowed (read-only)")
            if t.kind == "string" and write_in_value(t.value or ""):
                reasons.append("a string value carries a write statement (an injection attempt)")
        first = s.tokens[0]
        if first.kind != "word" or first.upper not in CLAUSES - {
            "WHERE",
            "ORDER",
            "SKIP",
            "LIMIT",
            "YIELD",
        }:
            reasons.append(
                f"a query must start with MATCH, WITH, UNWIND or RETURN, not {first.text!r}"
            )
        allowed = set(self.spec.procedures)
        reasons += [f"procedure {c} is not whitelisted" for c in s.calls if c not in allowed]
        reasons += [f"function {f} is not allowed" for f in s.dotted_functions if f not in allowed]
        for p in s.params:
            if p.startswith(RESERVED_PREFIX):
                reasons.append(f"parameter ${p} is reserved")
            elif p not in params:
                reasons.append(f"parameter ${p} has no value")
        reasons += self._schema(s)
        return list(dict.fromkeys(reasons))

    def _schema(self, s: Scan) -> list[str]:
        out: list[str] = []
        bound: dict[str, tuple[str, list[str]]] = {}
        for n in s.nodes:
            for lab in n.labels:
                if lab not in self.spec.nodes:
                    out.append(f"unknown label {lab}")
            if n.var and n.labels:
                bound[n.var] = ("node", n.labels)
            for k in n.keys:
                props = (
                    set().union(*(self._node_props.get(x, set()) for x in n.labels))
                    if n.labels
                    else self._all_props
                )
                if not k.startswith("$") and k not in props:
                    out.append(f"unknown property {k} on {':'.join(n.labels) or 'node'}")
        for r in s.rels:
            for typ in r.types:
                if typ not in self.spec.relationships:
                    out.append(f"unknown relationship type {typ}")
            if r.var and r.types:
                bound[r.var] = ("rel", r.types)
            for k in r.keys:
                props = (
                    set().union(*(self._rel_props.get(x, set()) for x in r.types))
                    if r.types
                    else self._all_props
                )
                if k not in props:
                    out.append(f"unknown property {k} on relationship")
        for _var, lab in s.label_checks:
            if lab not in self.spec.nodes and lab not in self.spec.relationships:
                out.append(f"unknown label {lab}")
        for var, prop in s.props:
            kind, labels = bound.get(var, ("", []))
            table = self._node_props if kind == "node" else self._rel_props
            props = (
                set().union(*(table.get(x, set()) for x in labels)) if labels else self._all_props
            )
            if prop not in props:
                out.append(f"unknown property {var}.{prop}")
        return out

    # -- row-level permissions -------------------------------------------------------------
    def _permissions(
        self, s: Scan, who: Principal
    ) -> tuple[dict[int, str], dict[str, Any], list[str], list[str]]:
        restricted = self.spec.restricted
        if not restricted or who.unrestricted:
            return {}, {}, [], []
        problems: list[str] = []
        if s.subqueries or s.comprehensions:
            problems.append("subqueries and pattern comprehensions are not allowed here")
        if any(r.var_length for r in s.rels):
            problems.append("variable-length paths are not allowed here")
        match_clauses = {i for i in s.clauses if s.tokens[i].upper in ("MATCH", "OPTIONAL")}
        labelled: set[str] = set()
        inserts: dict[int, str] = {}
        conds: dict[int, list[str]] = {}
        params: dict[str, Any] = {}
        injected: list[str] = []
        anon = 0
        for n in s.nodes:
            if n.clause not in match_clauses:
                problems.append("patterns outside MATCH are not allowed here")
                continue
            if not n.labels:
                if not n.var or n.var not in labelled:
                    problems.append("every node must have a label here")
                continue
            if n.var:
                labelled.add(n.var)
            lab = next((x for x in n.labels if x in restricted), None)
            if lab is None:
                continue
            var = n.var
            if not var:
                var = f"__r{anon}"
                anon += 1
                inserts[n.open_index] = inserts.get(n.open_index, "") + var
            rule = restricted[lab]
            pname = f"__allow_{lab}"
            params[pname] = list(who.attributes.get(rule.attribute, ()))
            conds.setdefault(n.clause, []).append(f"{var}.`{rule.property}` IN ${pname}")
            injected.append(f"{var}:{lab}.{rule.property} IN principal.{rule.attribute}")
        for clause, cs in conds.items():
            _wrap_where(s, clause, " AND ".join(cs), inserts)
        return inserts, params, injected, list(dict.fromkeys(problems))


def _wrap_where(s: Scan, clause: int, cond: str, inserts: dict[int, str]) -> None:
    """Add `cond` to the WHERE of the MATCH clause at token `clause` (insert positions)."""
    later = [i for i in s.clauses if i > clause]
    where = later[0] if later and s.tokens[later[0]].upper == "WHERE" else None
    end = next((i for i in later if s.tokens[i].upper != "WHERE"), len(s.tokens))
    if where is not None:
        inserts[-(where + 1)] = inserts.get(-(where + 1), "") + f" ({cond}) AND ("
        inserts[-(end + 1) - 100_000] = ")"
    else:
        inserts[-(end + 1) - 100_000] = f" WHERE {cond} "


def _rewrite(
    src: str, toks: list[Token], inserts: dict[int, str], quote: set[int]
) -> tuple[str, dict[str, Any]]:
    """Rebuild the query from its tokens (comments dropped), lifting string literals into
    `$__sN` params, backticking labels and types (`Order` is a keyword to some engines) and
    applying inserts.

    Insert keys: `i >= 0` → text after token i (the `(` of an anonymous node);
    `-(i+1)` → text after token i (after WHERE); `-(i+1)-100000` → text before token i
    (clause end; i == len(toks) means the end of the query).
    """
    out: list[str] = []
    lifted: dict[str, Any] = {}
    pos = 0
    for i in range(len(toks) + 1):
        before = inserts.get(-(i + 1) - 100_000)
        if i == len(toks):
            if before:
                out.append(before)
            break
        t = toks[i]
        out.append(" " if i and src[pos : t.start] else "")  # comments and gaps → one space
        if before:
            out.append(before + " ")
        if t.kind == "string":
            name = f"__s{len(lifted)}"
            lifted[name] = t.value
            out.append("$" + name)
        elif i in quote:
            label = t.value if t.kind == "name" else t.text
            out.append("`" + label.replace("`", "``") + "`")
        else:
            out.append(t.text)
        out.append(inserts.get(i, "") + inserts.get(-(i + 1), ""))
        pos = t.end
    return "".join(out).strip(), lifted


def cap_rows(cypher: str, cap: int) -> tuple[str | None, str]:
    """`cypher` returning at most `cap` rows: every RETURN part (each side of a UNION) gets
    `LIMIT cap`, or its literal LIMIT lowered to `cap`; (None, reason) when a part's LIMIT is
    not a literal number. The engine then never materialises more than `cap` rows a part."""
    s = scan(cypher)
    toks, clauses = s.tokens, s.clauses
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the text
    bounds = [i for i in clauses if toks[i].upper == "UNION"] + [len(toks)]
    start = 0
    for end in bounds:
        part = [i for i in clauses if start <= i < end]
        returns = [i for i in part if toks[i].upper == "RETURN"]
        limits = [i for i in part if toks[i].upper == "LIMIT" and returns and i > returns[-1]]
        if returns:
            if limits:
                j = limits[-1] + 1
                if not (j < end and toks[j].kind == "number" and j + 1 == end):
                    return None, "LIMIT must be a literal number"
                if int(float(toks[j].text)) > cap:
                    edits.append((toks[j].start, toks[j].end, str(cap)))
            else:
                at = toks[end - 1].end
                edits.append((at, at, f" LIMIT {cap}"))
        start = end + 1
    out = cypher
    for a, b, text in sorted(edits, reverse=True):
        out = out[:a] + text + out[b:]
    return out, ""


class GraphGuard:
    """The static guard, a row cap (`LIMIT`) added server-side, then the engine's EXPLAIN:
    nothing runs unchecked and no query returns more than `row_cap` rows."""

    def __init__(self, store: GraphStore, row_cap: int | None = None) -> None:
        self.store = store
        self.static = CypherGuard(store.spec)
        self.row_cap = row_cap

    def check(
        self, cypher: str, params: Mapping[str, Any], principal: Principal | None = None
    ) -> GuardVerdict:
        """Static verdict, the row cap, then EXPLAIN of the rewritten query."""
        v = self.static.check(cypher, params, principal)
        if not v.ok:
            return v
        if self.row_cap is not None:
            capped, why = cap_rows(v.cypher, self.row_cap)
            if capped is None:
                return GuardVerdict(False, v.cypher, v.params, (why,))
            if capped != v.cypher:
                v = GuardVerdict(True, capped, v.params, (), (*v.injected, f"LIMIT {self.row_cap}"),
                                 shown=v.cypher)  # fmt: skip
        try:
            self.store.explain(v.cypher, v.params)
        except GraphQueryError as exc:
            return GuardVerdict(False, v.cypher, v.params, (f"{COMPILE_FAILED}{exc}",))
        return v
