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


def test_the_prefix_cache_setting_reaches_the_local_model(tmp_path: Path) -> None:
    """`models.prefix_cache_mb` sizes the embedded model's prompt-state cache (its effect on
    the tokens evaluated is shown with the real model in tests/integration/test_models_local.py)."""
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    for mb in (0, 64):
        settings = ModelSettings(cache_dir=str(tmp_path), prefix_cache_mb=mb)
        chat = make_chat_model(ModelBinding(url=f"local:{model}"), settings)
        assert chat.prefix_cache_mb == mb  # type: ignore[attr-defined]
        assert chat.evaluated_tokens() == 0  # type: ignore[attr-defined]  # not loaded yet
    assert ModelSettings().prefix_cache_mb == 512
    for name in ("qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"):
        chat = make_chat_model(ModelBinding(url=f"local:{name}"), ModelSettings(prefix_cache_mb=7))
        assert chat.prefix_cache_mb == 7  # type: ignore[attr-defined]
