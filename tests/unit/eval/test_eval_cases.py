"""Generic case format: validation with file:line messages, filters, round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footnote.eval.cases import CaseError, read_cases, select, write_cases

GOOD = {
    "id": "q1",
    "paper": "p.md",
    "question": "How many passages?",
    "type": "fact_lookup",
    "answer": "1.2 million",
    "accept": ["1.2 million", 1200000],
    "evidence": [{"page": 1, "quote": "1.2 million passages"}],
    "notes": "",
}


def _write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


def test_good_cases_round_trip(tmp_path: Path) -> None:
    zh = {**GOOD, "id": "q2", "question": "有多少段落？", "answer": None, "type": "unanswerable"}
    cases = read_cases(_write(tmp_path, GOOD, zh))
    assert [c.lang for c in cases] == ["en", "zh"]
    assert cases[0].accept == ("1.2 million", 1200000.0)
    assert cases[1].unanswerable
    out = tmp_path / "out.jsonl"
    write_cases(out, cases)
    assert read_cases(out) == cases


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: not valid JSON"),
        (json.dumps({**GOOD, "type": "trivia"}), ":2: \"type\" is 'trivia'"),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "answer"}),
            ':2: missing field "answer"',
        ),
        (json.dumps({**GOOD, "answr": "x"}), ":2: unknown field(s) ['answr']"),
        (json.dumps({**GOOD, "evidence": [{"page": 0, "quote": "x"}]}), "evidence[0].page"),
        (json.dumps({**GOOD, "accept": [True]}), '"accept" must be a list'),
        (json.dumps(GOOD), ":2: duplicate id 'q1' (first on line 1)"),
        (json.dumps({**GOOD, "id": "q3", "answer_type": "number"}), "\"answer_type\" is 'number'"),
        (json.dumps({**GOOD, "id": "q3", "parts": 0}), '"parts" must be ≥ 1'),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, GOOD, line)
    with pytest.raises(CaseError) as info:
        read_cases(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="no cases"):
        read_cases(_write(tmp_path, ""))


def test_select_filters_then_limits(tmp_path: Path) -> None:
    rows = [
        {**GOOD, "id": f"q{i}", "type": t} for i, t in enumerate(["concept", "fact_lookup"] * 3)
    ]
    cases = read_cases(_write(tmp_path, *rows))
    assert [c.id for c in select(cases, types=["concept"], limit=2)] == ["q0", "q2"]
    assert select(cases, langs=["zh"]) == []
    with pytest.raises(CaseError.__mro__[1]):
        select(cases, types=["nonsense"])


def test_answer_type_and_parts_round_trip(tmp_path: Path) -> None:
    """The fields answer-type scoring reads (issue 29) survive reading and writing."""
    row = {**GOOD, "answer_type": "count", "parts": 2}
    [case] = read_cases(_write(tmp_path, row))
    assert case.answer_type == "count" and case.parts == 2
    out = tmp_path / "out.jsonl"
    write_cases(out, [case])
    assert json.loads(out.read_text())["answer_type"] == "count"
    assert read_cases(out) == [case]
