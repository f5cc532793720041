"""What the inspector's memories table asks for: an order and filters over one agent's memories."""

from __future__ import annotations

from dataclasses import dataclass

# Orders the table can ask for (storage/memories.py maps each to its SQL key).
BROWSE_SORTS = (
    "created", "updated", "importance", "type", "who", "project", "pinned", "content", "tags",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    """What the memories table shows: order, filters (None: off), live or deleted rows."""

    sort: str = "created"
    descending: bool = True
    type: str | None = None
    text: str | None = None  # content contains (case-insensitive for ASCII)
    tag: str | None = None
    who: str | None = None
    project: str | None = None
    pinned: bool | None = None
    deleted: bool = False  # True: the deleted memories (recoverable ones first by default)
