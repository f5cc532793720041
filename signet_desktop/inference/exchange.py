"""One chat call as every provider makes it: guard, POST, time, parse, price.

Providers differ only in their payload and in how their answer parses (`Parse`); the rest —
the write-transaction guard before any I/O, the timed POST through `JsonTransport`, a parse
failure reported as `ProviderBadResponse` with secrets masked, and the priced `ChatResponse` —
is here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from signet_desktop.inference.accounting import Pricing
from signet_desktop.inference.transport import JsonTransport
from signet_desktop.inference.types import ChatResponse, FinishReason, ToolCall, Usage
from signet_desktop.inference.wire import ShapeError
from signet_desktop.storage.guard import assert_provider_call_allowed

Parsed = tuple[str, tuple[ToolCall, ...], FinishReason, Usage, str | None]
Parse = Callable[[dict[str, Any]], Parsed]


def exchange(
    transport: JsonTransport,
    payload: dict[str, Any],
    timeout_s: float,
    parse: Parse,
    *,
    provider: str,
    model: str,
    pricing: Pricing,
) -> ChatResponse:
    """POST `payload` (retried within `timeout_s`) and build the response from `parse`."""
    assert_provider_call_allowed(f"{provider} chat completion")
    started = time.perf_counter()
    body = transport.post(payload, timeout_s)
    latency_ms = (time.perf_counter() - started) * 1000.0
    try:
        text, calls, finish, usage, answered_model = parse(body)
    except ShapeError as exc:
        raise transport.bad(transport.mask(str(exc))) from None
    return ChatResponse(
        text=text,
        tool_calls=calls,
        finish_reason=finish,
        usage=usage,
        model=answered_model or model,
        provider=provider,
        latency_ms=latency_ms,
        cost_usd=pricing.cost(usage),
    )
