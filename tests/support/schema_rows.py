"""Minimal rows for the schema parity tests (tests/integration/storage/test_pg_*_parity.py),
written with SQL both backends read."""

from __future__ import annotations

from signet_desktop.storage.connect import Connection

TS = "2026-01-01T00:00:00Z"
LATER = "2026-02-01T00:00:00Z"


def memory(conn: Connection, memory_id: str, agent: str = "a", **fields: object) -> None:
    """A minimal memory row (the triggers of 0009 count it)."""
    row: dict[str, object] = {
        "id": memory_id,
        "agent_id": agent,
        "content": f"content of {memory_id}",
        "normalized_content": f"content of {memory_id}",
        "content_hash": f"h-{memory_id}",
        "created_at": TS,
        "updated_at": TS,
        **fields,
    }
    names = ", ".join(row)
    conn.execute(f"INSERT INTO memories ({names}) VALUES ({', '.join(':' + n for n in row)})", row)


def entity(conn: Connection, entity_id: str, **fields: object) -> None:
    row: dict[str, object] = {
        "id": entity_id,
        "name": entity_id,
        "canonical_name": entity_id,
        "created_at": TS,
        "updated_at": TS,
        **fields,
    }
    names = ", ".join(row)
    conn.execute(f"INSERT INTO entities ({names}) VALUES ({', '.join(':' + n for n in row)})", row)


def count(conn: Connection, sql: str) -> int:
    return int(conn.execute(sql).fetchone()[0])
