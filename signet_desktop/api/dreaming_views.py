"""Wire shapes of Dreaming (`/api/dream/*`), beside `views.py`; camelCase like Signet's API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.dreaming import (
    DreamingPass,
    DreamingState,
    DreamingStatus,
    EvidenceExclusion,
    PassDetail,
    ToolCallRecord,
)
from signet_desktop.domain.ontology import OperationRecord


def _plain(value: Any) -> Any:
    """Mappings and tuples from domain values as JSON objects and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def pass_json(record: DreamingPass) -> dict[str, Any]:
    """One pass as the timeline lists it (no window, runbook or trace)."""
    usage = record.usage
    return {
        "id": record.id,
        "agentId": record.agent_id,
        "mode": record.mode,
        "status": record.status,
        "triggerReason": record.trigger_reason,
        "provider": record.provider,
        "model": record.model,
        "startedAt": record.started_at,
        "completedAt": record.completed_at,
        "usage": {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadTokens": usage.cache_read,
            "cacheWriteTokens": usage.cache_write,
            "totalTokens": usage.total,
            "costUsd": usage.cost_usd,
        },
        "mutations": {
            "applied": record.mutations.applied,
            "skipped": record.mutations.skipped,
            "failed": record.mutations.failed,
        },
        "summary": record.summary,
        "error": record.error,
    }


def tool_call_json(call: ToolCallRecord) -> dict[str, Any]:
    return {
        "seq": call.seq,
        "toolCallId": call.tool_call_id,
        "tool": call.tool_name,
        "arguments": call.input,
        "result": call.output,
        "status": call.status,
        "error": call.error,
        "durationMs": call.duration_ms,
        "createdAt": call.created_at,
    }


def exclusion_json(item: EvidenceExclusion) -> dict[str, Any]:
    return {
        "sourceRef": f"{item.source_kind}:{item.source_id}",
        "sourceKind": item.source_kind,
        "sourceId": item.source_id,
        "reason": item.reason,
        "status": item.status,
        "attempts": item.attempts,
        "excludedAt": item.excluded_at,
    }


def operation_json(record: OperationRecord) -> dict[str, Any]:
    """A `dreaming_operations` record."""
    return {
        "id": record.id,
        "seq": record.seq,
        "requestId": record.request_id,
        "operation": record.operation,
        "payload": _plain(record.payload),
        "evidence": _plain(record.evidence),
        "provenance": record.provenance,
        "actor": record.actor,
        "status": record.status,
        "code": record.code,
        "reason": record.reason,
        "result": _plain(record.result),
        "createdAt": record.created_at,
    }


def pass_detail_json(detail: PassDetail) -> dict[str, Any]:
    """GET /api/dream/passes/{id}: the pass with window, runbook, trace, operations."""
    return {
        **pass_json(detail.record),
        "evidenceWindow": detail.record.evidence_window,
        "runbook": detail.record.runbook,
        "toolCalls": [tool_call_json(call) for call in detail.tool_calls],
        "operations": [operation_json(op) for op in detail.operations],
        "exclusions": [exclusion_json(item) for item in detail.exclusions],
    }


def state_json(state: DreamingState) -> dict[str, Any]:
    return {
        "tokensSinceLastPass": state.tokens_since_last_pass,
        "consecutiveFailures": state.consecutive_failures,
        "lastPassAt": state.last_pass_at,
        "lastPassId": state.last_pass_id,
        "lastPassMode": state.last_pass_mode,
        "lastFailureAt": state.last_failure_at,
        "lastError": state.last_error,
        "nextAttemptAt": state.next_attempt_at,
    }


def dream_status_json(status: DreamingStatus) -> dict[str, Any]:
    """GET /api/dream/status."""
    return {
        "agentId": status.agent_id,
        "enabled": status.enabled,
        "inference": {
            "configured": status.inference_configured,
            "reason": status.inference_reason,
            "key": None if status.inference_configured else "inference.workloads.memoryExtraction",
            "executor": status.executor,
            "provider": status.runner,
            "model": status.runner_model,
            "harness": status.harness,
        },
        "running": status.running_pass_id is not None,
        "runningPassId": status.running_pass_id,
        "idle": status.idle,
        "detail": status.detail,
        "until": status.until,
        "pending": {
            "sources": status.pending_sources,
            "tokens": status.pending_tokens,
            "attention": status.pending_attention,
            "tokenThreshold": status.token_threshold,
        },
        "state": state_json(status.state),
        "lastPass": None if status.last_pass is None else pass_json(status.last_pass),
    }
