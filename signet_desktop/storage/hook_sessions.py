"""hook_sessions and session_context_ledger: session claims, epochs and what was injected."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sessions import HookSession
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import TableRows, from_row

COLUMNS = (
    "agent_id, session_key, harness, project, runtime_path, context_epoch, bypassed, "
    "started_at, last_seen_at, ended_at"
)


def _row(row: Any) -> HookSession:
    return from_row(
        HookSession,
        row,
        context_epoch=int(row["context_epoch"]),
        bypassed=bool(row["bypassed"]),
    )


ROWS = TableRows("hook_sessions", COLUMNS, _row)


def get_session(conn: Connection, agent_id: str, session_key: str) -> HookSession | None:
    return ROWS.one(conn, "agent_id = :a AND session_key = :k", {"a": agent_id, "k": session_key})


def touch_session(
    conn: Connection,
    agent_id: str,
    session_key: str,
    harness: str,
    project: str | None,
    runtime_path: str | None,
) -> HookSession:
    """Create the session or mark it seen; the first runtime path given claims it."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO hook_sessions (agent_id, session_key, harness, project, runtime_path,
                                   started_at, last_seen_at)
        VALUES (:a, :k, :h, :p, :r, :now, :now)
        ON CONFLICT (agent_id, session_key) DO UPDATE SET
            last_seen_at = :now,
            project = COALESCE(hook_sessions.project, excluded.project),
            runtime_path = COALESCE(hook_sessions.runtime_path, excluded.runtime_path),
            ended_at = NULL
        """,
        {
            "a": agent_id,
            "k": session_key,
            "h": harness,
            "p": project,
            "r": runtime_path,
            "now": now,
        },
    )
    found = get_session(conn, agent_id, session_key)
    assert found is not None
    return found


def end_session(conn: Connection, agent_id: str, session_key: str) -> None:
    conn.execute(
        "UPDATE hook_sessions SET ended_at = :now, last_seen_at = :now "
        "WHERE agent_id = :a AND session_key = :k",
        {"a": agent_id, "k": session_key, "now": utc_now()},
    )


def advance_epoch(conn: Connection, agent_id: str, session_key: str) -> int:
    """The next context epoch of the session (after a compaction); its new value."""
    conn.execute(
        "UPDATE hook_sessions SET context_epoch = context_epoch + 1, last_seen_at = :now "
        "WHERE agent_id = :a AND session_key = :k",
        {"a": agent_id, "k": session_key, "now": utc_now()},
    )
    found = get_session(conn, agent_id, session_key)
    return 0 if found is None else found.context_epoch


def set_bypassed(conn: Connection, agent_id: str, session_key: str, bypassed: bool) -> None:
    conn.execute(
        "UPDATE hook_sessions SET bypassed = :b WHERE agent_id = :a AND session_key = :k",
        {"a": agent_id, "k": session_key, "b": int(bypassed)},
    )


def injected_ids(conn: Connection, agent_id: str, session_key: str, epoch: int) -> set[str]:
    rows = conn.execute(
        "SELECT memory_id FROM session_context_ledger "
        "WHERE agent_id = :a AND session_key = :k AND context_epoch = :e",
        {"a": agent_id, "k": session_key, "e": epoch},
    ).fetchall()
    return {str(r[0]) for r in rows}


def record_injected(
    conn: Connection, agent_id: str, session_key: str, epoch: int, memory_ids: Iterable[str]
) -> None:
    now = utc_now()
    conn.executemany(  # ON CONFLICT DO NOTHING: one text for SQLite (3.24+) and PostgreSQL
        "INSERT INTO session_context_ledger "
        "(agent_id, session_key, context_epoch, memory_id, injected_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        [(agent_id, session_key, epoch, memory_id, now) for memory_id in memory_ids],
    )


def open_sessions_idle_since(
    conn: Connection, before: str, limit: int = 500
) -> Sequence[tuple[str, str]]:
    """(agent, session key) of sessions never ended and not seen since `before` (any agent:
    maintenance, not a read a caller makes)."""
    rows = conn.execute(
        "SELECT agent_id, session_key FROM hook_sessions "
        "WHERE ended_at IS NULL AND last_seen_at < :before ORDER BY last_seen_at LIMIT :n",
        {"before": before, "n": limit},
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]
