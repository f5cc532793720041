"""Fakes for the Dreaming runner and tool tests: a scripted ChatProvider and a recording seam."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from signet_desktop.domain.dreaming import MutationCounts
from signet_desktop.domain.memory import NewMemory
from signet_desktop.inference.types import ChatRequest, ChatResponse, ToolCall, Usage
from signet_desktop.storage import memories
from signet_desktop.storage.database import Database
from signet_desktop.storage.guard import assert_provider_call_allowed


class ScriptedProvider:
    """Answers each `complete` with the next scripted response, or raises a scripted error."""

    name = "scripted"
    model = "script-1"

    def __init__(self, steps: Iterable[ChatResponse | Exception] = ()) -> None:
        self.steps: deque[ChatResponse | Exception] = deque(steps)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        assert_provider_call_allowed("scripted")
        self.requests.append(request)
        if not self.steps:
            return answer("done")
        step = self.steps.popleft()
        if isinstance(step, Exception):
            raise step
        return step


def answer(text: str = "", *calls: tuple[str, str]) -> ChatResponse:
    """A response with text and tool calls given as (name, raw arguments JSON)."""
    tool_calls = tuple(ToolCall(f"call-{n}", name, args) for n, (name, args) in enumerate(calls))
    return ChatResponse(
        text=text,
        tool_calls=tool_calls,
        finish_reason="tool_calls" if calls else "stop",
        usage=Usage(100, 10),
        model="script-1",
        provider="scripted",
        latency_ms=1.0,
        cost_usd=0.001,
    )


class RecordingSeam:
    """A seam that counts every operation as applied unless its quote is not in `good`."""

    def __init__(self, good: str = "") -> None:
        self.good = good
        self.applied: list[Any] = []

    def validate(self, operations: list[Any]) -> dict[str, Any]:
        return {"valid": len(operations)}

    def apply(self, operations: list[Any]) -> tuple[dict[str, Any], MutationCounts]:
        ok = [op for op in operations if self.good and self.good in str(op)]
        self.applied.extend(ok)
        failed = len(operations) - len(ok)
        report = {"applied": len(ok), "failed": failed}
        return report, MutationCounts(len(ok), 0, failed)


def add_memory(db: Database, agent: str, memory_id: str, content: str) -> None:
    with db.write() as conn:
        memories.insert_memory(
            conn,
            memory_id,
            NewMemory(agent_id=agent, content=content),
            actor="t",
            embedding_model=None,
        )
