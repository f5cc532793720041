"""Provider-neutral chat values and the `ChatProvider` protocol every LLM backend implements.

Values are frozen; tuples, not lists. `ToolCall.arguments_json` is the raw text the model
produced, so a caller can reject malformed JSON instead of the provider guessing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "other"]
ResponseFormat = Literal["text", "json"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for; `arguments_json` is unparsed model output."""

    id: str
    name: str
    arguments_json: str

    def arguments(self) -> dict[str, Any]:
        """The arguments as an object; ValueError when they are not a JSON object."""
        value = json.loads(self.arguments_json)
        if not isinstance(value, dict):
            raise ValueError(f"tool call {self.name!r} arguments are not a JSON object")
        return value


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One conversation turn. `tool` messages answer the call named by `tool_call_id`."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant", "tool"):
            raise ValueError(f"unknown chat role {self.role!r}")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id it answers")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages carry tool calls")

    @staticmethod
    def system(content: str) -> ChatMessage:
        return ChatMessage("system", content)

    @staticmethod
    def user(content: str) -> ChatMessage:
        return ChatMessage("user", content)

    @staticmethod
    def tool_result(call: ToolCall, content: str) -> ChatMessage:
        """The answer to `call`, to send back to the model."""
        return ChatMessage("tool", content, tool_call_id=call.id, name=call.name)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model; `parameters` is a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One completion request. `timeout_s` bounds the whole call, retries included."""

    messages: tuple[ChatMessage, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int = 4096
    temperature: float | None = None
    timeout_s: float = 120.0
    response_format: ResponseFormat = "text"

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a chat request needs at least one message")
        if self.max_output_tokens < 1:
            raise ValueError("max_output_tokens must be positive")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise ValueError("temperature must be between 0 and 2")


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one call (or a sum of calls) used; cache counts are 0 when not reported."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The model's answer: text and/or tool calls, with usage, timing and cost (None: unknown)."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    usage: Usage
    model: str
    provider: str
    latency_ms: float
    cost_usd: float | None = None

    def as_message(self) -> ChatMessage:
        """This answer as the assistant turn to append to the conversation."""
        return ChatMessage("assistant", self.text, tool_calls=self.tool_calls)


@runtime_checkable
class ChatProvider(Protocol):
    """A chat backend. `complete` blocks (network I/O): run it off the event loop, and never
    inside a write transaction (it calls `assert_provider_call_allowed` first)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def complete(self, request: ChatRequest) -> ChatResponse: ...
