"""Pydantic models of agent.yaml: `SignetConfig` and its sections.

YAML keys follow Signet: snake_case under `embedding` and `search`, camelCase under `memory`,
`hooks`, `auth` and `inference` (Python attributes are snake_case everywhere). Every model is
frozen and rejects keys it does not know; the loader decides beforehand which keys are retired
(error), known-but-ignored (listed) or unknown (warned), so validation only sees real settings.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, BeforeValidator, Field, SecretStr

from signet_desktop.config.base import CamelConfigModel, ConfigModel
from signet_desktop.config.files import FilesConfig
from signet_desktop.config.inference import (
    InferenceAccount,
    InferenceConfig,
    InferenceTarget,
    InferenceWorkloads,
    WorkloadBinding,
)
from signet_desktop.config.pipeline import HOUR_MS, MINUTE_MS, SECOND_MS, PipelineV2Config
from signet_desktop.config.sections import (
    AuthConfig,
    HooksConfig,
    PreCompactionHookConfig,
    RateLimitRule,
    SessionStartHookConfig,
    UserPromptSubmitHookConfig,
)
from signet_desktop.config.storage import StorageConfig

__all__ = [
    "AuthConfig",
    "DreamingConfig",
    "EmbeddingConfig",
    "EmbeddingPrecision",
    "EmbeddingProviderName",
    "FilesConfig",
    "HooksConfig",
    "InferenceAccount",
    "InferenceConfig",
    "InferenceTarget",
    "InferenceWorkloads",
    "MemoryConfig",
    "PipelineV2Config",
    "PreCompactionHookConfig",
    "RateLimitRule",
    "SearchConfig",
    "SessionStartHookConfig",
    "SignetConfig",
    "StorageConfig",
    "UserPromptSubmitHookConfig",
    "WorkloadBinding",
]

EmbeddingProviderName = Literal["native", "ollama", "openai", "llama-cpp", "hash", "none"]
# The native embedder's dense layers (embedding/graphs.py PRECISIONS); each is its own
# generation of vectors, so changing it re-embeds every memory in the background.
EmbeddingPrecision = Literal["int8", "float32"]

DEFAULT_BASE_URLS: dict[str, str] = {
    "ollama": "http://localhost:11434",
    "llama-cpp": "http://localhost:8080",
    "openai": "https://api.openai.com/v1",
}


def _key(name: str) -> dict[str, str]:
    # A camelCase YAML key on a snake_case section. Not `alias=`: type checkers would then
    # demand the camelCase name as the constructor keyword.
    return {"validation_alias": name, "serialization_alias": name}


def _normalise_provider(value: object) -> object:
    if not isinstance(value, str):
        return value
    name = value.strip().lower()
    return "native" if name == "local" else name


class EmbeddingConfig(ConfigModel):
    """`embedding`: which embedder produces vectors. Default: in-process all-MiniLM-L6-v2."""

    provider: Annotated[EmbeddingProviderName, BeforeValidator(_normalise_provider)] = "native"
    model: str = Field(default="all-MiniLM-L6-v2", min_length=1)
    dimensions: int = Field(default=384, ge=1, le=8192)
    precision: EmbeddingPrecision = "int8"  # native only; the others ignore it
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("base_url", "endpoint")
    )
    api_key: SecretStr | None = None
    timeout_ms: int = Field(default=10_000, ge=100, le=300_000)
    batch_size: int = Field(default=32, ge=1, le=1024)
    prompt_submit_timeout_ms: int = Field(
        default=1000, ge=1000, le=300_000, alias="promptSubmitTimeoutMs"
    )
    llama_cpp_max_input_tokens: int = Field(
        default=1400, ge=128, le=131_072, alias="llamaCppMaxInputTokens"
    )

    def effective_base_url(self) -> str | None:
        """The configured base URL, or the provider's usual local/default endpoint."""
        return self.base_url or DEFAULT_BASE_URLS.get(self.provider)


class SearchTelemetryConfig(CamelConfigModel):
    """`search.telemetry`: the opt-in, local-only recall ledger (ids and scores, no content)."""

    enabled: bool = False
    retention_days: int = Field(default=30, ge=1, le=3650)
    max_rows_per_agent: int = Field(default=10_000, ge=100, le=1_000_000)


