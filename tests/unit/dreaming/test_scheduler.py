"""dreaming/scheduler.py: when a pass runs, defers or backs off (a fake clock, no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from signet_desktop.config.models import DreamingConfig
from signet_desktop.domain.dreaming import DreamingState
from signet_desktop.dreaming import scheduler
from signet_desktop.dreaming.scheduler import AgentFacts, Pressure, decide

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CONFIG = DreamingConfig(enabled=True)


def facts(
    *,
    sources: int = 1,
    tokens: int = 10,
    attention: int = 0,
    last_pass: datetime | None = NOW - timedelta(hours=1),
    running: bool = False,
    truncated: bool = False,
    next_attempt: datetime | None = None,
    failures: int = 0,
) -> AgentFacts:
    state = DreamingState(
        "a",
        last_pass_at=None if last_pass is None else scheduler.iso(last_pass),
        next_attempt_at=None if next_attempt is None else scheduler.iso(next_attempt),
        consecutive_failures=failures,
    )
    return AgentFacts(state, sources, tokens, attention, running, truncated)


def test_attention_runs_even_without_evidence() -> None:
    decision = decide(CONFIG, facts(sources=0, tokens=0, attention=2), Pressure(), NOW)
    assert decision.run and decision.reason == "attention"


def test_first_run_backfills_when_configured() -> None:
    assert decide(CONFIG, facts(last_pass=None), Pressure(), NOW).reason == "first-run"
    no_backfill = DreamingConfig(enabled=True, backfill_on_first_run=False)
    decision = decide(no_backfill, facts(last_pass=None), Pressure(), NOW)
    assert not decision.run and decision.idle == "below-threshold"


def test_token_threshold_and_below_it() -> None:
    assert decide(CONFIG, facts(tokens=100_000), Pressure(), NOW).reason == "token-threshold"
    below = decide(CONFIG, facts(tokens=99_999), Pressure(), NOW)
    assert not below.run and below.idle == "below-threshold" and "99999 of 100000" in below.detail


def test_max_interval_needs_new_evidence() -> None:
    old = NOW - timedelta(hours=6)
    assert decide(CONFIG, facts(last_pass=old), Pressure(), NOW).reason == "max-interval"
    nothing = decide(CONFIG, facts(last_pass=old, sources=0, tokens=0), Pressure(), NOW)
    assert not nothing.run and nothing.idle == "no-evidence"
    recent = decide(CONFIG, facts(last_pass=NOW - timedelta(hours=5, minutes=59)), Pressure(), NOW)
    assert not recent.run


def test_continuation_after_a_truncated_window() -> None:
    assert decide(CONFIG, facts(truncated=True), Pressure(), NOW).reason == "continuation"


@pytest.mark.parametrize(
    ("pressure", "words"),
    [
        (Pressure(pending_jobs=1_001), "1001 pending jobs"),
        (Pressure(load_per_cpu=0.9), "load 0.90"),
    ],
)
def test_pressure_defers(pressure: Pressure, words: str) -> None:
    decision = decide(CONFIG, facts(tokens=200_000), pressure, NOW)
    assert not decision.run and decision.idle == "deferred" and words in decision.detail
    assert decision.reason == "token-threshold"  # what would have run
    assert decide(CONFIG, facts(tokens=200_000), Pressure(1_000, 0.8), NOW).run


def test_running_and_backoff_keep_it_idle() -> None:
    assert decide(CONFIG, facts(running=True, attention=1), Pressure(), NOW).idle == "running"
    later = NOW + timedelta(minutes=3)
    backing = decide(CONFIG, facts(attention=1, next_attempt=later, failures=2), Pressure(), NOW)
    assert backing.idle == "backing-off" and backing.until == scheduler.iso(later)
    assert decide(CONFIG, facts(attention=1, next_attempt=NOW), Pressure(), NOW).run


def test_backoff_is_exponential_and_bounded() -> None:
    gaps = [scheduler.next_backoff(CONFIG, n, NOW) - NOW for n in (1, 2, 3, 4, 30, 1000)]
    assert gaps[:4] == [timedelta(minutes=m) for m in (5, 10, 20, 40)]
    assert gaps[4] == gaps[5] == timedelta(hours=6)


def test_failure_then_success_state() -> None:
    state = scheduler.after_failure(CONFIG, DreamingState("a"), "boom", NOW)
    state = scheduler.after_failure(CONFIG, state, "boom again", NOW)
    assert state.consecutive_failures == 2 and state.last_error == "boom again"
    assert state.next_attempt_at == scheduler.iso(NOW + timedelta(minutes=10))
    done = scheduler.after_success(state, "p1", "incremental", 42, NOW)
    assert done.consecutive_failures == 0 and done.next_attempt_at is None
    assert done.last_pass_id == "p1" and done.tokens_since_last_pass == 42


def test_focus_alternates_for_incremental() -> None:
    assert scheduler.focus_for("incremental", None) == "content"
    assert scheduler.focus_for("incremental", "content") == "hygiene"
    assert scheduler.focus_for("incremental", "hygiene") == "content"
    assert scheduler.focus_for("compact", "content") == "full"
    assert scheduler.focus_for("incremental-hygiene", "hygiene") == "hygiene"
    assert scheduler.focus_for("incremental-content", "content") == "content"


def test_config_rejects_out_of_range_values() -> None:
    from pydantic import ValidationError

    for bad in ({"tokenThreshold": 9_999}, {"maxOpsPerRequest": 101}, {"maxLoadPerCpu": 0}):
        with pytest.raises(ValidationError):
            DreamingConfig.model_validate(bad)
    assert DreamingConfig.model_validate({"maxOpsPerPass": 50}).max_ops_per_pass == 50


def test_agent_yaml_names_the_bad_dreaming_key() -> None:
    from signet_desktop.config.loader import ConfigError, parse_config_text

    with pytest.raises(ConfigError, match=r"memory\.dreaming\.maxOpsPerRequest"):
        parse_config_text("memory:\n  dreaming:\n    maxOpsPerRequest: 500\n")
    loaded = parse_config_text("memory:\n  dreaming:\n    enabled: true\n    maxTurns: 5\n")
    assert loaded.config.memory.dreaming.max_turns == 5


def test_attention_a_pass_left_pending_waits_for_the_interval() -> None:
    stale = AgentFacts(DreamingState("a", last_pass_at=scheduler.iso(NOW - timedelta(hours=1))),
                       0, 0, pending_attention=3, fresh_attention=0)  # fmt: skip
    assert not decide(CONFIG, stale, Pressure(), NOW).run
    fresh = AgentFacts(stale.state, 0, 0, pending_attention=3, fresh_attention=1)
    assert decide(CONFIG, fresh, Pressure(), NOW).reason == "attention"
    old = AgentFacts(DreamingState("a", last_pass_at=scheduler.iso(NOW - timedelta(hours=7))),
                     0, 0, pending_attention=3, fresh_attention=0)  # fmt: skip
    assert decide(CONFIG, old, Pressure(), NOW).reason == "attention"
