"""Dreaming values: passes, their ordered tool calls, per-agent state, exclusions, events.

A pass is one bounded LLM consolidation run over one agent's new evidence. Every value here
is what `storage/dreaming_passes.py` reads back; the runner and the service build them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from signet_desktop.domain.events import Event

PassMode = Literal["incremental", "compact", "incremental-hygiene", "incremental-content"]
PassStatus = Literal["running", "completed", "failed", "cancelled"]
TriggerReason = Literal[
    "first-run", "attention", "token-threshold", "continuation", "max-interval", "manual"
]
ToolCallStatus = Literal["ok", "error", "refused"]

PASS_MODES: tuple[PassMode, ...] = (
    "incremental",
    "compact",
    "incremental-hygiene",
    "incremental-content",
)
PASS_STATUSES: tuple[PassStatus, ...] = ("running", "completed", "failed", "cancelled")
TRIGGER_REASONS: tuple[TriggerReason, ...] = (
    "first-run",
    "attention",
    "token-threshold",
    "continuation",
    "max-interval",
    "manual",
)
INTERRUPTED = "interrupted"  # the error of a pass a killed daemon left running
NO_NEW_EVIDENCE = "no new evidence and no pending attention: the provider was not called"


@dataclass(frozen=True, slots=True)
class PassUsage:
    """Tokens and cost a pass used (sums over its provider calls)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost_usd: float | None = None

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class MutationCounts:
    """What the apply seam did with a pass's operations."""

    applied: int = 0
    skipped: int = 0
    failed: int = 0

    def __add__(self, other: MutationCounts) -> MutationCounts:
        return MutationCounts(
            self.applied + other.applied,
            self.skipped + other.skipped,
            self.failed + other.failed,
        )


@dataclass(frozen=True, slots=True)
class DreamingPass:
    """One row of `dreaming_passes` (window and runbook parsed from their JSON)."""

    id: str
    agent_id: str
    mode: PassMode
    status: PassStatus
    trigger_reason: TriggerReason | None
    provider: str | None
    model: str | None
    started_at: str
    completed_at: str | None
    usage: PassUsage
    mutations: MutationCounts
    summary: str | None
    error: str | None
    evidence_window: dict[str, Any] | None
    runbook: dict[str, Any] | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One tool call of a pass, in order (`seq` from 0)."""

    id: str
    pass_id: str
    seq: int
    tool_call_id: str | None
    tool_name: str
    input: Any
    output: Any
    status: ToolCallStatus
    error: str | None
    duration_ms: int
    created_at: str


@dataclass(frozen=True, slots=True)
class DreamingState:
    """Per-agent scheduler state (`dreaming_state`); a missing row reads as the zero state."""

    agent_id: str
    tokens_since_last_pass: int = 0
    consecutive_failures: int = 0
    evidence_cursor: str | None = None
    last_pass_at: str | None = None
    last_pass_id: str | None = None
    last_pass_mode: PassMode | None = None
    last_failure_at: str | None = None
    last_error: str | None = None
    next_attempt_at: str | None = None


@dataclass(frozen=True, slots=True)
class EvidenceExclusion:
    """A source a pass left out of its window, and why."""

    agent_id: str
    source_kind: str
    source_id: str
    reason: str
    status: str
    attempts: int
    pass_id: str | None
    excluded_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamPassStarted(Event):
    """A Dreaming pass began (its row is `running`)."""

    kind: ClassVar[str] = "dream.pass_started"
    pass_id: str
    mode: str
    trigger_reason: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamPassFinished(Event):
    """A Dreaming pass ended: completed, failed or cancelled, with its mutation counts."""

    kind: ClassVar[str] = "dream.pass_finished"
    pass_id: str
    mode: str
    status: str
    applied: int
    skipped: int
    failed: int
    error: str | None


@dataclass(frozen=True, slots=True)
class DreamingStatus:
    """Why an agent's Dreaming is idle, running or due (what `GET /api/dream/status` says)."""

    agent_id: str
    enabled: bool
    inference_configured: bool
    inference_reason: str | None  # the key to set when no provider is configured
    running_pass_id: str | None
    idle: str | None  # disabled | no-inference | running | backing-off | deferred | ...
    detail: str
    until: str | None
    pending_sources: int
    pending_tokens: int
    pending_attention: int
    token_threshold: int
    state: DreamingState
    last_pass: DreamingPass | None
    # Who runs the passes: "acpx:claude" with the harness binary, or an HTTP provider's name.
    executor: str | None = None  # "acpx" | "http" (None: nothing configured)
    runner: str | None = None  # provider name, e.g. "acpx:claude", "anthropic"
    runner_model: str | None = None
    harness: str | None = None  # acpx: the binary


@dataclass(frozen=True, slots=True)
class PassDetail:
    """A pass with everything an inspector shows: trace, operations, exclusions."""

    record: DreamingPass
    tool_calls: tuple[ToolCallRecord, ...]
    operations: tuple[Any, ...]  # domain/ontology.py OperationRecord values, in order
    exclusions: tuple[EvidenceExclusion, ...]
