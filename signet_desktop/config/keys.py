"""Declarative tables of agent.yaml keys that are retired, known-but-ignored, or relocated.

Paths are dotted YAML key paths; a `*` segment matches any one key. The loader consults these
tables before validation: a retired key is a startup error naming its replacement, an ignored
key is accepted and listed by `signet doctor`, a relocated (old flat) key is moved to its
nested home unless the nested key is also set.
"""

from __future__ import annotations

from dataclasses import dataclass

KeyPath = tuple[str, ...]

_P2 = "memory.pipelineV2"

_EXTRACTION = (
    "semantic extraction was replaced by Dreaming; configure the model under "
    "inference.workloads (memoryExtraction)"
)
_SYNTHESIS = (
    "session synthesis no longer has its own provider; configure the model under "
    "inference.workloads (sessionSynthesis)"
)
_WRITE_GATE = (
    "there is no write gate any more: every save is kept as episodic evidence and Dreaming "
    "decides what becomes semantic memory; remove this setting"
)
_DURABILITY = (
    "there are no durability modes any more: a memory is always committed to SQLite (WAL) "
    "before the request returns; remove this setting"
)


@dataclass(frozen=True, slots=True)
class RetiredKey:
    """A key that must not be configured any more, and why."""

    pattern: str
    reason: str


def _family(prefix: str, leaves: tuple[str, ...], reason: str) -> tuple[RetiredKey, ...]:
    return tuple(RetiredKey(f"{prefix}.{leaf}", reason) for leaf in leaves)


_PROVIDER_LEAVES = ("provider", "model", "command", "endpoint", "base_url", "fallbackProvider")

RETIRED_KEYS: tuple[RetiredKey, ...] = (
    *_family(f"{_P2}.extraction", _PROVIDER_LEAVES, _EXTRACTION),
    *_family(
        _P2,
        (
            "extractionProvider",
            "extractionModel",
            "extractionStrength",
            "extractionEndpoint",
            "extractionBaseUrl",
            "extractionCommand",
            "extractionFallbackProvider",
        ),
        _EXTRACTION,
    ),
    *_family(f"{_P2}.synthesis", _PROVIDER_LEAVES, _SYNTHESIS),
    RetiredKey(f"{_P2}.writeGate", _WRITE_GATE),
    *_family(
        _P2, ("writeGateEnabled", "writeGateThreshold", "writeGateContinuityDiscount"), _WRITE_GATE
    ),
    RetiredKey(f"{_P2}.durability", _DURABILITY),
)

# Keys Signet knows that we accept and do not implement (listed by `signet doctor`).
IGNORED_KEYS: tuple[str, ...] = (
    # agent identity, manifest and Signet features outside the memory service
    "version",
    "schema",
    "configVersion",
    "name",
    "description",
    "agent",
    "owner",
    "harnesses",
    "trust",
    "git",
    "skills",
    "plugins",
    "secrets",
    "telemetry",
    "memory.database",
    "memory.session_budget",
    "memory.decay_rate",
    "memory.synthesis",
    "embedding.profile",
    "embedding.indexGeneration",
    # recall boosts Signet has and we do not apply: its access-count rehearsal boost measured
    # harmful on LoCoMo (generic memories won because they had won before); no temporal prior
    "search.rehearsal_enabled",
    "search.rehearsal_weight",
    "search.rehearsal_half_life_days",
    "search.temporal_prior_enabled",
    "search.temporal_prior_weight",
    "search.temporal_prior_half_life_days",
    # pipeline features retired with extraction, or belonging to workers we do not run
    f"{_P2}.extraction",
    f"{_P2}.synthesis",
    f"{_P2}.autonomous",
    f"{_P2}.claudeCode",
    f"{_P2}.continuity",
    f"{_P2}.subagents",
    f"{_P2}.telemetry",
    f"{_P2}.telemetryEnabled",
    f"{_P2}.procedural",
    f"{_P2}.structural",
    f"{_P2}.dependencySynthesis",
    f"{_P2}.feedback",
    f"{_P2}.significance",
    f"{_P2}.modelRegistry",
    f"{_P2}.reflections",
    f"{_P2}.semanticContradictionEnabled",
    f"{_P2}.semanticContradictionTimeoutMs",
    f"{_P2}.extractionTimeout",
    f"{_P2}.minFactConfidenceForWrite",
    f"{_P2}.autonomousEnabled",
    f"{_P2}.autonomousFrozen",
    f"{_P2}.allowUpdateDelete",
    f"{_P2}.maintenanceIntervalMs",
    f"{_P2}.maintenanceMode",
    f"{_P2}.graphExtractionWritesEnabled",
    f"{_P2}.rerankerUseExtractionModel",
    f"{_P2}.graph.extractionWritesEnabled",
    f"{_P2}.reranker.useExtractionModel",
    f"{_P2}.worker.threadedExtraction",
    "memory.dreaming.surprisal",
    # rate limits of Signet routes this build does not serve (LLM recall, the inference API)
    "auth.rateLimits.recallLlm",
    "auth.rateLimits.inferenceExplain",
    "auth.rateLimits.inferenceExecute",
    "auth.rateLimits.inferenceGateway",
)


