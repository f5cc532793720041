"""connectors: external source registrations with their config, cursor and sync state.

The owner of that table (migrations/0002). A disconnected connector is not deleted: its
documents keep `connector_id` (a foreign key), so the row stays `disabled` with its last
error and sync time as the audit of what it was. Document reads for one connector (ids,
counts per state) use `documents`' connector index and are reads only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from signet_desktop.domain.connectors import Connector
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.rows import from_row, texts

COLUMNS = (
    "id, agent_id, provider, display_name, config_json, cursor_json, status, last_sync_at, "
    "last_error, created_at, updated_at"
)
INSERT = """
INSERT INTO connectors (id, agent_id, provider, display_name, config_json, status,
                        created_at, updated_at)
VALUES (:id, :agent_id, :provider, :name, :config, 'idle', :now, :now)
"""
GET = f"SELECT {COLUMNS} FROM connectors WHERE id = :id AND agent_id = :agent_id"
LIST = f"""
SELECT {COLUMNS} FROM connectors
WHERE agent_id = :agent_id AND (:all = 1 OR status <> 'disabled')
ORDER BY created_at, id
"""
WATCHED = f"""
SELECT {COLUMNS} FROM connectors
WHERE status IN ('idle', 'error') AND json_extract(config_json, '$.watch') = 1
ORDER BY created_at, id
"""
WATCHED_PG = f"""
SELECT {COLUMNS} FROM connectors
WHERE status IN ('idle', 'error') AND config_json -> 'watch' = 'true'::jsonb
ORDER BY created_at, id
"""
LIVE_ON_ROOT = """
SELECT id FROM connectors
WHERE agent_id = :agent_id AND provider = :provider AND status <> 'disabled'
  AND json_extract(config_json, '$.path') = :path
LIMIT 1
"""
LIVE_ON_ROOT_PG = LIVE_ON_ROOT.replace(
    "json_extract(config_json, '$.path')", "config_json ->> 'path'"
)
SET_STATUS = """
UPDATE connectors SET status = :status, last_error = :error, updated_at = :now,
    last_sync_at = CASE WHEN :synced = 1 THEN :now ELSE last_sync_at END
WHERE id = :id AND agent_id = :agent_id
"""
SET_CURSOR = """
UPDATE connectors SET cursor_json = :cursor, updated_at = :now
WHERE id = :id AND agent_id = :agent_id
"""
DISABLE = """
UPDATE connectors SET status = 'disabled', cursor_json = NULL, updated_at = :now
WHERE id = :id AND agent_id = :agent_id
"""
INTERRUPTED = """
UPDATE connectors SET status = 'error', last_error = 'sync interrupted (daemon stopped)',
    updated_at = :now
WHERE status = 'syncing' AND id NOT IN (SELECT value FROM json_each(:busy))
"""
INTERRUPTED_PG = postgres_twin(INTERRUPTED)
# Reads of `documents` by its connector index (storage/documents.py owns the writes).
LIVE_DOCUMENTS = """
SELECT id FROM documents
WHERE connector_id = :id AND agent_id = :agent_id AND status <> 'deleted'
"""
DOCUMENT_STATES = """
SELECT status, COUNT(*) FROM documents
WHERE connector_id = :id AND agent_id = :agent_id GROUP BY status
"""


def _connector(row: Any) -> Connector:
    return from_row(
        Connector,
        row,
        config=json.loads(row["config_json"] or "{}"),
        cursor=json.loads(row["cursor_json"]) if row["cursor_json"] else None,
    )


def insert_connector(
    conn: Connection,
    connector_id: str,
    *,
    agent_id: str,
    provider: str,
    name: str,
    config: Mapping[str, Any],
) -> None:
    """Register a connector, idle with no cursor yet."""
    conn.execute(
        INSERT,
        {
            "id": connector_id,
            "agent_id": agent_id,
            "provider": provider,
            "name": name,
            "config": json.dumps(dict(config), ensure_ascii=False),
            "now": utc_now(),
        },
    )


def get_connector(conn: Connection, agent_id: str, connector_id: str) -> Connector | None:
    """One connector of this agent (disabled ones too)."""
    row = conn.execute(GET, {"id": connector_id, "agent_id": agent_id}).fetchone()
    return _connector(row) if row else None


def list_connectors(conn: Connection, agent_id: str, *, include_disabled: bool) -> list[Connector]:
    """The agent's connectors, oldest first."""
    rows = conn.execute(LIST, {"agent_id": agent_id, "all": int(include_disabled)}).fetchall()
    return [_connector(r) for r in rows]


def watched_connectors(conn: Connection) -> list[Connector]:
    """Every agent's live connectors with `watch: true` that are not syncing now."""
    sql = WATCHED_PG if is_postgres(conn) else WATCHED
    return [_connector(r) for r in conn.execute(sql).fetchall()]


def live_on_root(conn: Connection, agent_id: str, provider: str, path: str) -> str | None:
    """The id of the agent's live connector of this provider over `path`, if any."""
    row = conn.execute(
        LIVE_ON_ROOT_PG if is_postgres(conn) else LIVE_ON_ROOT,
        {"agent_id": agent_id, "provider": provider, "path": path},
    ).fetchone()
    return str(row[0]) if row else None


def set_status(
    conn: Connection,
    agent_id: str,
    connector_id: str,
    status: str,
    *,
    error: str | None = None,
    synced: bool = False,
) -> None:
    """Move the connector to `status` (with its error; `synced` stamps last_sync_at)."""
    conn.execute(
        SET_STATUS,
        {
            "id": connector_id,
            "agent_id": agent_id,
            "status": status,
            "error": error,
            "synced": int(synced),
            "now": utc_now(),
        },
    )


def set_cursor(
    conn: Connection, agent_id: str, connector_id: str, cursor: Mapping[str, Any]
) -> None:
    """Store the incremental cursor."""
    conn.execute(
        SET_CURSOR,
        {
            "id": connector_id,
            "agent_id": agent_id,
            "cursor": json.dumps(dict(cursor), separators=(",", ":")),
            "now": utc_now(),
        },
    )


def disable(conn: Connection, agent_id: str, connector_id: str) -> None:
    """Mark the connector disconnected (its cursor dropped; the row stays as the record)."""
    conn.execute(DISABLE, {"id": connector_id, "agent_id": agent_id, "now": utc_now()})


def interrupt_syncing(conn: Connection, busy: Sequence[str] = ()) -> int:
    """Syncs a stopped process left `syncing` become `error` (at start-up); `busy` are the
    connectors this process is syncing now."""
    params = {"now": utc_now(), "busy": json.dumps(list(busy))}
    sql = INTERRUPTED_PG if is_postgres(conn) else INTERRUPTED
    return int(conn.execute(sql, params).rowcount)


def live_document_ids(conn: Connection, agent_id: str, connector_id: str) -> list[str]:
    """Ids of the connector's documents that are not deleted."""
    return texts(conn, LIVE_DOCUMENTS, {"id": connector_id, "agent_id": agent_id})


def document_states(conn: Connection, agent_id: str, connector_id: str) -> dict[str, int]:
    """How many of the connector's documents are in each state."""
    rows = conn.execute(DOCUMENT_STATES, {"id": connector_id, "agent_id": agent_id}).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}
