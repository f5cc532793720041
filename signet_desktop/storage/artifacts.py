"""memory_artifacts (the index of Markdown artifacts) and memory_artifact_tombstones.

The index is rebuildable from the files (`service/artifacts/service.py: reindex`); a tombstone
keeps a removed session's files out of it for good. Rows are agent-scoped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.artifacts import Artifact, ArtifactMeta
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.rows import TableRows, rows_changed, texts

COLUMNS = (
    "source_path, content_hash, source_kind, session_key, session_token, project, harness, "
    "captured_at, started_at, ended_at, memory_sentence, content, agent_id"
)

UPSERT_ARTIFACT = """
INSERT INTO memory_artifacts (
    agent_id, source_path, content_hash, source_kind, session_id, session_key, session_token,
    project, harness, captured_at, started_at, ended_at, memory_sentence, content,
    source_mtime, created_at, updated_at
) VALUES (
    :agent_id, :source_path, :content_hash, :source_kind, :session_key, :session_key,
    :session_token, :project, :harness, :captured_at, :started_at, :ended_at,
    :memory_sentence, :content, :source_mtime, :now, :now
)
ON CONFLICT (agent_id, source_path) DO UPDATE SET
    content_hash = excluded.content_hash,
    source_kind = excluded.source_kind,
    session_key = excluded.session_key,
    session_token = excluded.session_token,
    project = excluded.project,
    harness = excluded.harness,
    captured_at = excluded.captured_at,
    started_at = excluded.started_at,
    ended_at = excluded.ended_at,
    memory_sentence = excluded.memory_sentence,
    content = excluded.content,
    source_mtime = excluded.source_mtime,
    removed_at = NULL,
    updated_at = excluded.updated_at
WHERE memory_artifacts.content_hash IS DISTINCT FROM excluded.content_hash
   OR memory_artifacts.removed_at IS NOT NULL
"""

# Completed, captured (not imported) transcripts without a transcript artifact as new as their
# last capture. Imported sessions keep their evidence with their source, whose removal
# purges them; an artifact of theirs would outlive that purge.
TRANSCRIPTS_WITHOUT_ARTIFACT = """
SELECT t.agent_id, t.session_key FROM session_transcripts t
WHERE t.completed_at IS NOT NULL AND t.source_id IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM memory_artifacts a
      WHERE a.agent_id = t.agent_id AND a.session_key = t.session_key
        AND a.source_kind = 'transcript' AND a.removed_at IS NULL
        AND a.captured_at >= t.updated_at)
