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

from pydantic import BaseModel, Field, ValidationError

from footnote.config.answering import AnsweringSettings as AnsweringSettings
from footnote.config.base import _Section
from footnote.config.environment import ENV_PREFIX as ENV_PREFIX
from footnote.config.environment import env_overrides
from footnote.config.export import ExportSettings as ExportSettings
from footnote.config.graph import GraphSettings as GraphSettings
from footnote.config.ingest import IngestSettings as IngestSettings
from footnote.config.jobs import JobsSettings as JobsSettings
from footnote.config.research import ResearchSettings as ResearchSettings
from footnote.errors import ConfigError

CONFIG_FILENAME = "config.toml"


class StoreSettings(_Section):
    """Where documents, blocks, sessions and traces are kept."""

    url: str = Field(
        "",
        description="Store URL. Empty means `sqlite:///<workspace>/footnote.db` (embedded default); "
        "`postgresql://…` selects the server store (PostgreSQL with pgvector).",
    )
    pool_size: int = Field(
        8, ge=1, le=200, description="Most PostgreSQL connections one process keeps open."
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
        description="Optional reranker for `retrieval.rerank`: a chat model scoring each passage "
        "yes/no against the query (unbound by default: the `judge` role is used).",
    )
    cache_dir: str = Field(
        "",
        description="Where assembled model files live. Empty means `$XDG_CACHE_HOME/footnote/models` "
        "(`~/.cache/footnote/models`).",
    )
    n_threads: int = Field(0, ge=0, description="CPU threads for local models (0: all cores).")
    n_ctx: int = Field(8192, ge=512, description="Context window for the local generative model.")
    prefix_cache_mb: int = Field(
        512,
        ge=0,
        description="MB of recent prompt states the local generative model keeps, so a prompt "
        "that starts like an earlier one (the roles' system prompts) evaluates only its new tail "
        "(0: off; llama.cpp then reuses only the previous call's prefix).",
    )
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
        description="Entries in the in-process cache of temperature-0 structured, judge and "
        "answer-drafting completions (0: off).",
    )
    response_cache_url: str = Field(
        "",
        description="Keep the response cache in Redis (`redis://host:6379/0`), shared by every "
        "process and API replica; empty: in this process (`response_cache_size` entries).",
    )
    response_cache_ttl_s: int = Field(
        86_400, ge=1, description="Seconds an entry of a Redis response cache is kept."
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
    rerank: bool = Field(
        False,
        description="Rerank the first 12 fused hits by P(the passage answers the query), asked of "
        "the `rerank` role when bound, else the `judge` role (one model call per hit).",
    )
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
    ann_build_memory_mb: int = Field(
        2048,
        ge=1,
        description="PostgreSQL only: maintenance_work_mem of the statement that builds a "
        "model's HNSW index (the build is far faster while the graph fits; ~2 KB per 384-d "
        "vector).",
    )
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
    evidence_k: int = Field(
        4, ge=1, le=20, description="Evidence items shown to the composing model."
    )
    max_question_chars: int = Field(
        2000, ge=10, description="Longer questions are refused with a clear message."
    )
    use_judge: bool = Field(
        True, description="Ask the `judge` role for each citation when it is bound and available."
    )
    max_tokens: int = Field(
        20_000, ge=100, description="Token budget of one ask run (every model call counts)."
    )
    max_model_calls: int = Field(60, ge=1, description="Model calls one ask run may make.")
    max_seconds: float = Field(300.0, gt=0, description="Wall-clock budget of one ask run.")


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
        "",
        description="Redis URL for the message window (empty: in-process cache) and, with a "
        "PostgreSQL store, for relaying run events between API replicas.",
    )
    run_lease_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a replica's lease on a run it executes lasts unrenewed "
        "(a run whose replica died is closed this long after).",
    )
    research_jobs: bool = Field(
        False,
        description="Run research runs started over HTTP as `research` jobs on the job queue "
        "(`jobs.url`): `footnote worker` processes (and this server's `jobs.server_threads`) "
        "execute them, any replica streams them from the store, and they outlive a restart of "
        "the API process. Off: the API process that starts a run drives it.",
    )
    max_upload_mb: float = Field(50.0, gt=0, description="Largest accepted upload in MiB.")
    ingest_workers: int = Field(
        2,
        ge=1,
        le=64,
        description="Uploads this server ingests at once: each user's uploads wait in their own "
        "queue and are ingested one at a time, and a free slot goes to the waiting user served "
        "longest ago (round-robin), so one user's large or hostile files hold at most one slot. "
        "The server's own job threads are raised to this when `jobs.server_threads` > 0.",
    )
    sse_ping_s: float = Field(
        15.0, gt=0, description="Seconds between SSE heartbeat comments on an idle stream."
    )
    probes_need_key: bool = Field(
        False,
        description="With API keys, `/metrics` and `/v1/health` need a key too (off: open to "
        "load balancers and scrapers; bind them apart with a proxy).",
    )
    local_user: str = Field(
        "local",
        description="User id of every request when no API key exists (embedded single-user mode).",
    )
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="Host names (besides localhost, 127.0.0.1, ::1 and `host`) accepted in the "
        "Host header in single-user mode (DNS-rebinding protection); `*` accepts any.",
    )
    max_runs_in_flight: int = Field(4, ge=1, description="Runs one user may have running at once.")
    max_runs_total: int = Field(
        32,
        ge=1,
        description="Runs executing at once for all users together (on every replica when runs "
        "are relayed): the model queue's depth. A run over it gets 429 with Retry-After.",
    )
    max_runs_per_minute: int = Field(30, ge=1, description="Runs one user may start per minute.")
    max_sessions_per_minute: int = Field(
        30, ge=1, description="Sessions one user may create per minute."
    )
    max_upload_mb_per_day: float = Field(
        1000.0, gt=0, description="MiB one user may upload per day."
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
    max_tokens: int = Field(
        4000, ge=100, description="Token budget of a turn's own model calls (rewrite, summary)."
    )
    max_model_calls: int = Field(4, ge=1, description="Model calls a turn may make itself.")


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


class ReproduceSettings(_Section):
    """Experiment-settings tables (`footnote settings`) and cross-checks."""

    extractor: str = Field(
        "auto",
        pattern="^(auto|rules|model|hybrid)$",
        description="Who proposes values: `rules` (patterns, no model), `model` (the `role` model "
        "over the passages that mention a setting), `hybrid` (both), or `auto` (hybrid when the "
        "role is bound, else rules). Every value passes the citation checks either way.",
    )
    role: str = Field("compose", description="Model role that extracts settings.")
    candidates: int = Field(
        4, ge=1, le=20, description="Passages shown to the model per group of settings."
    )
    crosscheck_tolerance: float = Field(
        1.0,
        gt=0,
        description="Multiplier of the rounding tolerance of a cross-check (half a unit of the "
        "stated value's last digit plus the inputs' rounding); above 1 reports fewer mismatches.",
    )


class SandboxSettings(_Section):
    """The code sandbox of the agent's `run_python` tool and `footnote compute`."""

    cpu_seconds: int = Field(5, ge=1, le=120, description="CPU seconds one snippet may use.")
    wall_seconds: float = Field(
        15.0, gt=0, le=600, description="Wall-clock seconds before a snippet is killed."
    )
    memory_mb: int = Field(256, ge=32, description="Address-space limit of a snippet, in MiB.")
    output_chars: int = Field(
        20_000, ge=100, description="Characters a snippet may print before it is stopped."
    )
    python: str = Field(
        "",
        description="Interpreter run inside the sandbox; empty: the system Python "
        "(/usr/bin/python3). Must not lie under the home folder.",
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


class TelemetrySettings(_Section):
    """Traces and metrics for an observability stack."""

    otlp_endpoint: str = Field(
        "",
        description="OTLP/HTTP traces endpoint (e.g. `http://127.0.0.1:4318/v1/traces`); every "
        "run, pipeline stage, model call, tool call and check becomes a span. Empty: off. "
        "Headers (e.g. for Langfuse) come from `OTEL_EXPORTER_OTLP_HEADERS`.",
    )
    service_name: str = Field("footnote", description="`service.name` of the exported spans.")
    export_text: bool = Field(
        False,
        description="Export the text a span recorded (questions, model outputs, sentences, "
        "quotes). Off: only names, ids, numbers and verdicts leave the process (each text "
        "attribute becomes its length, `<key>.chars`), so document text — labelled "
        "`no-external-model` or not — never reaches the collector.",
    )
    metrics: bool = Field(
        True,
        description="Keep Prometheus metrics (runs, latency, tokens, refusals, fabricated ids, "
        "errors); `footnote serve` serves them at `/metrics`.",
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
    telemetry: TelemetrySettings = Field(
        default_factory=TelemetrySettings, description="Traces and metrics."
    )
    reproduce: ReproduceSettings = Field(
        default_factory=ReproduceSettings, description="Settings tables and cross-checks."
    )
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings, description="Code sandbox.")
    research: ResearchSettings = Field(
        default_factory=ResearchSettings, description="Research briefs."
    )
    answering: AnsweringSettings = Field(
        default_factory=AnsweringSettings, description="How ask answers and refuses."
    )
    export: ExportSettings = Field(default_factory=ExportSettings, description="Exports.")
    jobs: JobsSettings = Field(default_factory=JobsSettings, description="Background jobs.")

    @property
    def store_url(self) -> str:
        """The effective store URL."""
        return self.store.url or f"sqlite:///{self.workspace / 'footnote.db'}"


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def shared_data_candidates() -> list[Path]:
    """Where the shared datasets may be when no `data_dir` is set: a `shared/data` folder beside
    the source checkout or any folder above it (worktrees sit deeper), then `./shared/data`
    (the one home of that rule). The first that exists is used."""
    here = Path(__file__).resolve()
    return [p / "shared" / "data" for p in here.parents[3:]] + [Path("shared/data").resolve()]


def load_settings(
    workspace: Path | str | None = None,
    overrides: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build settings from defaults, `<workspace>/config.toml`, the environment and overrides."""
    env = dict(os.environ if environ is None else environ)
    env_tree = env_overrides(env, Settings)
    ws = Path(workspace or env_tree.get("workspace") or Settings.model_fields["workspace"].default)
    env_tree.pop("workspace", None)
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
