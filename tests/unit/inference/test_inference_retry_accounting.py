"""Retry timing (with a fake clock), pricing, the usage meter and the status surface."""

from __future__ import annotations

import pytest

from signet_desktop.config.loader import parse_config_text
from signet_desktop.inference.accounting import ModelPrice, Pricing, UsageMeter
from signet_desktop.inference.errors import (
    ProviderBadResponse,
    ProviderRateLimited,
    ProviderTimeout,
    ProviderUnavailable,
)
from signet_desktop.inference.retry import RetryPolicy, call_with_retries
from signet_desktop.inference.status import inference_status
from signet_desktop.inference.types import ChatResponse, Usage


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def run(
    errors: list[Exception], *, deadline: float = 60.0, attempts: int = 4
) -> tuple[str, Clock, list[float]]:
    clock = Clock()
    timeouts: list[float] = []

    def attempt(timeout: float) -> str:
        timeouts.append(timeout)
        clock.now += 1.0  # each attempt takes a second
        if errors:
            raise errors.pop(0)
        return "ok"

    policy = RetryPolicy(attempts=attempts, base_s=1.0, max_s=4.0, jitter=0.0)
    result = call_with_retries(
        attempt, policy=policy, deadline_s=deadline, what="t", sleep=clock.sleep, clock=clock
    )
    return result, clock, timeouts


def test_exponential_backoff_capped() -> None:
    result, clock, _ = run(
        [ProviderUnavailable("a"), ProviderUnavailable("b"), ProviderUnavailable("c")]
    )
    assert result == "ok" and clock.sleeps == [1.0, 2.0, 4.0]


def test_retry_after_is_honoured() -> None:
    _, clock, _ = run([ProviderRateLimited("slow down", retry_after=7)])
    assert clock.sleeps == [7]


def test_attempts_get_the_time_left_and_the_deadline_holds() -> None:
    with pytest.raises(ProviderUnavailable):
        run([ProviderUnavailable("x")] * 10, deadline=5.0, attempts=10)
    _, _, timeouts = run([ProviderUnavailable("x")], deadline=10.0)
    assert timeouts == [10.0, 8.0]  # 1 s attempt + 1 s backoff used


def test_not_retried_errors_and_exhaustion() -> None:
    with pytest.raises(ProviderBadResponse):
        run([ProviderBadResponse("garbage"), ProviderUnavailable("x")])
    with pytest.raises(ProviderTimeout):
        run([ProviderTimeout("t")] * 3, attempts=3)


def test_jitter_stays_within_bounds() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=8.0, jitter=0.2)
    delays = [policy.delay(2) for _ in range(200)]
    assert all(3.2 <= d <= 4.8 for d in delays) and len(set(delays)) > 1
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


def response(usage: Usage, cost: float | None) -> ChatResponse:
    return ChatResponse("", (), "stop", usage, "m", "p", 12.5, cost)


def test_prices_and_cache_tokens() -> None:
    price = ModelPrice(input=3.0, output=15.0, cache_read=0.3)
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read=500_000, cache_write=100_000
    )
    # 400k fresh at 3, 500k read at 0.3, 100k written at the input price (no cacheWrite price)
    assert price.cost(usage) == pytest.approx(1.2 + 0.15 + 0.3 + 15.0)
    assert Pricing().cost(usage) is None
    assert Pricing(free=True).cost(usage) == 0.0
    assert ModelPrice.from_config({"input": 1, "output": 2, "cacheWrite": 1.25}).cache_write == 1.25
    with pytest.raises(ValueError):
        ModelPrice.from_config({"input": "1", "output": 2})


def test_meter_sums_and_unknown_cost_stays_unknown() -> None:
    meter = UsageMeter()
    meter.record(response(Usage(100, 10, 5, 0), 0.5))
    meter.record(response(Usage(50, 5), 0.25))
    totals = meter.totals()
    assert (totals.calls, totals.usage, totals.cost_usd) == (2, Usage(150, 15, 5, 0), 0.75)
    assert totals.as_dict()["latency_ms"] == 25.0
    meter.record(response(Usage(1, 1), None))
    assert meter.totals().cost_usd is None and meter.totals().usage.total_tokens == 167


def test_status_lists_every_workload_without_secrets() -> None:
    config = parse_config_text(
        "inference:\n"
        "  targets:\n"
        "    box: {executor: ollama, endpoint: 'http://127.0.0.1:11434', models: {q: {}}}\n"
        "  workloads: {memoryExtraction: {target: box}}\n"
    ).config.inference
    status = inference_status(config, env={})
    first, second, _ = status["workloads"]
    assert first == {
        "workload": "memory_extraction",
        "config_key": "inference.workloads.memoryExtraction",
        "configured": True,
        "provider": "ollama",
        "model": "q",
        "host": "127.0.0.1:11434",
        "target": "box",
        "policy": None,
        "local": True,
        "priced": True,
        "reason": None,
        "fallbacks": [],
        "skipped": [],
        "executor": "http",
        "harness": None,
    }
    assert second["configured"] is False
    assert "set inference.workloads.sessionSynthesis" in second["reason"]
