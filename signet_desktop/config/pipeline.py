"""`memory.pipelineV2.*`: the non-semantic workers and retrieval features (no extraction runtime).

Pipeline V2 keeps its namespace for document ingest, queue workers, embedding tracking, graph-aware
retrieval, hints, guardrails, repair budgets and retention. The retired extraction, decision and
write-gate stages have no model here: the loader rejects their keys (see `keys.py`), so turning
`enabled` on can never bring them back.
"""

from __future__ import annotations

from typing import Self

from pydantic import AliasChoices, Field, model_validator

from signet_desktop.config.base import CamelConfigModel

SECOND_MS = 1000
MINUTE_MS = 60 * SECOND_MS
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS
MIB = 1024 * 1024
# all-MiniLM-L6-v2 reads 256 tokens ([CLS]/[SEP] included); `embedding/native.py` MAX_SEQ_LENGTH
EMBEDDER_WINDOW = 256
CHUNK_TOKENS = 256
CHUNK_OVERLAP_TOKENS = 32


class WorkerConfig(CamelConfigModel):
    """`worker`: the durable job-queue worker (lease, retry, load shedding)."""

    poll_ms: int = Field(default=2000, ge=100, le=60_000)
    max_retries: int = Field(default=3, ge=1, le=10)
    lease_timeout_ms: int = Field(default=300_000, ge=10 * SECOND_MS, le=600 * SECOND_MS)
    max_load_per_cpu: float = Field(default=0.8, ge=0.1, le=8.0)
    overload_backoff_ms: int = Field(default=30_000, ge=SECOND_MS, le=300_000)
    max_llm_concurrency: int = Field(default=2, ge=1, le=16)


class DocumentsConfig(CamelConfigModel):
    """`documents`: document ingest (fetch, chunk, embed, index)."""

    worker_interval_ms: int = Field(default=10_000, ge=SECOND_MS, le=300 * SECOND_MS)
    # A chunk is at most chunkSize characters and at most chunkTokens tokens of the embedder's
    # window ([CLS]/[SEP] included; the MiniLM tokenizer's count), so its vector reads all of
    # it; the tighter limit wins. The overlap has both limits too.
    chunk_size: int = Field(default=2000, ge=200, le=50_000)
    chunk_overlap: int = Field(default=200, ge=0, le=10_000)
    chunk_tokens: int = Field(default=CHUNK_TOKENS, ge=32, le=EMBEDDER_WINDOW)
    chunk_overlap_tokens: int = Field(default=CHUNK_OVERLAP_TOKENS, ge=0, le=EMBEDDER_WINDOW)
    max_content_bytes: int = Field(default=10 * MIB, ge=1024, le=100 * MIB)
    fetch_timeout_ms: int = Field(default=30_000, ge=SECOND_MS, le=300 * SECOND_MS)
    # Ours, not Signet's: URL fetches refuse loopback, private, link-local and other
    # non-public addresses (each redirect hop too) unless this is set; a daemon that fetches
    # what an agent names must not become a way into the LAN or a cloud metadata endpoint.
    allow_private_networks: bool = False
    max_redirects: int = Field(default=5, ge=0, le=20)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Self:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunkOverlap ({self.chunk_overlap}) must be smaller than "
                f"chunkSize ({self.chunk_size})"
            )
        if self.chunk_overlap_tokens >= self.chunk_tokens - 2:
            raise ValueError(
                f"chunkOverlapTokens ({self.chunk_overlap_tokens}) must be smaller than "
                f"chunkTokens less [CLS] and [SEP] ({self.chunk_tokens - 2})"
            )
        return self


class EmbeddingTrackerConfig(CamelConfigModel):
    """`embeddingTracker`: the loop that embeds missing or stale vectors in small batches."""

    enabled: bool = True
    poll_ms: int = Field(default=5000, ge=SECOND_MS, le=60_000)
    batch_size: int = Field(default=8, ge=1, le=20)


class GraphConfig(CamelConfigModel):
    """`graph`: graph-aware retrieval (the legacy boost when traversal is not primary)."""

    enabled: bool = True
    boost_weight: float = Field(default=0.15, ge=0.0, le=1.0)
    boost_timeout_ms: int = Field(default=500, ge=50, le=5000)


class TraversalConfig(CamelConfigModel):
    """`traversal`: entity/aspect/dependency walks blended into recall."""

    enabled: bool = True
    primary: bool = True
    max_aspects_per_entity: int = Field(default=10, ge=1, le=100)
    max_attributes_per_aspect: int = Field(default=20, ge=1, le=200)
    max_dependency_hops: int = Field(default=10, ge=1, le=200)
    min_dependency_strength: float = Field(default=0.3, ge=0.0, le=1.0)
    max_branching: int = Field(default=4, ge=1, le=50)
    max_traversal_paths: int = Field(default=50, ge=1, le=500)
    min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    timeout_ms: int = Field(default=500, ge=50, le=5000)
    boost_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    constraint_budget_chars: int = Field(default=1000, ge=100, le=10_000)
    # The spec's reserved flat share: direct FTS/vector matches keep this part of the budget
    # (`flatShare`; `flatReserveShare` is accepted as its older name).
    flat_reserve_share: float = Field(
        default=0.4,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices(
            "flatShare", "flatReserveShare", "flat_share", "flat_reserve_share"
        ),
        serialization_alias="flatShare",
    )


class DampeningConfig(CamelConfigModel):
    """`dampening`: the post-fusion corrections (recall/dampening.py), each switchable.

    Defaults as measured on the LoCoMo dev split (docs/RECALL.md, "Graph-aware recall").
    """

    gravity: bool = False
    hub: bool = False
    resolution: bool = False