ORDER BY t.updated_at, t.seq
"""

LEDGER = f"""
SELECT {COLUMNS.replace(", content, ", ", '' AS content, ")} FROM memory_artifacts
WHERE agent_id = :agent_id AND removed_at IS NULL AND captured_at >= :since
ORDER BY captured_at DESC, source_path DESC LIMIT :limit
"""


def _row(row: Any) -> Artifact:
    meta = ArtifactMeta(
        kind=row["source_kind"],
        agent_id=row["agent_id"],
        session_key=row["session_key"] or "",
        session_token=row["session_token"],
        captured_at=row["captured_at"],
        harness=row["harness"],
        project=row["project"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        memory_sentence=row["memory_sentence"],
    )
    return Artifact(meta, row["source_path"], row["content_hash"], row["content"])


ROWS = TableRows("memory_artifacts", COLUMNS, _row)


def upsert_artifact(conn: Connection, artifact: Artifact, source_mtime: str | None) -> bool:
    """Index one file (insert, or refresh a row whose hash changed); True if a row changed."""
    meta = artifact.meta
    cursor = conn.execute(
        UPSERT_ARTIFACT,
        {
            "agent_id": meta.agent_id,
            "source_path": artifact.source_path,
            "content_hash": artifact.content_hash,
            "source_kind": meta.kind,
            "session_key": meta.session_key,
            "session_token": meta.session_token,
            "project": meta.project,
            "harness": meta.harness,
            "captured_at": meta.captured_at,
            "started_at": meta.started_at,
            "ended_at": meta.ended_at,
            "memory_sentence": meta.memory_sentence,
            "content": artifact.content,
            "source_mtime": source_mtime,
            "now": utc_now(),
        },
    )
    return bool(cursor.rowcount)


def indexed_paths(conn: Connection, agent_id: str | None) -> dict[str, str]:
    """source_path -> content_hash of the live rows (one agent, or every agent for None)."""
    rows = conn.execute(
        "SELECT source_path, content_hash FROM memory_artifacts "
        "WHERE removed_at IS NULL AND (:a IS NULL OR agent_id = :a)",
        {"a": agent_id},
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def delete_rows(conn: Connection, agent_id: str | None, paths: Sequence[str]) -> int:
    """Drop index rows by path (their files are gone); the FTS trigger follows."""
    sql = DELETE_ROWS_PG if is_postgres(conn) else DELETE_ROWS
    return rows_changed(conn, sql, {"a": agent_id, "paths": json.dumps(list(paths))})


DELETE_ROWS = (
    "DELETE FROM memory_artifacts WHERE (:a IS NULL OR agent_id = :a) "
    "AND source_path IN (SELECT value FROM json_each(:paths))"
)
DELETE_ROWS_PG = postgres_twin(DELETE_ROWS)


def session_paths(conn: Connection, agent_id: str, token: str) -> list[str]:
    return texts(
        conn,
        "SELECT source_path FROM memory_artifacts WHERE agent_id = :a AND session_token = :t "
        "ORDER BY source_path",
        {"a": agent_id, "t": token},
    )


def delete_session(conn: Connection, agent_id: str, token: str) -> int:
    return rows_changed(
        conn,
        "DELETE FROM memory_artifacts WHERE agent_id = :a AND session_token = :t",
        {"a": agent_id, "t": token},
    )


def add_tombstone(
    conn: Connection, agent_id: str, token: str, reason: str, paths: Sequence[str]
) -> None:
    conn.execute(
        """
        INSERT INTO memory_artifact_tombstones
            (agent_id, session_token, reason, removed_paths_json, removed_at)
        VALUES (:a, :t, :reason, :paths, :now)
        ON CONFLICT (agent_id, session_token) DO UPDATE SET
            reason = excluded.reason, removed_paths_json = excluded.removed_paths_json,
            removed_at = excluded.removed_at
        """,
        {
            "a": agent_id,
            "t": token,
            "reason": reason,
            "paths": json.dumps(list(paths)),
            "now": utc_now(),
        },
    )


def tombstoned(conn: Connection, agent_id: str | None = None) -> set[tuple[str, str]]:
    """(agent id, session token) of every removed session (one agent, or all for None)."""
    rows = conn.execute(
        "SELECT agent_id, session_token FROM memory_artifact_tombstones "
        "WHERE :a IS NULL OR agent_id = :a",
        {"a": agent_id},
    ).fetchall()
    return {(str(r[0]), str(r[1])) for r in rows}


def transcripts_without_artifact(conn: Connection) -> list[tuple[str, str]]:
    """(agent id, session key) of completed transcripts whose latest capture has no artifact."""
    rows = conn.execute(TRANSCRIPTS_WITHOUT_ARTIFACT).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def latest_of_session(
    conn: Connection, agent_id: str, session_key: str, kind: str
) -> Artifact | None:
    return ROWS.one(
        conn,
        "agent_id = :a AND session_key = :k AND source_kind = :kind AND removed_at IS NULL "
        "ORDER BY captured_at DESC LIMIT 1",
        {"a": agent_id, "k": session_key, "kind": kind},
    )


def ledger(conn: Connection, agent_id: str, since: str, limit: int) -> list[Artifact]:
    """The agent's artifacts captured at or after `since`, newest first (bodies left out)."""
    rows = conn.execute(LEDGER, {"agent_id": agent_id, "since": since, "limit": limit})
    return [_row(r) for r in rows.fetchall()]


def newest_capture(conn: Connection, agent_id: str) -> str | None:
    row = conn.execute(
        "SELECT MAX(captured_at) FROM memory_artifacts WHERE agent_id = :a AND removed_at IS NULL",
        {"a": agent_id},
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def list_artifacts(conn: Connection, agent_id: str) -> list[Artifact]:
    """Every live artifact of the agent, oldest first (stable: captured_at, path)."""
    return ROWS.all(
        conn,
        "agent_id = :a AND removed_at IS NULL ORDER BY captured_at, source_path",
        {"a": agent_id},
    )
