"""Anthropic Messages API (`POST /v1/messages`, `x-api-key`, `anthropic-version`).

System messages go in the separate `system` field; tool calls are `tool_use` blocks and tool
results `tool_result` blocks in a user turn, mapped to the same `ToolCall` / `ChatMessage`
values as the OpenAI-compatible provider. Usage counts cache reads and writes; our
`input_tokens` includes them (Anthropic's own `input_tokens` does not).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import SecretStr

from signet_desktop.inference.accounting import Pricing
from signet_desktop.inference.exchange import JsonChatProvider
from signet_desktop.inference.retry import RetryPolicy
from signet_desktop.inference.types import (
    ChatMessage,
    ChatRequest,
    FinishReason,
    ToolCall,
    Usage,
)
from signet_desktop.inference.wire import ShapeError, count, field

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_JSON_INSTRUCTION = "Answer with a single JSON object and nothing else."
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def messages_url(base_url: str) -> str:
    """`…/v1/messages` for a base URL given with or without its `/v1`."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


class AnthropicProvider(JsonChatProvider):
    """A ChatProvider for Anthropic's Messages API."""

    def __init__(
        self,
        *,
        model: str,
        api_key: SecretStr | None,
        base_url: str = DEFAULT_BASE_URL,
        name: str = "anthropic",
        pricing: Pricing | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        headers = {"anthropic-version": API_VERSION}
        if api_key is not None and api_key.get_secret_value():
            headers["x-api-key"] = api_key.get_secret_value()
        super().__init__(
            name=name,
            model=model,
            base_url=base_url,
            endpoint=messages_url,
            headers=headers,
            api_key=api_key,
            pricing=pricing,
            retry=retry,
            parse=_parse,
        )

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for `request`."""
        system = [m.content for m in request.messages if m.role == "system" and m.content]
        if request.response_format == "json":
            system.append(_JSON_INSTRUCTION)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "messages": _turns(m for m in request.messages if m.role != "system"),
        }
        if system:
            body["system"] = "\n\n".join(system)
        if request.temperature is not None:
            body["temperature"] = min(request.temperature, 1.0)  # Anthropic's range is 0..1
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        return body


def _turns(messages: Any) -> list[dict[str, Any]]:
    """Messages as alternating user/assistant turns of content blocks (same roles merged)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call)})
    return blocks


def _input(call: ToolCall) -> dict[str, Any]:
    """A past call's arguments as the object Anthropic requires (malformed text kept aside)."""
    try:
        value = json.loads(call.arguments_json)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"_unparsed_arguments": call.arguments_json}


def _parse(
    body: dict[str, Any],
) -> tuple[str, tuple[ToolCall, ...], FinishReason, Usage, str | None]:
    if body.get("type") == "error":
        error = body.get("error")
        detail = error.get("message") if isinstance(error, dict) else error
        raise ShapeError(f"an error instead of a message: {str(detail)[:200]}")
    content = field(body, "content", list, "body")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(content):
        kind = field(block, "type", str, f"content[{index}]")
        if kind == "text":
            texts.append(field(block, "text", str, f"content[{index}]"))
        elif kind == "tool_use":
            calls.append(_tool_call(block, index))
    reason = body.get("stop_reason")
    finish = "tool_calls" if calls else _FINISH.get(str(reason), "other")
    raw = body.get("usage")
    cache_read = count(raw, "cache_read_input_tokens")
    cache_write = count(raw, "cache_creation_input_tokens")
    usage = Usage(
        input_tokens=count(raw, "input_tokens") + cache_read + cache_write,
        output_tokens=count(raw, "output_tokens"),
        cache_read=cache_read,
        cache_write=cache_write,
    )
    model = body.get("model")
    return "".join(texts), tuple(calls), finish, usage, model if isinstance(model, str) else None


def _tool_call(block: dict[str, Any], index: int) -> ToolCall:
    where = f"content[{index}]"
    call_id = field(block, "id", str, where)
    name = field(block, "name", str, where)
    arguments = block.get("input", {})
    # The API sends an object; anything else is passed on as text for the caller to reject.
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=name, arguments_json=text)
