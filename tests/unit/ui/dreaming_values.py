"""Dreaming domain values for the Dreaming pane tests: a pass, its tool calls, operations."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.dreaming import (
    DreamingPass,
    EvidenceExclusion,
    MutationCounts,
    PassUsage,
    ToolCallRecord,
)
from signet_desktop.domain.ontology import OperationRecord

STARTED = "2026-11-30T03:12:00.000Z"
QUOTE = "I moved the billing DB to Postgres 16 yesterday"
TRANSCRIPT = (
    "user: where does billing keep its data?\n"
    "assistant: In the billing database.\n"
    f"user: {QUOTE}, the replica follows.\n"
    "assistant: Noted."
)


def a_pass(pid: str = "p1", **kw: Any) -> DreamingPass:
    fields: dict[str, Any] = dict(
        id=pid, agent_id="default", mode="incremental", status="completed",
        trigger_reason="token-threshold", provider="openai-compatible", model="qwen2.5",
        started_at=STARTED, completed_at="2026-11-30T03:16:12.000Z",
        usage=PassUsage(61_234, 3_210, cost_usd=0.0412),
        mutations=MutationCounts(applied=2, skipped=0, failed=1),
        summary="Recorded billing's database.", error=None,
        evidence_window={"budgetTokens": 128_000, "tokens": 48_200, "candidates": 14,
                         "items": [{"ref": "transcript:8c35aa", "tokens": 3_100,
                                    "truncated": False}],
                         "leftOut": [{"ref": "memory:m9", "reason": "budget"}],
                         "excluded": [], "attention": [], "truncated": True},
        runbook={"mode": "incremental", "focus": "content", "caps": {"perPass": 100},
                 "instructions": ["Cite exact quotes."], "summary": "done",
                 "openQuestions": ["Is the replica in us-east?"]},
        created_at=STARTED, updated_at=STARTED,
    )  # fmt: skip
    fields.update(kw)
    return DreamingPass(**fields)


def a_call(seq: int, name: str, arguments: Any, output: Any = None, **kw: Any) -> ToolCallRecord:
    fields: dict[str, Any] = dict(
        id=f"t{seq}", pass_id="p1", seq=seq, tool_call_id=f"call_{seq}", tool_name=name,
        input=arguments, output=output, status="ok", error=None, duration_ms=200,
        created_at=STARTED,
    )  # fmt: skip
    fields.update(kw)
    return ToolCallRecord(**fields)


def an_operation(seq: int, operation: str, status: str, payload: dict[str, Any],
                 **kw: Any) -> OperationRecord:  # fmt: skip
    fields: dict[str, Any] = dict(
        id=f"o{seq}", agent_id="default", pass_id="p1", request_id="r1", seq=seq,
        operation=operation, payload=payload,
        evidence=({"quote": QUOTE, "source_ref": "transcript:8c35aa"},), provenance=None,
        actor="dreaming", status=status, code=None, reason=None, result=None,
        created_at=STARTED,
    )  # fmt: skip
    fields.update(kw)
    return OperationRecord(**fields)


def an_exclusion(**kw: Any) -> EvidenceExclusion:
    fields: dict[str, Any] = dict(
        agent_id="default", source_kind="transcript", source_id="9f00bb11cc22dd33",
        reason="blocked by content safety", status="excluded", attempts=2, pass_id="p1",
        excluded_at=STARTED,
    )  # fmt: skip
    fields.update(kw)
    return EvidenceExclusion(**fields)
