"""One typed settings tree. Every field is documented; `footnote config show` prints it.

Precedence (highest first): explicit overrides passed by code or CLI flags,
environment variables `FOOTNOTE_<SECTION>__<FIELD>` (e.g. `FOOTNOTE_INGEST__MAX_FILE_MB=50`),
the workspace's `config.toml`, then the defaults below. Nothing defaults to a remote
service: every backend is embedded unless a URL in the config says otherwise.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from footnote.errors import ConfigError

ENV_PREFIX = "FOOTNOTE_"
CONFIG_FILENAME = "config.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StoreSettings(_Section):
    """Where documents, blocks, sessions and traces are kept."""

    url: str = Field(
        "",
        description="Store URL. Empty means `sqlite:///<workspace>/footnote.db` (embedded default); "
        "`postgresql://…` selects the server store where implemented.",
    )


class IngestSettings(_Section):
    """Limits and behaviour of document ingestion."""

    max_file_mb: float = Field(100.0, gt=0, description="Refuse files larger than this many MiB.")
    max_pages: int = Field(2000, gt=0, description="Refuse PDFs with more pages than this.")
    max_block_chars: int = Field(
        1500, gt=100, description="Split paragraphs longer than this at sentence boundaries."
    )
    min_block_chars: int = Field(
        40, ge=0, description="Merge paragraph fragments shorter than this into a neighbour."
    )
    pdf_password: str = Field("", description="Password tried for encrypted PDFs.")
    default_labels: tuple[str, ...] = Field(
        (), description="Labels given to every ingested source (e.g. `no-external-model`)."
    )
    default_acl_groups: tuple[str, ...] = Field(
        (), description="ACL groups given to every ingested source; empty means public."
    )


class ModelBinding(_Section):
    """One role's model: an embedded model name, or an OpenAI-compatible URL."""

    url: str = Field(
        "",
        description="`local:<name>` for an embedded model, `openai+http(s)://host/v1?model=NAME` "
        "for an OpenAI-compatible server, or empty for unbound.",
    )
    api_key_env: str = Field(
        "", description="Name of the environment variable that holds the API key (never the key)."
    )
    external: bool | None = Field(
        None,
        description="Mark the model as external (None: decided from the URL: non-local is external).",
    )
    timeout_s: float = Field(120.0, gt=0, description="Per-call timeout in seconds.")


def _binding(url: str) -> ModelBinding:
    return ModelBinding(url=url)


class ModelSettings(_Section):
    """Model roles, each bound explicitly. Nothing falls back to a remote model silently."""

    understand: ModelBinding = Field(
        default_factory=lambda: _binding("local:qwen2.5-coder-1.5b"),
        description="Classifies questions and extracts key terms.",
    )
    compose: ModelBinding = Field(
        default_factory=lambda: _binding("local:qwen2.5-coder-1.5b"),
        description="Writes answers that cite evidence ids.",
    )
    judge: ModelBinding = Field(
        default_factory=lambda: _binding("local:qwen2.5-coder-1.5b"),
        description="Yes/no support probability of a claim given a passage.",
    )
    summarise: ModelBinding = Field(
        default_factory=lambda: _binding("local:qwen2.5-coder-1.5b"),
        description="Folds older chat turns into a running summary.",
    )
    cypher: ModelBinding = Field(
        default_factory=lambda: _binding("local:qwen2.5-coder-1.5b"),
        description="Generates Cypher for graph questions outside the template whitelist.",
    )
    cypher_fallback: ModelBinding = Field(
        default_factory=lambda: _binding(""),
        description="A stronger model tried after `cypher` fails (unbound by default).",
    )
    embed: ModelBinding = Field(
        default_factory=lambda: _binding("local:e5-small"),
        description="Embeddings for vector search: `local:e5-small` (multilingual) or `local:wordllama`.",
    )
    rerank: ModelBinding = Field(
        default_factory=lambda: _binding(""),
        description="Optional reranker (unbound by default).",
    )
    cache_dir: str = Field(
        "",
        description="Where assembled model files live. Empty means `$XDG_CACHE_HOME/footnote/models` "
        "(`~/.cache/footnote/models`).",
    )
    n_threads: int = Field(0, ge=0, description="CPU threads for local models (0: all cores).")
    n_ctx: int = Field(8192, ge=512, description="Context window for the local generative model.")
    allow_local_reroute: bool = Field(
        False,
        description="When labelled text may not reach a role's external model, use the local model "
        "instead of refusing.",
    )
    reroute_local: str = Field(
        "local:qwen2.5-coder-1.5b",
        description="The embedded model used instead of an external one when `allow_local_reroute` "
        "is on and labelled text may not leave the machine (must be a `local:` URL).",
    )
    response_cache_size: int = Field(
        512,
        ge=0,
        description="Entries in the in-process cache of temperature-0 structured and "
        "judge completions (0: off).",
    )
    embed_cache_size: int = Field(
        10_000,
        ge=0,
        description="Entries in the in-process LRU of embedding vectors (0: off).",
    )


