"""OpenAI-compatible `/chat/completions` (OpenAI, OpenRouter, Ollama, llama.cpp, LM Studio, vLLM).

Non-streaming, with tool calling (`tools`, `tool_choice: auto`, assistant `tool_calls`,
`role: tool` results) and usage parsing (`prompt_tokens_details.cached_tokens` as cache
reads). `base_url` is the API root that ends in `/v1` (e.g. `http://localhost:11434/v1`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


class OpenAICompatProvider(JsonChatProvider):
    """A ChatProvider for any server speaking OpenAI's chat completions API."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        name: str = "openai-compatible",
        pricing: Pricing | None = None,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        token_limit_field: str = "max_tokens",
    ) -> None:
        all_headers = dict(headers or {})
        if api_key is not None and api_key.get_secret_value():
            all_headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
        super().__init__(
            name=name,
            model=model,
            base_url=base_url,
            endpoint=_completions_url,
            headers=all_headers,
            api_key=api_key,
            pricing=pricing,
            retry=retry,
            parse=_parse,
        )
        # OpenAI's own API wants max_completion_tokens (its reasoning models refuse
        # max_tokens); every other OpenAI-compatible server reads max_tokens.
        self.token_limit_field = token_limit_field

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for `request`."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [_message(m) for m in request.messages],
            self.token_limit_field: request.max_output_tokens,
            "stream": False,
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
            body["tool_choice"] = "auto"
        if request.response_format == "json":
            body["response_format"] = {"type": "json_object"}
        return body


def _completions_url(base_url: str) -> str:
    """The chat completions endpoint below an API root that ends in `/v1`."""
    return f"{base_url}/chat/completions"


def _echoed_arguments(text: str) -> str:
    """A past tool call's arguments as sent back: the model's text when it is JSON, else "{}".

    A small model's call cut off at max_tokens has unterminated JSON arguments; llama.cpp's
    server parses the history's arguments and refuses the whole next request (HTTP 500) over
    one of them. The tool result already told the model its arguments were malformed.
    """
    try:
        json.loads(text)
    except ValueError:
        return "{}"
    return text


def _message(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name:
        out["name"] = message.name
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _echoed_arguments(c.arguments_json)},
            }
            for c in message.tool_calls
        ]
    return out


def _parse(
    body: dict[str, Any],
) -> tuple[str, tuple[ToolCall, ...], FinishReason, Usage, str | None]:
    if "error" in body and "choices" not in body:
        error = body["error"]
        detail = error.get("message") if isinstance(error, dict) else error
        raise ShapeError(f"an error instead of a completion: {str(detail)[:200]}")
    choices = field(body, "choices", list, "body")
    if not choices:
        raise ShapeError("body.choices is empty")
    message = field(choices[0], "message", dict, "choices[0]")
    text = _content_text(message.get("content"))
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ShapeError(f"message.tool_calls has the wrong type ({type(raw_calls).__name__})")
    calls = tuple(_tool_call(raw, index) for index, raw in enumerate(raw_calls))
    reason = choices[0].get("finish_reason")
    finish = "tool_calls" if calls else _FINISH.get(str(reason), "other")
    usage_raw = body.get("usage")
    details = usage_raw.get("prompt_tokens_details") if isinstance(usage_raw, dict) else None
    usage = Usage(
        input_tokens=count(usage_raw, "prompt_tokens"),
        output_tokens=count(usage_raw, "completion_tokens"),
        cache_read=count(details, "cached_tokens"),
    )
    model = body.get("model")
    return text, calls, finish, usage, model if isinstance(model, str) and model else None


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise ShapeError(f"message.content has the wrong type ({type(content).__name__})")


def _tool_call(raw: Any, index: int) -> ToolCall:
    where = f"message.tool_calls[{index}]"
    function = field(raw, "function", dict, where)
    name = field(function, "name", str, f"{where}.function")
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):  # some servers send the object itself
        arguments = json.dumps(arguments)
    call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else None
    return ToolCall(id=call_id or f"call_{index}", name=name, arguments_json=arguments)
