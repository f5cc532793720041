"""How a memory reads in the Memories pane and its detail: cells, metadata, provenance, history.

Plain functions of domain values (no Qt), tested in `tests/ui/test_memory_detail.py`; the
table model and the detail widget only lay the text out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from signet_desktop.domain.memory import (
    RECOVERY_WINDOW_DAYS,
    Actor,
    HistoryEvent,
    Memory,
    parse_utc,
)
from signet_desktop.ui.hit_format import preview

# The person at the inspector: their changes show as "you" in the history.
INSPECTOR_ACTOR = Actor(changed_by="inspector", actor_type="user")
EVENT_LABELS = {"created": "created", "modified": "updated", "deleted": "forgotten"}


def local_time(timestamp: str | None) -> str:
    """`2026-11-28 10:02` in the local time zone; the text itself when unreadable."""
    when = parse_utc(timestamp)
    if when is None:
        return timestamp or ""
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def cell_text(memory: Memory, column: str) -> str:
    """The table cell of `memory` in `column` (a `BROWSE_SORTS` name)."""
    if column == "content":
        return preview(memory.content, 120)
    if column == "tags":
        return ", ".join(memory.tags)
    if column == "importance":
        return f"{memory.importance:.2f}"
    if column == "pinned":
        return "pinned" if memory.pinned else ""
    if column in ("created", "updated"):
        return local_time(memory.created_at if column == "created" else memory.updated_at)
    value = getattr(memory, column)
    return "" if value is None else str(value)


def metadata_line(memory: Memory) -> str:
    """`fact · pinned · importance 0.80 · tags infra, db · who alice · project billing`."""
    parts = [memory.type]
    if memory.pinned:
        parts.append("pinned")
    parts.append(f"importance {memory.importance:.2f}")
    if memory.tags:
        parts.append("tags " + ", ".join(memory.tags))
    if memory.who:
        parts.append(f"who {memory.who}")
    if memory.project:
        parts.append(f"project {memory.project}")
    return " · ".join(parts)


def provenance_rows(memory: Memory) -> tuple[tuple[str, str], ...]:
    """(label, value) rows: where the memory came from and who it belongs to."""
    if memory.source_type or memory.source_id:
        source = " ".join(part for part in (memory.source_type, memory.source_id) if part)
    else:
        source = "remembered directly"
    rows = [("source", source)]
    if memory.session_id:
        rows.append(("session", memory.session_id))
    rows.append(("who", memory.who or "—"))
    rows.append(("project", memory.project or "—"))
    rows.append(("agent", memory.agent_id))
    vector = memory.embedding_model or "none yet"
    rows.append(("vector", vector))
    rows.append(("created", local_time(memory.created_at)))
    rows.append(
        (
            "version",
            f"{memory.version} · updated {local_time(memory.updated_at)} by "
            f"{actor_name(memory.updated_by)} · recalled {memory.access_count}×",
        )
    )
    return tuple(rows)


def deleted_notice(memory: Memory, now: datetime | None = None) -> str:
    """What a deleted memory's detail says above its content."""
    if not memory.deleted_at:
        return "This memory was forgotten."
    when = datetime.fromisoformat(memory.deleted_at.replace("Z", "+00:00"))
    days_left = RECOVERY_WINDOW_DAYS - ((now or datetime.now(UTC)) - when).days
    if days_left <= 0:
        return f"Forgotten {local_time(memory.deleted_at)}; it can no longer be recovered."
    plural = "" if days_left == 1 else "s"
    return (
        f"Forgotten {local_time(memory.deleted_at)} — recoverable for {days_left} more day{plural}."
    )


def actor_name(changed_by: str, actor_type: str = "user") -> str:
    """`you` for the inspector's own changes; `claude-code (hook)` for a typed actor."""
    if changed_by == INSPECTOR_ACTOR.changed_by and actor_type == INSPECTOR_ACTOR.actor_type:
        return "you"
    return changed_by if actor_type == "user" else f"{changed_by} ({actor_type})"


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One line of the history timeline."""

    when: str
    event: str
    actor: str
    change: str
    reason: str


def history_rows(events: Sequence[HistoryEvent], memory: Memory) -> tuple[HistoryRow, ...]:
    """The timeline, oldest first; each update says what changed (`tags +db −old`).

    The history stores each change's values before it; the values after come from the next
    change of the same field, or from the memory as it is now, so the walk runs newest first.
    """
    state: dict[str, Any] = {
        "tags": list(memory.tags),
        "importance": memory.importance,
        "pinned": memory.pinned,
        "type": memory.type,
        "content": memory.content,
    }
    rows: list[HistoryRow] = []
    for event in reversed(events):
        change = ""
        if event.event == "modified":
            before: Mapping[str, Any] = event.metadata.get("before") or {}
            changed = [str(name) for name in event.metadata.get("changed") or before]
            change = "; ".join(_change(name, before.get(name), state.get(name)) for name in changed)
            state.update({name: before[name] for name in changed if name in before})
        elif event.event == "deleted" and event.metadata.get("force"):
            change = "forced (it was pinned)"
        rows.append(
            HistoryRow(
                when=local_time(event.created_at),
                event=EVENT_LABELS.get(event.event, event.event),
                actor=actor_name(event.changed_by, event.actor_type),
                change=change,
                reason=event.reason or "",
            )
        )
    return tuple(reversed(rows))


def _change(name: str, old: Any, new: Any) -> str:
    if name == "tags":
        old_tags, new_tags = list(old or ()), list(new or ())
        added = [f"+{tag}" for tag in new_tags if tag not in old_tags]
        removed = [f"−{tag}" for tag in old_tags if tag not in new_tags]
        return "tags " + (" ".join(added + removed) or "reordered")
    if name == "pinned":
        return "pinned" if new else "unpinned"
    if name == "importance" and old is not None and new is not None:
        return f"importance {float(old):.2f} → {float(new):.2f}"
    if name == "content":
        return "content edited"
    return f"{name} {old} → {new}"
