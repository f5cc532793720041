"""Wire shapes of the hook routes (Signet's field names), beside `views.py` for the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.sessions import HookSession, SessionTranscript, TranscriptHit, Turn
from signet_desktop.service.hooks.service import (
    CompactionResult,
    PreCompactionResult,
    PromptResult,
    SessionEndResult,
    SessionStartResult,
)


def _marked(body: dict[str, Any], bypassed: bool, skipped: str | None = None) -> dict[str, Any]:
    """`body` with `bypassed: true` and `skipped` (why nothing was recorded), each only if set."""
    if bypassed:
        body["bypassed"] = True
    if skipped:
        body["skipped"] = skipped
    return body


def session_start_json(result: SessionStartResult) -> dict[str, Any]:
    """POST /api/hooks/session-start."""
    body: dict[str, Any] = {
        "identity": {"name": result.identity.name, "description": result.identity.description},
        "memories": [
            {
                "id": m.id,
                "content": m.content,
                "type": m.type,
                "importance": m.importance,
                "created_at": m.created_at,
            }
            for m in result.memories
        ],
        "recentContext": result.recent_context,
        "inject": result.inject,
    }
    return _marked(body, result.bypassed)


def prompt_submit_json(result: PromptResult) -> dict[str, Any]:
    """POST /api/hooks/user-prompt-submit."""
    body: dict[str, Any] = {
        "inject": result.inject,
        "memoryCount": result.memory_count,
        "queryTerms": list(result.query_terms),
        "engine": result.engine,
    }
    return _marked(body, result.bypassed)


def session_end_json(result: SessionEndResult) -> dict[str, Any]:
    """POST /api/hooks/session-end: Signet's counters plus what was retained."""
    capture = result.capture
    body: dict[str, Any] = {
        # No memories are extracted at session end: Dreaming reads completed transcripts.
        "memoriesSaved": 0,
        "queued": False,
        "jobId": None,
        "transcript": None
        if capture is None
        else {
            "sessionKey": capture.session_key,
            "turns": capture.turns,
            "appended": capture.appended,
            "completed": capture.completed,
            "skippedLines": capture.skipped_lines,
        },
    }
    return _marked(body, result.bypassed, result.skipped)


def pre_compaction_json(result: PreCompactionResult) -> dict[str, Any]:
    body: dict[str, Any] = {"summaryPrompt": result.summary_prompt, "guidelines": result.guidelines}
    return _marked(body, result.bypassed)


def compaction_complete_json(result: CompactionResult) -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": result.memory_id is not None,
        "memoryId": result.memory_id,
        "contextEpoch": result.context_epoch,
    }
    return _marked(body, result.bypassed, result.skipped)


def transcript_json(row: SessionTranscript, *, content: bool = True) -> dict[str, Any]:
    """One retained session (GET /api/sessions, /api/sessions/{key})."""
    body: dict[str, Any] = {
        "sessionKey": row.session_key,
        "agentId": row.agent_id,
        "harness": row.harness,
        "project": row.project,
        "status": row.status,
        "turns": row.turn_count,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
        "completedAt": row.completed_at,
        "contentHash": row.content_hash,
    }
    if content:
        body["content"] = row.content
    return body


def session_page_json(
    rows: Sequence[SessionTranscript], total: int, limit: int, offset: int
) -> dict[str, Any]:
    """GET /api/sessions (and the MCP resource `memory://sessions/recent`)."""
    return {
        "sessions": [transcript_json(row, content=False) for row in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


def turns_json(session_key: str, turns: Sequence[Turn]) -> dict[str, Any]:
    """GET /api/sessions/{key}/transcript (and `memory://sessions/{key}/transcript`)."""
    return {
        "sessionKey": session_key,
        "turns": [
            {"id": t.turn_id, "role": t.role, "text": t.text, "timestamp": t.timestamp}
            for t in turns
        ],
    }


def bypass_json(session: HookSession) -> dict[str, Any]:
    """POST /api/sessions/{key}/bypass (and MCP `session_bypass`)."""
    return {"sessionKey": session.session_key, "bypassed": session.bypassed}


def session_hits_json(hits: Sequence[TranscriptHit]) -> dict[str, Any]:
    """POST /api/sessions/search (and MCP `session_search`)."""
    return {
        "hits": [
            {
                "sessionKey": hit.session_key,
                "project": hit.project,
                "updatedAt": hit.updated_at,
                "excerpt": hit.excerpt,
                "rank": round(hit.rank, 4),
            }
            for hit in hits
        ]
    }
