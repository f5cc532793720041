"""Time and preference cues read from a memory's text at write time (migration 0017).

`write_cues` runs inside the transaction that writes the memory's text (remember, import, a
content edit): the text's time expressions resolved against the memory's own `created_at`
(`domain.time_expressions`), its stated preference, if any, and whether it speaks in the
first person (`domain.preferences`).
`cues_for` reads them back for recall; a memory written before 0017, or whose text changed
without a rewrite, is read from its text on the spot, so every caller sees the same cues.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from signet_desktop.domain.preferences import speaks_for_self, stated_preference
from signet_desktop.domain.time_expressions import TimeSpan, anchor_date, resolve
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

UPSERT = """
INSERT INTO memory_cues (memory_id, agent_id, content_hash, times, first_day, last_day,
                         preference, first_person)
VALUES (:memory_id, :agent_id, :content_hash, :times, :first_day, :last_day, :preference,
        :first_person)
ON CONFLICT (memory_id) DO UPDATE SET
    agent_id = excluded.agent_id, content_hash = excluded.content_hash, times = excluded.times,
    first_day = excluded.first_day, last_day = excluded.last_day,
    preference = excluded.preference, first_person = excluded.first_person
"""

# The candidates' live rows with their stored cues (NULL when never read or stale).
CUES_FOR = """
SELECT m.id AS id, m.content AS content, m.created_at AS created_at,
       c.times AS times, c.preference AS preference, c.first_person AS first_person
FROM memories m
LEFT JOIN memory_cues c ON c.memory_id = m.id AND c.content_hash = m.content_hash
WHERE m.id IN (SELECT value FROM json_each(:ids)) AND +m.agent_id = :agent_id
  AND +m.is_deleted = 0
"""
# PostgreSQL: the ids as an array (json_each and the unary + are SQLite's).
CUES_FOR_PG = """
SELECT m.id AS id, m.content AS content, m.created_at AS created_at,
       c.times AS times, c.preference AS preference, c.first_person AS first_person
FROM memories m
LEFT JOIN memory_cues c ON c.memory_id = m.id AND c.content_hash = m.content_hash
WHERE m.id = ANY(:ids) AND m.agent_id = :agent_id AND m.is_deleted = 0
"""


@dataclass(frozen=True, slots=True)
class MemoryCues:
    """What a memory's text says about time (resolved spans), preference (the phrase) and
    whose view it gives (`first_person`: its speaker about themselves)."""

    created: date | None
    times: tuple[TimeSpan, ...] = ()
    preference: str | None = None
    first_person: bool = False


def read_cues(content: str, created_at: str) -> MemoryCues:
    """The cues of one text said at `created_at` (pure)."""
    anchor = anchor_date(created_at)
    times = tuple(resolve(content, anchor)) if anchor else ()
    return MemoryCues(anchor, times, stated_preference(content), speaks_for_self(content))


def write_cues(
    conn: Connection,
    memory_id: str,
    agent_id: str,
    content: str,
    created_at: str,
    content_hash: str,
) -> MemoryCues:
    """Read `content`'s cues and store them for the memory (inside the caller's transaction)."""
    cues = read_cues(content, created_at)
    conn.execute(
        UPSERT,
        {
            "memory_id": memory_id,
            "agent_id": agent_id,
            "content_hash": content_hash,
            "times": _times_json(cues.times),
            "first_day": min((s.start for s in cues.times), default=None),
            "last_day": max((s.end for s in cues.times), default=None),
            "preference": cues.preference,
            "first_person": int(cues.first_person),
        },
    )
    return cues


def cues_for(conn: Connection, agent_id: str, ids: Sequence[str]) -> dict[str, MemoryCues]:
    """The cues of the agent's live memories among `ids` (stored, else read from the text)."""
    if not ids:
        return {}
    if is_postgres(conn):
        rows = conn.execute(CUES_FOR_PG, {"ids": list(ids), "agent_id": agent_id})
    else:
        rows = conn.execute(CUES_FOR, {"ids": json.dumps(list(ids)), "agent_id": agent_id})
    out = {}
    for row in rows.fetchall():
        created_at = str(row["created_at"])
        if row["times"] is None:
            out[str(row["id"])] = read_cues(str(row["content"]), created_at)
            continue
        spans = tuple(
            TimeSpan(text, date.fromisoformat(first), date.fromisoformat(last))
            for text, first, last in json.loads(row["times"])
        )
        out[str(row["id"])] = MemoryCues(
            anchor_date(created_at), spans, row["preference"], bool(row["first_person"])
        )
    return out


def _times_json(times: Sequence[TimeSpan]) -> str:
    return json.dumps([[s.expression, s.start.isoformat(), s.end.isoformat()] for s in times])
