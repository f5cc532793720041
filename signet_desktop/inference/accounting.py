"""Token usage and cost: per-model prices from config, and a meter that sums a pass's calls.

Prices are USD per million tokens, from `inference.targets.<t>.models.<m>.pricing`
(`input`, `output`, optional `cacheRead`, `cacheWrite`). Nothing is invented: a model without
a price costs `None` (unknown), except on a local server (loopback), which costs 0. Cached
input without its own price is charged at the input price (an upper bound).
`Usage.input_tokens` counts every prompt token, cached ones included.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signet_desktop.inference.types import ChatProvider, ChatRequest, ChatResponse, Usage

_PER = 1_000_000.0


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per 1M tokens; cache prices default to the input price."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def __post_init__(self) -> None:
        for value in (self.input, self.output, self.cache_read, self.cache_write):
            if value is not None and not value >= 0:
                raise ValueError("prices must be non-negative numbers")

    @staticmethod
    def from_config(raw: Mapping[str, Any]) -> ModelPrice:
        """Parse a `pricing` mapping (camelCase or snake_case keys); ValueError if malformed."""

        def number(*names: str, required: bool = False) -> float | None:
            for name in names:
                if name in raw:
                    value = raw[name]
                    if isinstance(value, bool) or not isinstance(value, int | float):
                        raise ValueError(f"pricing.{name} must be a number (USD per 1M tokens)")
                    return float(value)
            if required:
                raise ValueError(f"pricing.{names[0]} is required (USD per 1M tokens)")
            return None

        return ModelPrice(
            input=number("input", required=True) or 0.0,
            output=number("output", required=True) or 0.0,
            cache_read=number("cacheRead", "cache_read"),
            cache_write=number("cacheWrite", "cache_write"),
        )

    def cost(self, usage: Usage) -> float:
        """The USD cost of `usage` at these prices."""
        cached = usage.cache_read + usage.cache_write
        fresh = max(usage.input_tokens - cached, 0)
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        total = (
            fresh * self.input
            + usage.cache_read * read
            + usage.cache_write * write
            + usage.output_tokens * self.output
        )
        return total / _PER


@dataclass(frozen=True, slots=True)
class Pricing:
    """How one provider's calls are priced: a price, free (local), or unknown."""

    price: ModelPrice | None = None
    free: bool = False

    def cost(self, usage: Usage) -> float | None:
        if self.price is not None:
            return self.price.cost(usage)
        return 0.0 if self.free else None


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A meter's sums. `cost_usd` is None when any call's cost was unknown."""

    calls: int
    usage: Usage
    cost_usd: float | None
    latency_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_read_tokens": self.usage.cache_read,
            "cache_write_tokens": self.usage.cache_write,
            "cost_usd": self.cost_usd,
            "latency_ms": round(self.latency_ms, 1),
        }


class UsageMeter:
    """Sums usage, cost and latency across the calls of one pass; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls = 0
        self._usage = Usage()
        self._cost: float | None = 0.0
        self._latency = 0.0

    def record(self, response: ChatResponse) -> None:
        """Add one response's usage, cost and latency."""
        with self._lock:
            self._calls += 1
            self._usage = self._usage + response.usage
            self._latency += response.latency_ms
            if self._cost is not None and response.cost_usd is not None:
                self._cost += response.cost_usd
            else:
                self._cost = None

    def totals(self) -> UsageTotals:
        with self._lock:
            return UsageTotals(self._calls, self._usage, self._cost, self._latency)

    def wrap(self, provider: ChatProvider) -> MeteredProvider:
        """`provider`, recording every successful call in this meter."""
        return MeteredProvider(provider, self)


class MeteredProvider:
    """A ChatProvider that records each response in a `UsageMeter`."""

    def __init__(self, inner: ChatProvider, meter: UsageMeter) -> None:
        self._inner = inner
        self.meter = meter

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def model(self) -> str:
        return self._inner.model

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self._inner.complete(request)
        self.meter.record(response)
        return response

    def __repr__(self) -> str:
        return f"MeteredProvider({self._inner!r})"
