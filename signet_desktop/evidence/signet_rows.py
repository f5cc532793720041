"""Signet rows as plain values: the columns the importer knows, and the pure mapping of one
row (column name -> value) to a frozen value, or to `Unmapped` with the reason.

Absent columns get Signet's defaults; unknown ones are carried in `extra`; every value the
mapping had to change (an unknown type, importance out of range, an unreadable timestamp, a
tag over the limit) is named in `notes`. Nothing is dropped silently.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_EXTRA_TEXT = 2_000


# Signet's columns the reader maps, per table (reference §6 plus older names). Derived
# columns (normalized_content, content_hash, embedding_model) are recomputed here.
MEMORY_COLUMNS = frozenset(
    {
        "id", "type", "category", "content", "confidence", "importance", "source_id",
        "source_type", "tags", "who", "why", "project", "created_at", "updated_at",
        "updated_by", "last_accessed", "access_count", "vector_clock", "version",
        "manual_override", "pinned", "content_hash", "normalized_content", "is_deleted",
        "deleted_at", "extraction_status", "embedding_model", "extraction_model",
        "update_count", "idempotency_key", "source_path", "source_section", "scope",
        "agent_id", "visibility", "runtime_path", "superseded_by", "superseded_at",
        "superseded_reason", "memory_kind", "evidence_meta", "stale_at", "review_after",
        "session_id", "delete_reason", "occurred_at",
    }
)  # fmt: skip
HISTORY_COLUMNS = frozenset(
    {
        "id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason",
        "metadata", "created_at", "actor_type", "session_id", "request_id", "agent_id",
    }
)  # fmt: skip
TRANSCRIPT_COLUMNS = frozenset(
    {
        "session_key", "content", "harness", "project", "agent_id", "created_at",
        "updated_at", "completed_at", "content_hash", "source_id", "source_record_id",
        "source_meta_json",
    }
)  # fmt: skip
REQUIRED = {
    "memories": ("id", "content"),
    "memory_history": ("memory_id", "event"),
    "session_transcripts": ("session_key", "content"),
}
KNOWN = {
    "memories": MEMORY_COLUMNS,
    "memory_history": HISTORY_COLUMNS,
    "session_transcripts": TRANSCRIPT_COLUMNS,
}
MEMORY_TYPES = frozenset(
    {
        "fact", "preference", "decision", "rule", "learning", "issue", "episodic",
        "procedural", "semantic", "rationale", "constraint", "daily-log", "system",
        "document_chunk",
    }
)  # fmt: skip
HISTORY_EVENTS = frozenset({"created", "modified", "deleted", "recovered", "none"})
VISIBILITIES = frozenset({"global", "private", "archived"})

_SQLITE_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")


@dataclass(frozen=True, slots=True)
class Unmapped:
    """A Signet row that cannot be carried over, and why."""

    table: str
    record_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SignetMemory:
    """One Signet memory row as plain values (Signet's defaults where a column is absent)."""

    id: str
    content: str
    type: str
    tags: tuple[str, ...]
    importance: float
    confidence: float
    pinned: bool
    who: str | None
    why: str | None
    project: str | None
    category: str | None
    agent_id: str
    visibility: str
    scope: str | None
    memory_kind: str | None
    created_at: str | None
    updated_at: str | None
    updated_by: str
    is_deleted: bool
    deleted_at: str | None
    values: Mapping[str, Any]  # the other known columns present (source_*, version, ...)
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown columns
    notes: tuple[str, ...] = ()  # what mapping changed (type remapped, tags dropped...)


@dataclass(frozen=True, slots=True)
class SignetHistoryEvent:
    """One Signet memory_history row."""

    id: str | None
    memory_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changed_by: str
    actor_type: str
    reason: str | None
    metadata: Mapping[str, Any]
    session_id: str | None
    request_id: str | None
    created_at: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SignetTranscript:
    """One Signet session_transcripts row."""

    session_key: str
    content: str
    harness: str | None
    project: str | None
    agent_id: str
    created_at: str | None
    updated_at: str | None
    completed_at: str | None
    content_hash: str | None
    source: Mapping[str, Any]  # Signet's own source_id / source_record_id / source_meta_json
    extra: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def map_memory(row: Mapping[str, Any]) -> SignetMemory | Unmapped:
    """One Signet memories row (column name -> value) as a SignetMemory, or why not."""
    raw_id = row.get("id")
    if raw_id is None or not str(raw_id).strip():
        return Unmapped("memories", "<no id>", "id_missing")
    memory_id = str(raw_id)
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        return Unmapped("memories", memory_id, "content_empty")
    if "\x00" in content:
        return Unmapped("memories", memory_id, "content_invalid: contains a NUL byte")
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        return Unmapped("memories", memory_id, f"content_too_long: {len(content)} characters")
    notes: list[str] = []
    memory_type = _text(row.get("type")) or "fact"
    if memory_type not in MEMORY_TYPES:
        notes.append(f"type {memory_type!r} is unknown here; stored as 'fact'")
        memory_type = "fact"
    visibility = _text(row.get("visibility")) or "global"
    if visibility not in VISIBILITIES:
        notes.append(f"visibility {visibility!r} is unknown here; stored as 'private'")
        visibility = "private"
    created_at = timestamp(row.get("created_at"), "created_at", notes)
    values = {
        k: _plain(v)
        for k, v in row.items()
        if k in MEMORY_COLUMNS and k not in _MAPPED_MEMORY_FIELDS and v is not None
    }
    return SignetMemory(
        id=memory_id,
        content=content,
        type=memory_type,
        tags=parse_tags(row.get("tags"), notes),
        importance=_unit(row.get("importance"), 0.5, "importance", notes),
        confidence=_unit(row.get("confidence"), 1.0, "confidence", notes),
        pinned=_flag(row.get("pinned")),
        who=_text(row.get("who")),
        why=_text(row.get("why")),
        project=_text(row.get("project")),
        category=_text(row.get("category")),
        agent_id=_text(row.get("agent_id")) or "default",
        visibility=visibility,
        scope=_text(row.get("scope")),
        memory_kind=_text(row.get("memory_kind")),
        created_at=created_at,
        updated_at=timestamp(row.get("updated_at"), "updated_at", notes) or created_at,
        updated_by=_text(row.get("updated_by")) or "system",
        is_deleted=_flag(row.get("is_deleted")),
        deleted_at=timestamp(row.get("deleted_at"), "deleted_at", notes),
        values=values,
        extra={k: _plain(v) for k, v in row.items() if k not in MEMORY_COLUMNS and v is not None},
        notes=tuple(notes),
    )


_MAPPED_MEMORY_FIELDS = frozenset(
    {
        "id", "content", "type", "tags", "importance", "confidence", "pinned", "who", "why",
        "project", "category", "agent_id", "visibility", "scope", "memory_kind", "created_at",
        "updated_at", "updated_by", "is_deleted", "deleted_at",
        # derived, recomputed here: not carried
        "normalized_content", "embedding_model",
    }
)  # fmt: skip


def map_history(row: Mapping[str, Any]) -> SignetHistoryEvent:
    """One Signet memory_history row (always mappable once it names its memory)."""
    notes: list[str] = []
    event = _text(row.get("event")) or "none"
    metadata = _json_object(row.get("metadata"), notes)
    if event not in HISTORY_EVENTS:
        notes.append(f"event {event!r} is unknown here; stored as 'none'")
        metadata = {**metadata, "signet_event": event}
        event = "none"
    extra = {k: _plain(v) for k, v in row.items() if k not in HISTORY_COLUMNS and v is not None}
    if extra:
        metadata = {**metadata, "signet_extra": extra}
    if _text(row.get("agent_id")):  # the event lands in the importing agent
        metadata = {**metadata, "signet_agent_id": _text(row.get("agent_id"))}
    return SignetHistoryEvent(
        id=_text(row.get("id")),
        memory_id=str(row.get("memory_id")),
        event=event,
        old_content=_str_or_none(row.get("old_content")),
        new_content=_str_or_none(row.get("new_content")),
        changed_by=_text(row.get("changed_by")) or "system",
        actor_type=_text(row.get("actor_type")) or "user",
        reason=_str_or_none(row.get("reason")),
        metadata=metadata,
        session_id=_text(row.get("session_id")),
        request_id=_text(row.get("request_id")),
        created_at=timestamp(row.get("created_at"), "created_at", notes),
        notes=tuple(notes),
    )


def map_transcript(row: Mapping[str, Any]) -> SignetTranscript | Unmapped:
    """One Signet session_transcripts row, or why not."""
    key = _text(row.get("session_key"))
    if not key:
        return Unmapped("session_transcripts", "<no session_key>", "session_key_missing")
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        return Unmapped("session_transcripts", key, "content_empty")
    notes: list[str] = []
    created = timestamp(row.get("created_at"), "created_at", notes)
    source = {
        k: row[k]
        for k in ("source_id", "source_record_id", "source_meta_json")
        if row.get(k) is not None
    }
    return SignetTranscript(
        session_key=key,
        content=content,
        harness=_text(row.get("harness")),
        project=_text(row.get("project")),
        agent_id=_text(row.get("agent_id")) or "default",
        created_at=created,
        updated_at=timestamp(row.get("updated_at"), "updated_at", notes) or created,
        completed_at=timestamp(row.get("completed_at"), "completed_at", notes),
        content_hash=_text(row.get("content_hash")),
        source=source,
        extra={
            k: _plain(v) for k, v in row.items() if k not in TRANSCRIPT_COLUMNS and v is not None
        },
        notes=tuple(notes),
    )


def parse_tags(value: Any, notes: list[str]) -> tuple[str, ...]:
    """Signet tags: a comma string (older rows) or a JSON array; trimmed, deduplicated."""
    if value is None or value == "":
        return ()
    items: list[str]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            items = [str(item) for item in parsed if item is not None]
        else:
            items = text.strip("[]").split(",")
    else:
        items = text.split(",")
    seen: dict[str, None] = {}
    for item in items:
        tag = item.strip().strip('"').strip()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS or "\x00" in tag:
            notes.append(f"tag {tag[:40]!r}... is longer than {MAX_TAG_CHARS}; left out")
            continue
        seen.setdefault(tag, None)
    tags = tuple(seen)
    if len(tags) > MAX_TAGS:
        notes.append(f"{len(tags)} tags; the first {MAX_TAGS} kept")
        tags = tags[:MAX_TAGS]
    return tags


def timestamp(value: Any, name: str, notes: list[str]) -> str | None:
    """ISO-8601 UTC with milliseconds and Z (our format); None (noted) when unparseable."""
    if value is None or value == "":
        return None
    moment: datetime | None = None
    if isinstance(value, int | float) and math.isfinite(value):
        seconds = value / 1000 if value > 10**11 else value  # epoch ms or s
        moment = datetime.fromtimestamp(seconds, UTC)
    elif isinstance(value, str) and _SQLITE_DATETIME.match(value.strip()):
        text = value.strip().replace(" ", "T", 1)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # SQLite's datetime('now') is UTC
    if moment is None:
        notes.append(f"{name} {str(value)[:40]!r} is not a timestamp")
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _unit(value: Any, default: float, name: str, notes: list[str]) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        notes.append(f"{name} {str(value)[:20]!r} is not a number; {default} used")
        return default
    if not math.isfinite(number):
        notes.append(f"{name} is not finite; {default} used")
        return default
    if not 0.0 <= number <= 1.0:
        clamped = min(1.0, max(0.0, number))
        notes.append(f"{name} {number} is outside [0, 1]; {clamped} used")
        return clamped
    return number


def _json_object(value: Any, notes: list[str]) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return {"signet_metadata_text": str(value)[:MAX_EXTRA_TEXT]}
    if isinstance(parsed, dict):
        return parsed
    return {"signet_metadata": _plain(parsed)}


def _plain(value: Any) -> Any:
    """A JSON-safe value (blobs become a size note, long text is cut and says so)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"blob_bytes": len(bytes(value))}
    if isinstance(value, str) and len(value) > MAX_EXTRA_TEXT:
        return value[:MAX_EXTRA_TEXT] + f"… [{len(value) - MAX_EXTRA_TEXT} characters cut]"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
