"""transcript_turns: each retained conversation turn, indexed for recall (migration 0014).

Writers call these inside the transaction that writes the session's `session_transcripts`
row (capture, adoption, both importers), so a turn index never drifts from its session; a
deleted session row takes its turns with it (foreign-key cascade, FTS by trigger). Reads for
recall's transcript channel live in `recall/transcript_channel.py`; the neighbours of a hit
(`expand`) are read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import scalar_int

MAX_TURN_CHARS = 8_000  # a turn is indexed (and quoted) up to this; the canonical file is whole

INSERT_TURN = """
INSERT INTO transcript_turns (session_seq, ordinal, role, text, timestamp)
VALUES (:session_seq, :ordinal, :role, :text, :timestamp)
ON CONFLICT (session_seq, ordinal) DO UPDATE SET
    role = excluded.role, text = excluded.text, timestamp = excluded.timestamp
WHERE transcript_turns.text <> excluded.text OR transcript_turns.role <> excluded.role
"""

NEIGHBOURS = """
SELECT t.ordinal, t.role, t.text, t.timestamp
FROM transcript_turns t JOIN session_transcripts s ON s.seq = t.session_seq
WHERE s.agent_id = :agent_id AND s.session_key = :session_key
  AND t.ordinal BETWEEN :low AND :high
ORDER BY t.ordinal
"""


@dataclass(frozen=True, slots=True)
class TurnRow:
    """One turn to index: its 0-based position in the session, speaker, text and time."""

    ordinal: int
    role: str
    text: str
    timestamp: str | None = None


def session_seq(conn: Connection, agent_id: str, session_key: str) -> int | None:
    row = conn.execute(
        "SELECT seq FROM session_transcripts WHERE agent_id = :a AND session_key = :k",
        {"a": agent_id, "k": session_key},
    ).fetchone()
    return None if row is None else int(row[0])


def index_turns(conn: Connection, agent_id: str, session_key: str, turns: Sequence[TurnRow]) -> int:
    """Index (or refresh) these turns of the session's row; how many were given.

    Call after the row is written, in the same transaction. A turn's text is cut to
    MAX_TURN_CHARS; an unchanged turn is left as it is (no FTS churn). A writer that indexed
    the whole session settles its backfill (`settle_backfill`).
    """
    seq = session_seq(conn, agent_id, session_key)
    if seq is None or not turns:
        return 0
    conn.executemany(
        INSERT_TURN,
        [
            {
                "session_seq": seq,
                "ordinal": turn.ordinal,
                "role": turn.role,
                "text": turn.text[:MAX_TURN_CHARS],
                "timestamp": turn.timestamp,
            }
            for turn in turns
        ],
    )
    return len(turns)


def neighbours(
    conn: Connection, agent_id: str, session_key: str, ordinal: int, span: int
) -> list[TurnRow]:
    """The agent's session turns from `ordinal - span` to `ordinal + span`, in order."""
    rows = conn.execute(
        NEIGHBOURS,
        {
            "agent_id": agent_id,
            "session_key": session_key,
            "low": max(0, ordinal - span),
            "high": ordinal + span,
        },
    ).fetchall()
    return [_turn(r) for r in rows]


def source_turn_count(conn: Connection, agent_id: str, source_id: str) -> int:
    """How many indexed turns the sessions one import source brought hold (a removal's count;
    the rows themselves go with their sessions by cascade)."""
    return scalar_int(
        conn,
        "SELECT COUNT(*) FROM transcript_turns t JOIN session_transcripts s "
        "ON s.seq = t.session_seq WHERE s.agent_id = :a AND s.source_id = :src",
        {"a": agent_id, "src": source_id},
    )


# -- backfill (sessions retained before migration 0014) --------------------------------------


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A retained session whose turns are not indexed yet."""

    agent_id: str
    session_key: str
    harness: str | None
    source_id: str | None
    content: str


def pending_backfill(conn: Connection, limit: int) -> list[PendingSession]:
    rows = conn.execute(
        "SELECT s.agent_id, s.session_key, s.harness, s.source_id, s.content "
        "FROM transcript_turn_backfill b JOIN session_transcripts s ON s.seq = b.session_seq "
        "ORDER BY b.session_seq LIMIT :n",
        {"n": limit},
    ).fetchall()
    return [PendingSession(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def is_pending(conn: Connection, agent_id: str, session_key: str) -> bool:
    """Is this session waiting for the start-up backfill (retained before migration 0014)?"""
    row = conn.execute(
        "SELECT 1 FROM transcript_turn_backfill b JOIN session_transcripts s "
        "ON s.seq = b.session_seq WHERE s.agent_id = :a AND s.session_key = :k",
        {"a": agent_id, "k": session_key},
    ).fetchone()
    return row is not None


def settle_backfill(conn: Connection, agent_id: str, session_key: str) -> None:
    """The session needs no (more) backfill, turns or none."""
    seq = session_seq(conn, agent_id, session_key)
    if seq is not None:
        conn.execute("DELETE FROM transcript_turn_backfill WHERE session_seq = :s", {"s": seq})


def _turn(row: Any) -> TurnRow:
    return TurnRow(int(row["ordinal"]), str(row["role"]), str(row["text"]), row["timestamp"])