class SearchConfig(ConfigModel):
    """`search`: hybrid recall tuning (docs/RECALL.md says how each default was measured).

    `top_k` is each channel's candidate depth (Signet's default is 20; 50 measured as good or
    better on LoCoMo and gives the session-neighbour signal more neighbours to find). Signet's
    rehearsal and temporal-prior keys are accepted and listed by `signet doctor` as not applied.
    """

    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    top_k: int = Field(default=50, ge=1, le=1000)
    # Hits scored below it are dropped; 0.01 drops only candidates with no evidence above the
    # noise (a weak hit is kept and marked `weak`, docs/RECALL.md "Relevance: weak hits").
    min_score: float = Field(default=0.01, ge=0.0, le=1.0)
    who_boost: float = Field(default=0.15, ge=0.0, le=1.0)  # the query names the memory's who
    session_weight: float = Field(default=0.25, ge=0.0, le=1.0)  # lent by session neighbours
    vector_fallback_window: int = Field(default=10_000, ge=100, le=10_000_000)
    # Partitions up to this many vectors are searched exactly; above it, the HNSW index
    # (`vector_ann_index`) or the binary prefilter (docs/RECALL.md, "The semantic channel").
    vector_exact_max_rows: int = Field(default=200_000, ge=0, le=100_000_000)
    vector_ann_index: bool = True
    telemetry: SearchTelemetryConfig = SearchTelemetryConfig()


class DreamingConfig(CamelConfigModel):
    """`memory.dreaming`: the scheduled, bounded LLM consolidation pass. Off by default."""

    enabled: bool = False
    token_threshold: int = Field(default=100_000, ge=10_000, le=1_000_000)
    max_interval_ms: int = Field(default=6 * HOUR_MS, ge=10 * MINUTE_MS, le=7 * 24 * HOUR_MS)
    timeout_ms: int = Field(
        default=20 * MINUTE_MS,
        ge=30 * SECOND_MS,
        le=2 * HOUR_MS,
        validation_alias=AliasChoices("timeoutMs", "timeout"),
    )
    max_input_tokens: int = Field(default=128_000, ge=8_000, le=1_000_000)
    max_output_tokens: int = Field(default=16_000, ge=1_000, le=128_000)
    backfill_on_first_run: bool = True
    check_interval_ms: int = Field(default=5 * MINUTE_MS, ge=10 * SECOND_MS, le=HOUR_MS)
    # Bounds of one pass's agent loop and its writes (the apply seam enforces the caps).
    max_turns: int = Field(default=40, ge=1, le=500)
    max_tool_calls: int = Field(default=200, ge=1, le=2_000)
    max_ops_per_request: int = Field(default=100, ge=1, le=100)
    max_ops_per_pass: int = Field(default=500, ge=1, le=10_000)
    # Scheduled sweeps defer under pressure: pending jobs above this, or load per CPU above.
    max_pending_jobs: int = Field(default=1_000, ge=1, le=1_000_000)
    max_load_per_cpu: float = Field(default=0.8, gt=0.0, le=64.0)
    # Failed passes back off per agent: base doubling per failure up to the maximum.
    failure_backoff_ms: int = Field(default=5 * MINUTE_MS, ge=SECOND_MS, le=24 * HOUR_MS)
    max_failure_backoff_ms: int = Field(default=6 * HOUR_MS, ge=SECOND_MS, le=7 * 24 * HOUR_MS)


class MemoryConfig(CamelConfigModel):
    """`memory`: the pipeline workers and Dreaming."""

    pipeline_v2: PipelineV2Config = PipelineV2Config()
    dreaming: DreamingConfig = DreamingConfig()


def _boolean_flags(value: object) -> object:
    """`features:` as Signet reads it: booleans (or "true"/"false"); anything else dropped."""
    if not isinstance(value, dict):
        return value
    words = {"true": True, "false": False}
    return {
        str(key): flag if isinstance(flag, bool) else words[flag]
        for key, flag in value.items()
        if isinstance(flag, bool) or flag in words
    }


FeatureFlags = Annotated[dict[str, bool], BeforeValidator(_boolean_flags)]


class SignetConfig(ConfigModel):
    """The whole agent.yaml. Only composition roots hold it; others receive one section."""

    embedding: EmbeddingConfig = EmbeddingConfig()
    search: SearchConfig = SearchConfig()
    memory: MemoryConfig = MemoryConfig()
    auth: AuthConfig = AuthConfig()
    hooks: HooksConfig = HooksConfig()
    inference: InferenceConfig = InferenceConfig()
    files: FilesConfig = FilesConfig()
    storage: StorageConfig = StorageConfig()
    # Signet's feature flags, served as they are at GET /api/features (none of them switches
    # anything in this daemon: they are the user's, kept for Signet's clients)
    features: FeatureFlags = Field(default_factory=dict)
