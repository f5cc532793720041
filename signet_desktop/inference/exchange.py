"""One chat call as every provider makes it: guard, POST, time, parse, price.

Providers differ only in their payload and in how their answer parses (`Parse`); the rest —
the write-transaction guard before any I/O, the timed POST through `JsonTransport`, a parse
failure reported as `ProviderBadResponse` with secrets masked, and the priced `ChatResponse` —
is here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import SecretStr

from signet_desktop.inference.accounting import Pricing
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.transport import JsonTransport, is_loopback
from signet_desktop.inference.types import (
    ChatRequest,
    ChatResponse,
    FinishReason,
    ToolCall,
    Usage,
)
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


class JsonChatProvider:
    """What the HTTP JSON providers share: checked model, pricing, transport, the exchange.

    A subclass builds its own `payload`; `parse` reads its API's answer.
    """

    def __init__(
        self,
        *,
        name: str,
        model: str,
        base_url: str,
        endpoint: Callable[[str], str],
        headers: Mapping[str, str],
        api_key: SecretStr | None,
        pricing: Pricing | None,
        retry: RetryPolicy | None,
        parse: Parse,
    ) -> None:
        if not model.strip():
            raise ValueError("a model name is required")
        self.name = name
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.pricing = pricing or Pricing(free=is_loopback(self.base_url))
        self._parse = parse
        self._transport = JsonTransport(
            name,
            endpoint(self.base_url),
            headers=headers,
            secret=api_key,
            retry=retry or RetryPolicy(),
        )

    def __repr__(self) -> str:
        url = self._transport.safe_url
        return f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, url={url!r})"

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for `request`."""
        raise NotImplementedError

    def complete(self, request: ChatRequest) -> ChatResponse:
        """One call (retried on 429/5xx, and 529 for Anthropic, within `request.timeout_s`)."""
        return exchange(
            self._transport,
            self.payload(request),
            request.timeout_s,
            self._parse,
            provider=self.name,
            model=self.model,
            pricing=self.pricing,
        )

    def close(self) -> None:
        self._transport.close()
