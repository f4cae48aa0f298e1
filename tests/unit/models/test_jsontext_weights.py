import json

import pytest

from footnote.models.base import Message, ToolCallRequest, ToolSpec
from footnote.models.jsontext import (
    find_json_object,
    parse_tool_reply,
    render_tool_turns,
    tool_call_schema,
)

SEARCH = ToolSpec("search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}})


def test_find_json_object() -> None:
    assert find_json_object('x ```json\n{"a": 1}\n``` y') == {"a": 1}
    assert find_json_object('The answer is {"a": {"b": [1, 2]}} ok') == {"a": {"b": [1, 2]}}
    assert find_json_object('bad { then {"ok": true}') == {"ok": True}
    with pytest.raises(ValueError):
        find_json_object("nothing")


def test_tool_emulation_roundtrip() -> None:
    schema = tool_call_schema([SEARCH])
    assert len(schema["anyOf"]) == 2
    text, calls = parse_tool_reply('{"tool": "search", "arguments": {"q": "x"}}', [SEARCH])
    assert text == "" and calls[0].name == "search" and json.loads(calls[0].arguments) == {"q": "x"}
    assert parse_tool_reply('{"final": "done"}', [SEARCH]) == ("done", ())
    assert parse_tool_reply('{"tool": "rm", "arguments": {}}', [SEARCH])[1] == ()
    msgs = render_tool_turns(
        [
            Message("system", "Be brief."),
            Message("user", "find x"),
            Message("assistant", "", tool_calls=(ToolCallRequest("1", "search", '{"q": "x"}'),)),
            Message("tool", "result text", tool_call_id="1", name="search"),
        ],
        [SEARCH],
    )
    assert (
        msgs[0].role == "system" and "Be brief." in msgs[0].content and "search" in msgs[0].content
    )
    assert json.loads(msgs[2].content) == {"tool": "search", "arguments": {"q": "x"}}
    assert msgs[3].role == "user" and "result text" in msgs[3].content
