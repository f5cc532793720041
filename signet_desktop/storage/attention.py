"""dreaming_attention: bounded hygiene, review, evidence-retry and surprisal work (owner).

One row per (agent, kind, subject_ref). Creating attention that already exists keeps one row:
a pending row takes the higher priority and the new details; a resolved or declined row is
reopened (generation + 1). Only pending rows are resolved or declined. Pass ids are stored
only when the pass exists (the column is a foreign key; manual applies have none).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.ontology import Attention
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.rows import TableRows, from_row, scalar_int

COLUMNS = (
    "id, agent_id, kind, subject_ref, details_json, priority, status, created_by_pass_id, "
    "resolved_by_pass_id, resolution, created_at, updated_at, resolved_at"
)
_PASS = "(SELECT p.id FROM dreaming_passes p WHERE p.id = :pass)"

UPSERT = f"""
INSERT INTO dreaming_attention (id, agent_id, kind, subject_ref, details_json, priority,
    status, created_by_pass_id, created_at, updated_at)
VALUES (:id, :agent, :kind, :subject, :details, :priority, 'pending', {_PASS}, :now, :now)
ON CONFLICT (agent_id, kind, subject_ref) DO UPDATE SET
    details_json = excluded.details_json,
    priority = CASE WHEN dreaming_attention.status = 'pending'
        THEN max(dreaming_attention.priority, excluded.priority) ELSE excluded.priority END,
    generation = dreaming_attention.generation
        + (CASE WHEN dreaming_attention.status = 'pending' THEN 0 ELSE 1 END),
    status = 'pending',
    resolved_at = NULL,
    resolved_by_pass_id = NULL,
    resolution = NULL,
    updated_at = excluded.updated_at
"""
# PostgreSQL: GREATEST for SQLite's two-argument max() (priority is NOT NULL: same result).
UPSERT_PG = UPSERT.replace("max(dreaming_attention", "GREATEST(dreaming_attention")


def _row(row: Any) -> Attention:
    return from_row(
        Attention,
        row,
        details=json.loads(row["details_json"] or "{}"),
        priority=int(row["priority"]),
    )


ROWS = TableRows("dreaming_attention", COLUMNS, _row)


def create_attention(
    conn: Connection,
    *,
    agent_id: str,
    kind: str,
    subject_ref: str,
    details: Mapping[str, Any],
    priority: int = 50,
    pass_id: str | None = None,
) -> Attention:
    """Create (or reopen / refresh) the attention row for this subject; the row as stored."""
    conn.execute(
        UPSERT_PG if is_postgres(conn) else UPSERT,
        {
            "id": str(uuid.uuid4()),
            "agent": agent_id,
            "kind": kind,
            "subject": subject_ref,
            "details": json.dumps(dict(details), ensure_ascii=False),
            "priority": priority,
            "pass": pass_id,
            "now": utc_now(),
        },
    )
    found = ROWS.one(
        conn,
        "agent_id = :a AND kind = :k AND subject_ref = :s",
        {"a": agent_id, "k": kind, "s": subject_ref},
    )
    assert found is not None
    return found


def get_attention(conn: Connection, agent_id: str, attention_id: str) -> Attention | None:
    return ROWS.one(conn, "agent_id = :a AND id = :i", {"a": agent_id, "i": attention_id})


def list_attention(
    conn: Connection, agent_id: str, *, status: str | None = "pending", limit: int = 100
) -> list[Attention]:
    """The agent's attention rows (pending by default), highest priority first."""
    return ROWS.all(
        conn,
        "agent_id = :a AND (:status IS NULL OR status = :status)"
        " ORDER BY priority DESC, created_at, id LIMIT :limit",
        {"a": agent_id, "status": status, "limit": limit},
    )


def count_pending(conn: Connection, agent_id: str) -> int:
    return scalar_int(
        conn,
        "SELECT COUNT(*) FROM dreaming_attention WHERE agent_id = :a AND status = 'pending'",
        {"a": agent_id},
    )


def _close(
    conn: Connection, agent_id: str, attention_id: str, status: str, pass_id: str | None, why: str
) -> bool:
    cursor = conn.execute(
        f"UPDATE dreaming_attention SET status = :status, resolved_at = :now,"
        f" resolved_by_pass_id = {_PASS}, resolution = :why, updated_at = :now"
        " WHERE agent_id = :a AND id = :i AND status = 'pending'",
        {
            "status": status,
            "now": utc_now(),
            "pass": pass_id,
            "why": why,
            "a": agent_id,
            "i": attention_id,
        },
    )
    return bool(cursor.rowcount)


def resolve_attention(
    conn: Connection, agent_id: str, attention_id: str, *, pass_id: str | None, resolution: str
) -> bool:
    """Mark a pending row resolved (by this pass); False if it was not pending here."""
    return _close(conn, agent_id, attention_id, "resolved", pass_id, resolution)


def decline_attention(
    conn: Connection, agent_id: str, attention_id: str, *, pass_id: str | None, resolution: str
) -> bool:
    """Mark a pending row declined; False if it was not pending here."""
    return _close(conn, agent_id, attention_id, "declined", pass_id, resolution)


def reopen_attention(conn: Connection, agent_id: str, attention_id: str) -> bool:
    """Put a resolved/declined row back to pending (a reverted pass's attention)."""
    cursor = conn.execute(
        "UPDATE dreaming_attention SET status = 'pending', resolved_at = NULL,"
        " resolved_by_pass_id = NULL, resolution = NULL, updated_at = :now"
        " WHERE agent_id = :a AND id = :i AND status <> 'pending'",
        {"now": utc_now(), "a": agent_id, "i": attention_id},
    )
    return bool(cursor.rowcount)


def resolved_by_pass(conn: Connection, agent_id: str, pass_id: str) -> list[Attention]:
    return ROWS.all(
        conn,
        "agent_id = :a AND resolved_by_pass_id = :p ORDER BY resolved_at, id",
        {"a": agent_id, "p": pass_id},
    )


def created_by_pass(
    conn: Connection, agent_id: str, pass_id: str, *, status: str = "pending"
) -> list[Attention]:
    """Attention rows a pass created (the `flag` operations it applied), in one status."""
    return ROWS.all(
        conn,
        "agent_id = :a AND created_by_pass_id = :p AND status = :s ORDER BY created_at, id",
        {"a": agent_id, "p": pass_id, "s": status},
    )