class RetrievalSettings(_Section):
    """Hybrid search."""

    k: int = Field(8, ge=1, le=200, description="Number of hits returned by default.")
    candidates: int = Field(50, ge=1, description="Candidates fetched per method before fusion.")
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    vector_weight: float = Field(
        2.0,
        ge=0,
        description="Weight of the vector ranking in fusion (2: measured best on QASPER).",
    )
    lexical_weight: float = Field(1.0, ge=0, description="Weight of the lexical ranking in fusion.")
    mmr_lambda: float = Field(
        0.8, ge=0, le=1, description="Maximal-marginal-relevance trade-off (1: relevance only)."
    )
    ann_threshold: int = Field(
        50_000, ge=0, description="Use the approximate (HNSW) index above this many vectors."
    )
    lexical_memory_threshold: int = Field(
        20_000,
        ge=0,
        description="Above this many indexed blocks, lexical search scores FTS5's bm25() on "
        "in-memory posting arrays kept beside the store (same results, milliseconds at a million "
        "blocks) instead of inside SQLite.",
    )
    neighbours: int = Field(1, ge=0, description="Adjacent blocks attached to each hit as context.")
    rerank: bool = Field(False, description="Rerank fused hits with the judge role.")
    fusion: str = Field(
        "rrf",
        pattern="^(rrf|linear)$",
        description="How rankings are fused: weighted reciprocal-rank fusion, or a weighted sum "
        "of min-max-normalised scores.",
    )
    embed_batch: int = Field(32, ge=1, description="Blocks embedded per model call when indexing.")
    duplicate_cosine: float = Field(
        0.97, ge=0, le=1, description="MMR drops a hit this cosine-similar to one already chosen."
    )
    ann_connectivity: int = Field(16, ge=4, description="HNSW graph degree (M).")
    ann_expansion_add: int = Field(128, ge=8, description="HNSW ef at build time.")
    ann_expansion_search: int = Field(64, ge=8, description="HNSW ef at query time (minimum).")
    filtered_exact_max: int = Field(
        50_000,
        ge=0,
        description="A filtered vector search whose allowed set is at most this many vectors (or "
        "under 5% of them) is answered exactly over that set instead of through the HNSW index.",
    )


class AskSettings(_Section):
    """The ask pipeline."""

    mode: str = Field(
        "auto",
        pattern="^(auto|cite|attach|extractive)$",
        description="Compose mode: `cite` (the model cites ids in structured output), `attach` (the "
        "model writes, code attaches citations), `extractive` (no generative model: sentences "
        "selected from the evidence), or `auto` (chosen by probing the bound model).",
    )
    understand: str = Field(
        "rules",
        pattern="^(rules|model)$",
        description="Classify questions with fast rules, or with the `understand` model role.",
    )
    evidence_k: int = Field(
        4, ge=1, le=20, description="Evidence items shown to the composing model."
    )
    max_question_chars: int = Field(
        2000, ge=10, description="Longer questions are refused with a clear message."
    )
    use_judge: bool = Field(
        True, description="Ask the `judge` role for each citation when it is bound and available."
    )


