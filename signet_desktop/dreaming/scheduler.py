"""When does an agent get a Dreaming pass? Pure decisions over facts the worker gathered.

Per agent scope: a pass runs on pending attention new since the last pass (attention a
pass left pending waits for the maximum interval, so it is not retried every check), on the
first run when there is evidence
(`backfillOnFirstRun`), as a continuation when the last pass left evidence out for lack of
budget, when unconsumed episodic evidence reaches `tokenThreshold`, or when `maxInterval`
passed since the last pass and there is any new evidence. Scheduled passes defer while the
job queue or the machine is under pressure, and an agent whose passes failed waits out a
bounded exponential backoff (`next_backoff`). Manual triggers skip all of this except the
one-running-pass rule, which the pass row enforces.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.dreaming import DreamingState, PassMode, TriggerReason

Focus = Literal["hygiene", "content", "full"]
IdleReason = Literal["running", "backing-off", "deferred", "no-evidence", "below-threshold"]


@dataclass(frozen=True, slots=True)
class AgentFacts:
    """What the worker knows about one agent at `now`."""

    state: DreamingState
    pending_sources: int
    pending_tokens: int
    pending_attention: int
    running: bool = False
    last_window_truncated: bool = False
    fresh_attention: int | None = None  # pending attention new since the last pass (None: all)


@dataclass(frozen=True, slots=True)
class Pressure:
    """System facts: pending jobs in the queue and 1-minute load per CPU."""

    pending_jobs: int = 0
    load_per_cpu: float = 0.0


@dataclass(frozen=True, slots=True)
class Decision:
    """Run a pass (`reason`, `mode`) or stay idle (`idle` with a sentence in `detail`)."""

    agent_id: str
    run: bool
    reason: TriggerReason | None = None
    mode: PassMode = "incremental"
    idle: IdleReason | None = None
    detail: str = ""
    until: str | None = None  # when a backoff ends


def parse_time(text: str | None) -> datetime | None:
    return None if not text else datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def next_backoff(config: DreamingConfig, failures: int, now: datetime) -> datetime:
    """When an agent with `failures` consecutive failed passes may try again."""
    base_ms = config.failure_backoff_ms * (2 ** max(0, min(failures, 30) - 1))
    return now + timedelta(milliseconds=min(base_ms, config.max_failure_backoff_ms))


def trigger(config: DreamingConfig, facts: AgentFacts, now: datetime) -> TriggerReason | None:
    """Why this agent needs a pass now, ignoring pressure and backoff (None: it does not)."""
    state = facts.state
    last = parse_time(state.last_pass_at)
    interval_over = last is not None and now - last >= timedelta(
        milliseconds=config.max_interval_ms
    )
    fresh = facts.pending_attention if facts.fresh_attention is None else facts.fresh_attention
    if fresh > 0 or (facts.pending_attention > 0 and (last is None or interval_over)):
        return "attention"
    if facts.pending_sources == 0:
        return None
    if state.last_pass_at is None and config.backfill_on_first_run:
        return "first-run"
    if facts.last_window_truncated:
        return "continuation"
    if facts.pending_tokens >= config.token_threshold:
        return "token-threshold"
    if interval_over:
        return "max-interval"
    return None


def decide(
    config: DreamingConfig, facts: AgentFacts, pressure: Pressure, now: datetime
) -> Decision:
    """The scheduled decision for one agent."""
    agent = facts.state.agent_id
    if facts.running:
        return Decision(agent, False, idle="running", detail="a pass is running")
    until = parse_time(facts.state.next_attempt_at)
    if until is not None and until > now:
        return Decision(
            agent,
            False,
            idle="backing-off",
            detail=f"backing off after {facts.state.consecutive_failures} failed pass(es)",
            until=iso(until),
        )
    reason = trigger(config, facts, now)
    if reason is None:
        if facts.pending_sources == 0:
            return Decision(agent, False, idle="no-evidence", detail="no new evidence")
        return Decision(
            agent,
            False,
            idle="below-threshold",
            detail=(
                f"{facts.pending_tokens} of {config.token_threshold} tokens of new evidence;"
                " waiting for the threshold or the maximum interval"
            ),
        )
    deferred = _pressure(config, pressure)
    if deferred is not None:
        return Decision(agent, False, reason=reason, idle="deferred", detail=deferred)
    return Decision(agent, True, reason=reason, mode="incremental")


def _pressure(config: DreamingConfig, pressure: Pressure) -> str | None:
    if pressure.pending_jobs > config.max_pending_jobs:
        return (
            f"deferred: {pressure.pending_jobs} pending jobs (more than {config.max_pending_jobs})"
        )
    if pressure.load_per_cpu > config.max_load_per_cpu:
        return (
            f"deferred: load {pressure.load_per_cpu:.2f} per CPU (above"
            f" {config.max_load_per_cpu:.2f})"
        )
    return None


def focus_for(mode: PassMode, previous: str | None) -> Focus:
    """The runbook focus: `incremental` alternates hygiene and content, the others are fixed."""
    if mode == "incremental-hygiene":
        return "hygiene"
    if mode == "incremental-content":
        return "content"
    if mode == "compact":
        return "full"
    return "hygiene" if previous == "content" else "content"


def after_failure(
    config: DreamingConfig, state: DreamingState, error: str, now: datetime
) -> DreamingState:
    """The state after a failed pass: one more failure, the next attempt pushed back."""
    failures = state.consecutive_failures + 1
    return replace(
        state,
        consecutive_failures=failures,
        last_failure_at=iso(now),
        last_error=error[:2000],
        next_attempt_at=iso(next_backoff(config, failures, now)),
    )


def after_success(
    state: DreamingState, pass_id: str, mode: PassMode, remaining_tokens: int, now: datetime
) -> DreamingState:
    """The state after a completed pass: failures cleared, the last pass remembered."""
    return replace(
        state,
        consecutive_failures=0,
        next_attempt_at=None,
        last_error=None,
        last_pass_at=iso(now),
        last_pass_id=pass_id,
        last_pass_mode=mode,
        tokens_since_last_pass=max(0, remaining_tokens),
        evidence_cursor=iso(now),
    )