class RerankerConfig(CamelConfigModel):
    """`reranker`: the post-fusion rerank pass (embedding-based unless a model is named).

    `recall/rerank.py`; on by default: it wins on the LoCoMo dev split and keeps the sanity
    set first-rank (docs/RECALL.md, "Reranking and graph-aware recall on LoCoMo").
    """

    enabled: bool = True
    model: str = ""
    top_n: int = Field(default=20, ge=1, le=100)
    timeout_ms: int = Field(default=2000, ge=100, le=30_000)


class HintsConfig(CamelConfigModel):
    """`hints`: prospective hint indexing (LLM-written future queries, indexed in FTS).

    Off by default, unlike Signet: hints cost a background LLM call per memory, and nothing
    here makes background inference calls unless the user asked for them.
    """

    enabled: bool = False
    max: int = Field(default=5, ge=1, le=10)
    timeout_ms: int = Field(
        default=60_000,
        ge=5 * SECOND_MS,
        le=120 * SECOND_MS,
        validation_alias=AliasChoices("timeout", "timeoutMs", "timeout_ms"),
        serialization_alias="timeout",
    )
    max_tokens: int = Field(default=256, ge=64, le=1024)
    poll_ms: int = Field(
        default=5000, ge=SECOND_MS, le=60_000, validation_alias="poll", serialization_alias="poll"
    )
    # Memories shorter than this get no hints (a few words answer no future question).
    min_content_chars: int = Field(default=40, ge=1, le=10_000)


class GuardrailsConfig(CamelConfigModel):
    """`guardrails`: size limits for stored content, recall output and prompt injection."""

    max_content_chars: int = Field(default=800, ge=50, le=100_000)
    chunk_target_chars: int = Field(default=600, ge=50, le=50_000)
    recall_truncate_chars: int = Field(default=500, ge=50, le=100_000)
    context_budget_chars: int = Field(default=4000, ge=200, le=100_000)


class RepairConfig(CamelConfigModel):
    """`repair`: budgets and cooldowns for operator repair actions."""

    reembed_cooldown_ms: int = Field(default=5 * MINUTE_MS, ge=10 * SECOND_MS, le=HOUR_MS)
    reembed_hourly_budget: int = Field(default=10, ge=1, le=1000)
    requeue_cooldown_ms: int = Field(default=MINUTE_MS, ge=5 * SECOND_MS, le=HOUR_MS)
    requeue_hourly_budget: int = Field(default=50, ge=1, le=1000)
    dedup_cooldown_ms: int = Field(default=10 * MINUTE_MS, ge=10 * SECOND_MS, le=HOUR_MS)
    dedup_hourly_budget: int = Field(default=3, ge=1, le=100)
    dedup_semantic_threshold: float = Field(default=0.92, ge=0.0, le=1.0)
    dedup_batch_size: int = Field(default=100, ge=10, le=1000)


class RetentionConfig(CamelConfigModel):
    """`retention`: the sweep that purges expired tombstones, history and finished jobs.

    Signet compiles these in; we expose them with the same defaults.
    """

    interval_ms: int = Field(default=6 * HOUR_MS, ge=MINUTE_MS, le=7 * DAY_MS)
    tombstone_retention_ms: int = Field(default=30 * DAY_MS, ge=HOUR_MS, le=3650 * DAY_MS)
    history_retention_ms: int = Field(default=180 * DAY_MS, ge=HOUR_MS, le=3650 * DAY_MS)
    completed_job_retention_ms: int = Field(default=14 * DAY_MS, ge=HOUR_MS, le=3650 * DAY_MS)
    dead_job_retention_ms: int = Field(default=30 * DAY_MS, ge=HOUR_MS, le=3650 * DAY_MS)
    batch_limit: int = Field(default=500, ge=1, le=100_000)


class EvidenceStagesConfig(CamelConfigModel):
    """`evidence`: what memories' texts say about time and preference, and where they sit in
    their session, as ranking evidence.

    `recall/time_evidence.py` (stage `time`), `recall/preference_evidence.py` (stage
    `preference`) and `recall/neighbour_evidence.py` (stage `neighbours`); cues are read at
    write time either way (storage/memory_cues.py). Defaults as measured on both dev sets
    (docs/RECALL.md, "Time as evidence", "Preferences", "Lists and neighbouring turns"):
    `neighbours` raises LoCoMo but lowers LongMemEval, so it is off unless asked for.
    """

    time: bool = True
    preference: bool = True
    neighbours: bool = False


class PipelineV2Config(CamelConfigModel):
    """`memory.pipelineV2`: switches and settings of the non-semantic workers."""

    enabled: bool = True
    paused: bool = False
    shadow_mode: bool = False
    mutations_frozen: bool = False
    allow_remote_providers: bool = True
    worker: WorkerConfig = WorkerConfig()
    documents: DocumentsConfig = DocumentsConfig()
    embedding_tracker: EmbeddingTrackerConfig = EmbeddingTrackerConfig()
    graph: GraphConfig = GraphConfig()
    traversal: TraversalConfig = TraversalConfig()
    dampening: DampeningConfig = DampeningConfig()
    reranker: RerankerConfig = RerankerConfig()
    evidence: EvidenceStagesConfig = EvidenceStagesConfig()
    hints: HintsConfig = HintsConfig()
    guardrails: GuardrailsConfig = GuardrailsConfig()
    repair: RepairConfig = RepairConfig()
    retention: RetentionConfig = RetentionConfig()