def _flat(old: str, new: str) -> tuple[str, str]:
    return (f"{_P2}.{old}", f"{_P2}.{new}")


# Old key -> its current home. Signet still reads these; the nested key wins when both are set.
RELOCATED_KEYS: tuple[tuple[str, str], ...] = (
    ("embeddings", "embedding"),
    ("memory.embeddings", "embedding"),
    _flat("workerPollMs", "worker.pollMs"),
    _flat("workerMaxRetries", "worker.maxRetries"),
    _flat("leaseTimeoutMs", "worker.leaseTimeoutMs"),
    _flat("workerMaxLoadPerCpu", "worker.maxLoadPerCpu"),
    _flat("workerOverloadBackoffMs", "worker.overloadBackoffMs"),
    _flat("graphEnabled", "graph.enabled"),
    _flat("graphBoostWeight", "graph.boostWeight"),
    _flat("graphBoostTimeoutMs", "graph.boostTimeoutMs"),
    _flat("rerankerEnabled", "reranker.enabled"),
    _flat("rerankerModel", "reranker.model"),
    _flat("rerankerTopN", "reranker.topN"),
    _flat("rerankerTimeoutMs", "reranker.timeoutMs"),
    _flat("repairReembedCooldownMs", "repair.reembedCooldownMs"),
    _flat("repairReembedHourlyBudget", "repair.reembedHourlyBudget"),
    _flat("repairRequeueCooldownMs", "repair.requeueCooldownMs"),
    _flat("repairRequeueHourlyBudget", "repair.requeueHourlyBudget"),
    _flat("repairDedupCooldownMs", "repair.dedupCooldownMs"),
    _flat("repairDedupHourlyBudget", "repair.dedupHourlyBudget"),
    _flat("repairDedupSemanticThreshold", "repair.dedupSemanticThreshold"),
    _flat("repairDedupBatchSize", "repair.dedupBatchSize"),
    _flat("documentWorkerIntervalMs", "documents.workerIntervalMs"),
    _flat("documentChunkSize", "documents.chunkSize"),
    _flat("documentChunkOverlap", "documents.chunkOverlap"),
    _flat("documentMaxContentBytes", "documents.maxContentBytes"),
)


def split(dotted: str) -> KeyPath:
    """`"a.b.c"` -> `("a", "b", "c")`."""
    return tuple(dotted.split("."))


def dotted(path: KeyPath) -> str:
    """`("a", "b", "c")` -> `"a.b.c"`."""
    return ".".join(path)


def _matches(pattern: KeyPath, path: KeyPath) -> bool:
    return len(pattern) == len(path) and all(
        p in ("*", k) for p, k in zip(pattern, path, strict=True)
    )


_RETIRED = tuple((split(entry.pattern), entry.reason) for entry in RETIRED_KEYS)
_IGNORED = tuple(split(entry) for entry in IGNORED_KEYS)


def retired_reason(path: KeyPath) -> str | None:
    """Why the key at `path` is retired, or None if it is not."""
    return next((reason for pattern, reason in _RETIRED if _matches(pattern, path)), None)


def has_retired_below(path: KeyPath) -> bool:
    """True when some retired key lives strictly inside the subtree at `path`."""
    depth = len(path)
    return any(len(p) > depth and _matches(p[:depth], path) for p, _ in _RETIRED)


def is_ignored(path: KeyPath) -> bool:
    """True when `path` is a key Signet knows and we accept without acting on it."""
    return any(_matches(pattern, path) for pattern in _IGNORED)


def ignored_children(path: KeyPath) -> tuple[str, ...]:
    """Names of ignored keys directly under `path` (did-you-mean candidates)."""
    depth = len(path)
    return tuple(p[depth] for p in _IGNORED if len(p) == depth + 1 and _matches(p[:depth], path))


# A free-form key whose name ends like this holds a credential (`apiKey`, `x-api-key`,
# `clientSecret`, `Authorization`); `tokenThreshold` and `maxTokens` do not.
_SECRET_SUFFIXES = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
    "authorization",
    "cookie",
)


def is_secret_name(name: str) -> bool:
    """True for key names that hold credentials; their values are never shown."""
    return name.lower().endswith(_SECRET_SUFFIXES)