class VerifySettings(_Section):
    """Citation checks and refusal policy."""

    relevance_threshold: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Below this question relevance (0–1) nothing counts as evidence (no_evidence).",
    )
    cosine_floor: float | None = Field(
        None,
        description="Vector cosine mapped to relevance 0; None: the embedder's measured band "
        "(e5 squeezes cosines into ~0.75–0.92, WordLlama spreads them over ~0.1–0.65).",
    )
    cosine_ceiling: float | None = Field(
        None, description="Vector cosine mapped to relevance 1; None: the embedder's band."
    )
    supported_threshold: float = Field(
        0.6, ge=0, le=1, description="Judge probability at or above which a citation is supported."
    )
    weak_threshold: float = Field(
        0.3, ge=0, le=1, description="Judge probability at or above which a citation is weak."
    )
    max_revisions: int = Field(2, ge=0, le=2, description="Revision rounds for weak sentences.")


class ServerSettings(_Section):
    """The HTTP service."""

    host: str = Field("127.0.0.1", description="Interface to bind.")
    port: int = Field(8765, ge=1, le=65535, description="Port to bind.")
    redis_url: str = Field(
        "", description="Redis URL for the message window; empty: in-process cache."
    )
    max_upload_mb: float = Field(50.0, gt=0, description="Largest accepted upload in MiB.")
    sse_ping_s: float = Field(
        15.0, gt=0, description="Seconds between SSE heartbeat comments on an idle stream."
    )
    local_user: str = Field(
        "local",
        description="User id of every request when no API key exists (embedded single-user mode).",
    )


class ChatSettings(_Section):
    """Conversations: question rewriting, memory and the recent-message window."""

    history_turns: int = Field(8, ge=0, description="Recent turns kept verbatim in the memory.")
    memory_tokens: int = Field(
        1500, ge=100, description="Token budget of the summary plus the verbatim turns."
    )
    summary_tokens: int = Field(200, ge=20, description="Longest running summary, in tokens.")
    rewrite: str = Field(
        "auto",
        pattern="^(auto|always|never)$",
        description="Rewrite follow-ups into standalone questions: `auto` only when the question "
        "has pronoun or ellipsis cues, `always`, or `never`.",
    )
    rewrite_role: str = Field(
        "summarise",
        pattern="^(summarise|understand)$",
        description="Model role that rewrites follow-up questions.",
    )
    window_messages: int = Field(
        20, ge=1, description="Messages per session kept in the Redis / in-process window."
    )
    window_ttl_s: int = Field(3600, ge=1, description="Seconds a session's window lives unused.")
    window_sessions: int = Field(
        10_000, ge=1, description="Sessions held by the in-process window (LRU) when no Redis."
    )


class AgentSettings(_Section):
    """The ReAct agent loop (`mode: agent`)."""

    role: str = Field("compose", description="Model role that drives the agent loop.")
    max_steps: int = Field(6, ge=1, le=50, description="Tool-using steps before the loop stops.")
    max_retries: int = Field(3, ge=0, description="Retries of one failing tool call.")
    max_tokens: int = Field(12_000, ge=100, description="Token budget of one agent run.")
    max_seconds: float = Field(180.0, gt=0, description="Wall-clock budget of one agent run.")
    tool_cache_ttl_s: float = Field(
        300.0, ge=0, description="Seconds a tool result is reused for the same arguments (0: off)."
    )


class EvalSettings(_Section):
    """The evaluation harness (`footnote eval`)."""

    parallel: int = Field(
        1, ge=1, le=32, description="Cases run at once (1: the embedded model is single-instance)."
    )
    judge_citations: bool = Field(
        True,
        description="Also judge every output citation with the `judge` role (ALCE-style citation "
        "precision/recall); the deterministic checks are always scored.",
    )
    data_dir: str = Field(
        "",
        description="Folder of the shared datasets used by named loaders (`qasper-leval`, `paperqa` "
        "…). Empty: `../shared/data` next to the source checkout, then `./shared/data`.",
    )
    cache_dir: str = Field(
        "",
        description="Where papers given as text are written as files before ingestion. Empty: "
        "`<workspace>/eval-cache`.",
    )
    calibration_buckets: int = Field(
        5, ge=2, le=20, description="Equal-width support-score buckets in the calibration table."
    )


