"""Batch reads of session_transcripts for recall's `expand` (writes stay in transcripts.py)."""

from __future__ import annotations

from collections.abc import Sequence

from signet_desktop.domain.sessions import SessionTranscript
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.transcripts import COLUMNS, _row

_BATCH = 500  # keys per IN (...) — well under SQLite's variable limit


def transcripts_for_sessions(
    conn: Connection, agent_id: str, session_keys: Sequence[str]
) -> dict[str, SessionTranscript]:
    """The agent's transcript rows for these session keys, by key (missing keys absent)."""
    found: dict[str, SessionTranscript] = {}
    keys = list(dict.fromkeys(session_keys))
    for start in range(0, len(keys), _BATCH):
        chunk = keys[start : start + _BATCH]
        marks = ", ".join("?" for _ in chunk)
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM session_transcripts"
            f" WHERE agent_id = ? AND session_key IN ({marks})",
            (agent_id, *chunk),
        ).fetchall()
        for row in rows:
            transcript = _row(row)
            found[transcript.session_key] = transcript
    return found
