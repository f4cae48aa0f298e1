"""`local:` accepts any GGUF path or a pulled file's name; anything else is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import ModelBinding, ModelSettings
from footnote.errors import ConfigError
from footnote.models.factories import gguf_path, make_chat_model


def test_local_gguf_by_path_and_by_cached_name(tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    settings = ModelSettings(cache_dir=str(tmp_path))
    assert gguf_path(str(model), settings) == model
    assert gguf_path("tiny.gguf", settings) == model
    chat = make_chat_model(ModelBinding(url=f"local:{model}"), settings)
    assert chat.name == f"local:{model}"
    assert chat.path() == model  # type: ignore[attr-defined]


def test_unknown_local_names_say_what_is_known(tmp_path: Path) -> None:
    settings = ModelSettings(cache_dir=str(tmp_path))
    with pytest.raises(ConfigError, match=r"neither a known embedded model \(local:qwen2\.5-coder"):
        make_chat_model(ModelBinding(url="local:nope.gguf"), settings)
    with pytest.raises(ConfigError, match="footnote models pull"):
        make_chat_model(ModelBinding(url="local:llama-7b"), settings)
