"""dreaming_evidence_consumption and dreaming_evidence_reviews: what passes read and decided.

Dreaming (a later issue) writes these as it reads evidence; so far the one writer is source
removal, which purges the rows that point at a removed source's transcripts. A transcript is
identified by its session key (`source_kind = 'transcript'`, `source_id = session_key`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from signet_desktop.storage.connect import Connection

TABLES = ("dreaming_evidence_consumption", "dreaming_evidence_reviews")
_KEYS_IN = "source_id IN (SELECT value FROM json_each(:keys))"


def count_transcript_evidence(
    conn: Connection, agent_id: str, session_keys: Sequence[str]
) -> dict[str, int]:
    """How many rows of each table point at these sessions' transcripts."""
    params = {"a": agent_id, "keys": json.dumps(list(session_keys))}
    return {
        table: int(
            conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE agent_id = :a "
                f"AND source_kind = 'transcript' AND {_KEYS_IN}",
                params,
            ).fetchone()[0]
        )
        for table in TABLES
    }


def purge_transcript_evidence(
    conn: Connection, agent_id: str, session_keys: Sequence[str]
) -> dict[str, int]:
    """Delete the consumption and review rows of these sessions' transcripts."""
    params = {"a": agent_id, "keys": json.dumps(list(session_keys))}
    consumption = conn.execute(
        "DELETE FROM dreaming_evidence_consumption WHERE agent_id = :a "
        f"AND source_kind = 'transcript' AND {_KEYS_IN}",
        params,
    ).rowcount
    reviews = conn.execute(
        "DELETE FROM dreaming_evidence_reviews WHERE agent_id = :a "
        f"AND source_kind = 'transcript' AND {_KEYS_IN}",
        params,
    ).rowcount
    return {TABLES[0]: int(consumption), TABLES[1]: int(reviews)}
