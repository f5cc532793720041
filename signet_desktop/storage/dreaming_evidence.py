"""dreaming_evidence_consumption and dreaming_evidence_reviews: what passes read and decided.

A completed Dreaming pass records what it read (consumption, per source revision); source
removal purges the rows that point at a removed source's transcripts. This module also holds
Dreaming's read of candidate evidence (completed transcripts, live memories, summary and
compaction artifacts, session summaries) not yet consumed at their current revision. A
transcript is identified by its session key (`source_kind = 'transcript'`,
`source_id = session_key`).
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


# -- what Dreaming reads (candidates newer than what passes consumed) --------------------

# One row per candidate source: kind, id, revision, when, text. A source is new evidence
# until a consumption (or terminal review) row holds its current revision.
_CANDIDATES = """
SELECT 'transcript' AS kind, session_key AS source_id,
       COALESCE(content_hash, updated_at) AS revision,
       COALESCE(completed_at, updated_at) AS at, content AS text
  FROM session_transcripts
 WHERE agent_id = :a AND completed_at IS NOT NULL
   AND length(content) > 0
UNION ALL
SELECT 'memory', id, 'v' || version, created_at, content
  FROM memories WHERE agent_id = :a AND is_deleted = 0
UNION ALL
SELECT 'artifact', source_path, content_hash, captured_at, content
  FROM memory_artifacts
 WHERE agent_id = :a AND removed_at IS NULL AND source_kind IN ('summary', 'compaction')
UNION ALL
SELECT 'summary', id, COALESCE(content_hash, created_at), latest_at, content
  FROM session_summaries WHERE agent_id = :a
"""
_UNCONSUMED = """
NOT EXISTS (SELECT 1 FROM dreaming_evidence_consumption c
             WHERE c.agent_id = :a AND c.source_kind = s.kind AND c.source_id = s.source_id
               AND c.source_revision = s.revision)
AND NOT EXISTS (SELECT 1 FROM dreaming_evidence_reviews r
                 WHERE r.agent_id = :a AND r.source_kind = s.kind
                   AND r.source_id = s.source_id AND r.source_revision = s.revision)
"""
CHARS_PER_TOKEN = 4


def pending_sources(conn: Connection, agent_id: str, limit: int) -> list[tuple[str, ...]]:
    """Up to `limit` unconsumed (kind, source_id, revision, at, text), oldest first."""
    rows = conn.execute(
        f"SELECT kind, source_id, revision, at, text FROM ({_CANDIDATES}) s"
        f" WHERE {_UNCONSUMED} ORDER BY at, kind, source_id LIMIT :n",
        {"a": agent_id, "n": limit},
    ).fetchall()
    return [tuple(str(v) if v is not None else "" for v in row) for row in rows]


def pending_tokens(conn: Connection, agent_id: str) -> tuple[int, int]:
    """(sources, estimated tokens) of unconsumed evidence for the agent."""
    row = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM((length(text) + {CHARS_PER_TOKEN - 1})"
        f" / {CHARS_PER_TOKEN}), 0) FROM ({_CANDIDATES}) s WHERE {_UNCONSUMED}",
        {"a": agent_id},
    ).fetchone()
    return int(row[0]), int(row[1])


def evidence_agents(conn: Connection) -> list[str]:
    """Agents that have any evidence (memories, transcripts, artifacts) or Dreaming state."""
    rows = conn.execute(
        "SELECT agent_id FROM memories UNION SELECT agent_id FROM session_transcripts"
        " UNION SELECT agent_id FROM memory_artifacts UNION SELECT agent_id FROM dreaming_state"
        " UNION SELECT agent_id FROM dreaming_attention WHERE status = 'pending'"
        " ORDER BY 1"
    ).fetchall()
    return [str(row[0]) for row in rows]


def record_consumption(
    conn: Connection,
    agent_id: str,
    pass_id: str,
    items: Sequence[tuple[str, str, str, int]],
    now: str,
) -> int:
    """Record (kind, source_id, revision, tokens) as read by a completed pass."""
    for kind, source_id, revision, tokens in items:
        conn.execute(
            "INSERT INTO dreaming_evidence_consumption (agent_id, source_kind, source_id,"
            " source_revision, pass_id, tokens, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (agent_id, kind, source_id, revision, pass_id, max(0, tokens), now),
        )
    return len(items)


def consumed_by_pass(conn: Connection, agent_id: str, pass_id: str) -> int:
    return int(
        conn.execute(
            "SELECT COUNT(*) FROM dreaming_evidence_consumption WHERE agent_id = ? AND pass_id = ?",
            (agent_id, pass_id),
        ).fetchone()[0]
    )


def search_sources(
    conn: Connection, agent_id: str, terms: Sequence[str], limit: int, kind: str | None = None
) -> list[str]:
    """Refs (`kind:id`) of the agent's candidate sources, consumed or not, whose stored text
    contains every term (case-insensitive), newest first; at most `limit`."""
    if not terms:
        return []
    likes = " AND ".join(f"instr(lower(s.text), :t{n}) > 0" for n in range(len(terms)))
    params: dict[str, object] = {f"t{n}": term.lower() for n, term in enumerate(terms)}
    params.update({"a": agent_id, "n": limit, "k": kind})
    rows = conn.execute(
        f"SELECT s.kind, s.source_id FROM ({_CANDIDATES}) s WHERE {likes}"
        " AND (:k IS NULL OR s.kind = :k) ORDER BY s.at DESC, s.kind, s.source_id LIMIT :n",
        params,
    ).fetchall()
    return [f"{row[0]}:{row[1]}" for row in rows]


def record_unsafe(
    conn: Connection,
    agent_id: str,
    pass_id: str,
    items: Sequence[tuple[str, str, str, str]],
    now: str,
) -> int:
    """Terminal `unsafe` reviews of (kind, source_id, revision, reason): content safety
    withholds that revision, so it stops being a candidate (a new revision is new evidence)."""
    for kind, source_id, revision, reason in items:
        conn.execute(
            "INSERT INTO dreaming_evidence_reviews (agent_id, source_kind, source_id,"
            " source_revision, disposition, reason, reviewed_by_pass_id, reviewed_at)"
            " VALUES (?, ?, ?, ?, 'unsafe', ?, ?, ?) ON CONFLICT DO NOTHING",
            (agent_id, kind, source_id, revision, reason[:1000], pass_id, now),
        )
    return len(items)
