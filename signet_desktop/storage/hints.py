"""memory_hints: prospective hints, hypothetical future queries a memory answers.

The owner of `memory_hints` (and, through its triggers, `memory_hints_fts`). Hints are
retrieval aids only: nothing here reads or writes the knowledge graph. Every write is bound to
a live memory of the same agent, so a hint can never be attached across agents.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection

HINT_MAX_CHARS = 200  # a hint longer than this is cut (at a word boundary when there is one)
DEFAULT_HINTS_PER_MEMORY = 5  # reference §7: at most 5 hints per memory
MAX_HINTS_PER_MEMORY = 10  # the ceiling `memory.pipelineV2.hints.max` may ask for


def clean_hint(text: str) -> str:
    """`text` trimmed, inner whitespace collapsed and cut to HINT_MAX_CHARS ("" when empty)."""
    hint = " ".join(str(text).split())
    if len(hint) <= HINT_MAX_CHARS:
        return hint
    cut = hint[:HINT_MAX_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space >= HINT_MAX_CHARS // 2 else cut).rstrip()


def insert_hints(
    conn: Connection,
    agent_id: str,
    memory_id: str,
    hints: Iterable[str],
    *,
    limit: int = DEFAULT_HINTS_PER_MEMORY,
) -> int:
    """Attach `hints` to the agent's live memory `memory_id`; returns the rows written.

    Each hint is trimmed and bounded (clean_hint); empties and duplicates (case-insensitive,
    against the batch and the memory's existing hints) are skipped; the memory keeps at most
    `limit` hints (capped at MAX_HINTS_PER_MEMORY). A memory that is not the agent's, or is
    deleted, gets nothing (0). Runs inside the caller's transaction.
    """
    cap = max(0, min(int(limit), MAX_HINTS_PER_MEMORY))
    live = conn.execute(
        "SELECT 1 FROM memories WHERE id = ? AND agent_id = ? AND is_deleted = 0",
        (memory_id, agent_id),
    ).fetchone()
    if live is None or cap == 0:
        return 0
    existing = [
        row[0]
        for row in conn.execute(
            "SELECT hint FROM memory_hints WHERE memory_id = ? AND agent_id = ?",
            (memory_id, agent_id),
        ).fetchall()
    ]
    seen = {hint.casefold() for hint in existing}
    room = cap - len(existing)
    now = utc_now()
    written = 0
    for raw in hints:
        if written >= room:
            break
        hint = clean_hint(raw)
        key = hint.casefold()
        if not hint or key in seen:
            continue
        seen.add(key)
        cursor = conn.execute(
            "INSERT OR IGNORE INTO memory_hints (memory_id, agent_id, hint, created_at) "
            "VALUES (?, ?, ?, ?)",
            (memory_id, agent_id, hint, now),
        )
        written += cursor.rowcount
    return written


def hints_for(conn: Connection, agent_id: str, memory_ids: Sequence[str]) -> dict[str, list[str]]:
    """memory id -> its hints in insertion order, for the agent's memories among `memory_ids`."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT memory_id, hint FROM memory_hints WHERE agent_id = ? AND memory_id IN ({marks}) "
        "ORDER BY seq",
        (agent_id, *ids),
    ).fetchall()
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(row[1])
    return found


def delete_for_memory(conn: Connection, agent_id: str, memory_id: str) -> int:
    """Drop the hints of the agent's memory `memory_id`; returns rows deleted."""
    cursor = conn.execute(
        "DELETE FROM memory_hints WHERE agent_id = ? AND memory_id = ?", (agent_id, memory_id)
    )
    return cursor.rowcount


def count(conn: Connection, agent_id: str | None = None) -> int:
    """Number of hint rows (of one agent, or of all agents when `agent_id` is None)."""
    if agent_id is None:
        return int(conn.execute("SELECT COUNT(*) FROM memory_hints").fetchone()[0])
    row = conn.execute("SELECT COUNT(*) FROM memory_hints WHERE agent_id = ?", (agent_id,))
    return int(row.fetchone()[0])
