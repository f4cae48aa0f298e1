"""A small Cypher tokenizer and structural scanner, enough for a guard to decide.

The tokenizer knows strings (both quotes, backslash escapes), backticked names, comments
(`//…`, `/*…*/`), parameters, numbers and operators, so keywords inside literals or comments
never count and keywords hidden in them are never missed. The scanner finds clauses (at
bracket depth 0), node and relationship patterns with their variables, labels, types and
map keys, property accesses, procedure calls, subqueries and statement separators.
Anything it cannot read (an unterminated string, a control or format character outside a
literal) is an error: a guard fails closed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

CLAUSES = frozenset(
    {"MATCH", "OPTIONAL", "WITH", "RETURN", "UNWIND", "CALL", "UNION", "WHERE", "ORDER",
     "SKIP", "LIMIT", "YIELD"}
)  # fmt: skip
_PUNCT2 = ("<>", "<=", ">=", "->", "<-", "=~", "..", "+=", "!=", "||")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


class CypherSyntaxError(ValueError):
    """The text could not be tokenized or scanned."""


@dataclass(frozen=True)
class Token:
    """One token: kind is word, name (backticked), string, param, number or punct."""

    kind: str
    text: str
    start: int
    end: int
    value: str = ""

    @property
    def upper(self) -> str:
        """The word folded for keyword comparison (NFKC, upper case)."""
        return unicodedata.normalize("NFKC", self.value or self.text).upper()


def _string(src: str, i: int) -> tuple[str, int]:
    quote, out, j = src[i], [], i + 1
    while j < len(src):
        c = src[j]
        if c == "\\":
            if j + 1 >= len(src):
                break
            n = src[j + 1]
            if n == "u" and j + 5 < len(src):
                out.append(chr(int(src[j + 2 : j + 6], 16)))
                j += 6
                continue
            out.append(_ESCAPES.get(n, n))
            j += 2
            continue
        if c == quote:
            return "".join(out), j + 1
        out.append(c)
        j += 1
    raise CypherSyntaxError(f"unterminated string starting at {i}")


def tokenize(src: str) -> list[Token]:
    """Tokens of `src`, comments and whitespace dropped; CypherSyntaxError when unreadable."""
    toks: list[Token] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j + 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                raise CypherSyntaxError("unterminated comment")
            i = j + 2
        elif c in "'\"":
            value, j = _string(src, i)
            toks.append(Token("string", src[i:j], i, j, value))
            i = j
        elif c == "`":
            j, parts = i + 1, []
            while True:
                k = src.find("`", j)
                if k < 0:
                    raise CypherSyntaxError("unterminated backtick name")
                parts.append(src[j:k])
                if src.startswith("``", k):
                    parts.append("`")
                    j = k + 2
                    continue
                break
            toks.append(Token("name", src[i : k + 1], i, k + 1, "".join(parts)))
            i = k + 1
        elif c == "$":
            j = i + 1
            if j < n and src[j] == "`":
                k = src.find("`", j + 1)
                if k < 0:
                    raise CypherSyntaxError("unterminated parameter name")
                toks.append(Token("param", src[i : k + 1], i, k + 1, src[j + 1 : k]))
                i = k + 1
                continue
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            toks.append(Token("param", src[i:j], i, j, src[i + 1 : j]))
            i = j
        elif c.isdigit():
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_" or (src[j] == "." and
                             j + 1 < n and src[j + 1].isdigit())):  # fmt: skip
                j += 1
            toks.append(Token("number", src[i:j], i, j))
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            toks.append(Token("word", src[i:j], i, j))
            i = j
        elif unicodedata.category(c) in ("Cc", "Cf", "Co", "Cn", "Zl", "Zp"):
            raise CypherSyntaxError(f"invisible or control character U+{ord(c):04X} at {i}")
        else:
            width = 2 if src.startswith(_PUNCT2, i) else 1
            if width == 1 and not c.isascii():
                raise CypherSyntaxError(f"unexpected character {c!r} at {i}")
            toks.append(Token("punct", src[i : i + width], i, i + width))
            i += width
    return toks


@dataclass
class NodePat:
    """A node pattern `(var:Label {key: …})`; `clause` is the index of its clause token."""

    var: str
    labels: list[str]
    keys: list[str]
    open_index: int
    close_index: int
    clause: int


@dataclass
class RelPat:
    """A relationship pattern `-[var:TYPE*1..2 {key: …}]-`."""

    var: str
    types: list[str]
    keys: list[str]
    var_length: bool


@dataclass
class Scan:
    """What the scanner found in one query."""

    tokens: list[Token]
    clauses: list[int] = field(default_factory=list)
    nodes: list[NodePat] = field(default_factory=list)
    rels: list[RelPat] = field(default_factory=list)
    props: list[tuple[str, str]] = field(default_factory=list)
    label_checks: list[tuple[str, str]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    dotted_functions: list[str] = field(default_factory=list)
    subqueries: int = 0
    comprehensions: int = 0
    statements: int = 1
    params: list[str] = field(default_factory=list)
    label_tokens: set[int] = field(default_factory=set)


def _name(t: Token) -> str | None:
    return t.value if t.kind == "name" else t.text if t.kind == "word" else None


def _labels(toks: list[Token], i: int, where: set[int] | None = None) -> tuple[list[str], int]:
    """Labels after `:` chains (`:A:B`, `:A|B`, `:A|:B`) from index i (indices into `where`)."""
    out: list[str] = []
    while i < len(toks) and toks[i].text in (":", "|", "&"):
        i += 1
        if i < len(toks) and toks[i].text == ":":
            i += 1
        if i < len(toks) and (name := _name(toks[i])) is not None:
            out.append(name)
            if where is not None:
                where.add(i)
            i += 1
        else:
            raise CypherSyntaxError("expected a label or type name")
    return out, i


def _map_keys(toks: list[Token], i: int) -> tuple[list[str], int]:
    """Keys of a `{k: v, …}` map starting at toks[i] == '{'; returns index after '}'."""
    keys: list[str] = []
    depth, expect_key = 0, True
    while i < len(toks):
        t = toks[i]
        if t.text in ("{", "(", "["):
            depth += 1
            expect_key = t.text == "{" and depth == 1
        elif t.text in ("}", ")", "]"):
            depth -= 1
            if depth == 0:
                return keys, i + 1
        elif depth == 1 and t.text == ",":
            expect_key = True
        elif depth == 1 and expect_key and (name := _name(t)) is not None:
            keys.append(name)
            expect_key = False
        i += 1
    raise CypherSyntaxError("unterminated map")


def scan(src: str) -> Scan:
    """Tokenize and scan `src` (CypherSyntaxError when unreadable)."""
    toks = tokenize(src)
    while toks and toks[-1].text == ";":
        toks.pop()
    s = Scan(toks, params=[t.value for t in toks if t.kind == "param"])
    depth, clause, i = 0, -1, 0
    while i < len(toks):
        t, prev = toks[i], toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.text == ";":
            s.statements += 1
        if (
            t.kind == "word"
            and depth == 0
            and t.upper in CLAUSES
            and (prev is None or prev.text != ".")
        ):
            s.clauses.append(i)
            clause = i
        if t.kind == "word" and t.upper == "CALL" and (prev is None or prev.text != "."):
            j, parts = i + 1, []
            while j < len(toks) and (name := _name(toks[j])) is not None:
                parts.append(name)
                if j + 1 < len(toks) and toks[j + 1].text == ".":
                    j += 2
                    continue
                break
            if parts:
                s.calls.append(".".join(parts))
            elif nxt is not None and nxt.text == "{":
                s.subqueries += 1
        if (
            t.kind == "word"
            and t.upper in ("EXISTS", "COUNT", "COLLECT")
            and nxt
            and nxt.text == "{"
        ):
            s.subqueries += 1
        if (t.kind in ("word", "name") and nxt is not None and nxt.text == "." and
                i + 2 < len(toks) and _name(toks[i + 2]) is not None and
                (prev is None or prev.text != ".")):  # fmt: skip
            j = i + 2
            while j + 2 < len(toks) and toks[j + 1].text == "." and _name(toks[j + 2]) is not None:
                j += 2
            if j + 1 < len(toks) and toks[j + 1].text == "(":
                s.dotted_functions.append(
                    ".".join(_name(toks[k]) or "" for k in range(i, j + 1, 2))
                )
            else:
                s.props.append((_name(t) or "", _name(toks[i + 2]) or ""))
            i = j + 1
            continue
        if t.text == "(" and _looks_like_node(toks, i):
            i = _node(s, toks, i, clause)
            continue
        if t.text == "[" and prev is not None and prev.text in ("-", "<-"):
            i = _rel(s, toks, i)
            continue
        if t.text == "[" and nxt is not None and nxt.text == "(":
            s.comprehensions += 1
        if t.text == ":" and prev is not None and prev.kind in ("word", "name") and depth == 0:
            labels, _ = _labels(toks, i, s.label_tokens)
            s.label_checks += [(_name(prev) or "", lab) for lab in labels]
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
        i += 1
    return s


def _looks_like_node(toks: list[Token], i: int) -> bool:
    j = i + 1
    if j < len(toks) and _name(toks[j]) is not None and toks[j].upper not in ("NOT",):
        j += 1
    if j < len(toks) and toks[j].text in (":", "{"):
        return True
    if j < len(toks) and toks[j].kind == "param" and j + 1 < len(toks) and toks[j + 1].text == ")":
        return i + 1 < j
    if j < len(toks) and toks[j].text == ")":
        before = toks[i - 1].text if i else ""
        after = toks[j + 1].text if j + 1 < len(toks) else ""
        return before in ("-", "->") or after in ("-", "<-")
    return False


def _node(s: Scan, toks: list[Token], i: int, clause: int) -> int:
    j, var = i + 1, ""
    if (name := _name(toks[j])) is not None:
        var, j = name, j + 1
    labels, j = _labels(toks, j, s.label_tokens)
    keys: list[str] = []
    if j < len(toks) and toks[j].text == "{":
        keys, j = _map_keys(toks, j)
    elif j < len(toks) and toks[j].kind == "param":
        keys, j = ["$" + toks[j].value], j + 1
    if j >= len(toks) or toks[j].text != ")":
        raise CypherSyntaxError("malformed node pattern")
    s.nodes.append(NodePat(var, labels, keys, i, j, clause))
    return j + 1


def _rel(s: Scan, toks: list[Token], i: int) -> int:
    j, var = i + 1, ""
    if j < len(toks) and (name := _name(toks[j])) is not None:
        var, j = name, j + 1
    types, j = _labels(toks, j, s.label_tokens)
    var_length = False
    if j < len(toks) and toks[j].text == "*":
        var_length = True
        j += 1
        while j < len(toks) and (toks[j].kind == "number" or toks[j].text in ("..", ".")):
            j += 1
        if j < len(toks) and toks[j].kind == "word" and toks[j].upper in ("SHORTEST", "ALL"):
            j += 1
    keys: list[str] = []
    if j < len(toks) and toks[j].text == "{":
        keys, j = _map_keys(toks, j)
    if j >= len(toks) or toks[j].text != "]":
        raise CypherSyntaxError("malformed relationship pattern")
    s.rels.append(RelPat(var, types, keys, var_length))
    return j + 1