class GraphSettings(_Section):
    """Graph question answering (text to Cypher) and the graph stores."""

    dir: str = Field("", description="Folder of graphs. Empty: `<workspace>/graphs`.")
    url: str = Field(
        "",
        description="Graph backend: empty for embedded LadybugDB (`<dir>/<name>/db.lbug`), or "
        "`falkor://host:port` for a FalkorDB server (needs the `falkordb` extra).",
    )
    row_limit: int = Field(200, ge=1, description="Most result rows kept from one query.")
    timeout_s: float = Field(10.0, gt=0, description="Per-query timeout in seconds.")
    understand: str = Field(
        "auto",
        pattern="^(auto|rules|model)$",
        description="Understand questions with the `understand` role (`model`), with rules over "
        "intent keywords and entity names (`rules`), or the model when bound (`auto`).",
    )
    answer: str = Field(
        "auto",
        pattern="^(auto|template|model)$",
        description="Compose answers from rows with the `compose` role (`model`), deterministic "
        "templates (`template`), or the model when bound (`auto`).",
    )
    min_confidence: float = Field(
        0.5, ge=0, le=1, description="Below this intent confidence, ask a clarifying question."
    )
    retries: int = Field(
        1, ge=0, le=3, description="Retries of the `cypher` role with the error before fallback."
    )
    min_cosine: float = Field(
        0.83, ge=-1, le=1, description="Least cosine for a vector entity match (e5 scale)."
    )
    ambiguity_margin: float = Field(
        0.015, ge=0, description="Vector candidates this close to the best one are ambiguous."
    )
    answer_rows: int = Field(10, ge=1, description="Rows shown to the answer composer.")
    data_dir: str = Field(
        "",
        description="Folder of the shared datasets for `graph demo` (neo4j-example-graphs). "
        "Empty: `../shared/data` next to the source checkout, then `./shared/data`.",
    )


class Settings(_Section):
    """The whole configuration tree."""

    workspace: Path = Field(
        Path(".footnote"), description="Workspace folder holding the store, indexes and runs."
    )
    store: StoreSettings = Field(default_factory=StoreSettings, description="Persistence.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Ingestion.")
    models: ModelSettings = Field(default_factory=ModelSettings, description="Model roles.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="Search.")
    ask: AskSettings = Field(default_factory=AskSettings, description="Question answering.")
    verify: VerifySettings = Field(default_factory=VerifySettings, description="Checks.")
    server: ServerSettings = Field(default_factory=ServerSettings, description="HTTP service.")
    graph: GraphSettings = Field(default_factory=GraphSettings, description="Graph QA.")
    chat: ChatSettings = Field(default_factory=ChatSettings, description="Conversations.")
    agent: AgentSettings = Field(default_factory=AgentSettings, description="Agent loop.")
    eval: EvalSettings = Field(default_factory=EvalSettings, description="Evaluation harness.")

    @property
    def store_url(self) -> str:
        """The effective store URL."""
        return self.store.url or f"sqlite:///{self.workspace / 'footnote.db'}"


def _set_path(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        if path:
            _set_path(tree, path, value)
    return tree


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_settings(
    workspace: Path | str | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build settings from defaults, `<workspace>/config.toml`, the environment and overrides."""
    env = dict(os.environ if environ is None else environ)
    env_tree = _env_overrides(env)
    ws = Path(workspace or env_tree.get("workspace") or Settings.model_fields["workspace"].default)
    tree: dict[str, Any] = {}
    config_file = ws / CONFIG_FILENAME
    if config_file.is_file():
        try:
            tree = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_file}: {exc}") from exc
    tree = _merge(_merge(tree, env_tree), overrides or {})
    tree["workspace"] = ws
    try:
        return Settings.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc


def describe(model: type[BaseModel] = Settings, prefix: str = "") -> list[tuple[str, str, str]]:
    """(dotted name, type, description) of every leaf field, for docs and `config show`."""
    rows: list[tuple[str, str, str]] = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        dotted = f"{prefix}{name}"
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            rows += describe(ann, dotted + ".")
        else:
            rows.append((dotted, getattr(ann, "__name__", str(ann)), info.description or ""))
    return rows
