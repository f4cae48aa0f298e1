"""The Cypher tokenizer/scanner on tricky literals, comments and patterns."""

from __future__ import annotations

import pytest

from footnote.verify.cypher.parse import CypherSyntaxError, scan, tokenize


def test_keywords_inside_strings_and_comments_are_data() -> None:
    toks = tokenize(
        "MATCH (n) WHERE n.x = 'DELETE ; // not a comment' // CREATE\nRETURN n /* SET */"
    )
    words = [t.text for t in toks if t.kind == "word"]
    assert "DELETE" not in words and "CREATE" not in words and "SET" not in words
    strings = [t.value for t in toks if t.kind == "string"]
    assert strings == ["DELETE ; // not a comment"]


@pytest.mark.parametrize(
    ("src", "value"),
    [
        (r"'it\'s'", "it's"),
        (r'"say \"hi\""', 'say "hi"'),
        (r"'back\\'", "back\\"),
        (r"'\u00e9t\u00e9'", "été"),
        ("'多语言 ✓'", "多语言 ✓"),
        ('"a\'b"', "a'b"),
    ],
)
def test_string_values(src: str, value: str) -> None:
    (tok,) = tokenize(src)
    assert tok.kind == "string" and tok.value == value


def test_backtick_names_with_doubled_backticks() -> None:
    (tok,) = tokenize("`we``ird name`")
    assert tok.kind == "name" and tok.value == "we`ird name"


@pytest.mark.parametrize("src", ["'open", "/* open", "`open", "MATCH (n) RETURN n\u200b"])
def test_unreadable_text_raises(src: str) -> None:
    with pytest.raises(CypherSyntaxError):
        tokenize(src)


def test_patterns_labels_properties_and_calls() -> None:
    s = scan(
        "MATCH (p:Person {name: $n})-[r:ACTED_IN|DIRECTED*1..2]->(m:Movie) "
        "WHERE m.released > 2000 AND p:Person CALL db.x() RETURN count(m), apoc.f(1)"
    )
    assert [(n.var, n.labels, n.keys) for n in s.nodes] == [
        ("p", ["Person"], ["name"]),
        ("m", ["Movie"], []),
    ]
    assert s.rels[0].types == ["ACTED_IN", "DIRECTED"] and s.rels[0].var_length
    assert ("m", "released") in s.props
    assert ("p", "Person") in s.label_checks
    assert s.calls == ["db.x"] and "apoc.f" in s.dotted_functions
    assert s.params == ["n"]


def test_statements_and_trailing_semicolon() -> None:
    assert scan("MATCH (n:A) RETURN n;").statements == 1
    assert scan("MATCH (n:A) RETURN n; RETURN 1").statements == 2
    assert scan("RETURN 'a;b'").statements == 1


def test_function_call_parentheses_are_not_nodes() -> None:
    s = scan("MATCH (m:Movie) RETURN count(m) AS c, toLower(m.title) AS t, (1 + 2) AS x")
    assert [n.var for n in s.nodes] == ["m"]
