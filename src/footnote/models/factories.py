"""Model adapters by URL: `local:<name>` (an embedded llama.cpp GGUF, e5, WordLlama),
`local:<path>.gguf` (any GGUF file: a path, or a file name in the model cache where
`footnote models pull` puts them) or `openai+http(s)://host/v1?model=NAME` (any
OpenAI-compatible server: vLLM, Ollama, llama.cpp's server, hosted APIs). Adapters load lazily."""

from __future__ import annotations

from pathlib import Path

from footnote.config import ModelBinding, ModelSettings
from footnote.errors import ConfigError
from footnote.models.base import ChatModel, Embedder
from footnote.models.weights import GGUF_MODELS, default_cache_dir

EMBEDDERS = ("e5-small", "wordllama")


def is_external(binding: ModelBinding) -> bool:
    """External unless the URL is `local:` (or `binding.external` says otherwise)."""
    if binding.external is not None:
        return binding.external
    return not binding.url.startswith("local:")


def make_chat_model(binding: ModelBinding, settings: ModelSettings) -> ChatModel:
    """The chat adapter a binding names (ConfigError for an unknown URL)."""
    url = binding.url
    if url.startswith("local:") and url.removeprefix("local:") not in GGUF_MODELS:
        from footnote.models.llamacpp import LlamaCppChatModel

        path = gguf_path(url.removeprefix("local:"), settings)
        return LlamaCppChatModel(
            url.removeprefix("local:"),
            model_path=path,
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            prefix_cache_mb=settings.prefix_cache_mb,
        )
    if url.startswith("local:"):
        from footnote.models.llamacpp import LlamaCppChatModel

        return LlamaCppChatModel(
            url.removeprefix("local:"),
            cache_dir=default_cache_dir(settings.cache_dir),
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            prefix_cache_mb=settings.prefix_cache_mb,
        )
    if url.startswith(("openai+http://", "openai+https://")):
        from footnote.models.openai_compat import OpenAICompatChatModel

        return OpenAICompatChatModel(
            url,
            api_key_env=binding.api_key_env,
            timeout_s=binding.timeout_s,
            external=is_external(binding),
        )
    raise ConfigError(f"unsupported model URL {url!r}: use local:<name> or openai+http(s)://…")


def gguf_path(ref: str, settings: ModelSettings) -> Path:
    """The GGUF file a `local:` reference names: a path (absolute, `~`, relative), or a file
    name in the model cache; ConfigError listing what is known otherwise."""
    path = Path(ref).expanduser()
    cache = default_cache_dir(settings.cache_dir)
    for candidate in (path, cache / ref):
        if candidate.suffix == ".gguf" and candidate.is_file():
            return candidate.resolve()
    known = ", ".join(f"local:{n}" for n in sorted(GGUF_MODELS))
    raise ConfigError(
        f"local:{ref} is neither a known embedded model ({known}) nor a .gguf file "
        f"(looked at {path} and {cache / ref}; `footnote models pull` fetches one)"
    )


def make_embedder(binding: ModelBinding, settings: ModelSettings) -> Embedder:
    """The embedding adapter a binding names (ConfigError for an unknown URL)."""
    url = binding.url
    if url == "local:e5-small":
        from footnote.models.embedders import E5Embedder

        return E5Embedder(num_threads=settings.n_threads or None)
    if url == "local:wordllama":
        from footnote.models.embedders import WordLlamaEmbedder

        return WordLlamaEmbedder()
    if url.startswith(("openai+http://", "openai+https://")):
        from footnote.models.openai_compat import OpenAICompatEmbedder

        return OpenAICompatEmbedder(
            url,
            api_key_env=binding.api_key_env,
            timeout_s=binding.timeout_s,
            external=is_external(binding),
        )
    raise ConfigError(
        f"unsupported embedding URL {url!r}; known: "
        + ", ".join(f"local:{n}" for n in EMBEDDERS)
        + ", openai+http(s)://…"
    )
