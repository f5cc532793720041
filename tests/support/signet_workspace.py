"""Signet-shaped `memories.db` files for the importer's tests and bench.

The DDL follows Signet's schema (reference §6): `CURRENT` is a recent database, `OLDER` the
baseline (001) memories table with the early history table and no transcripts, `EXTRA` the
current schema plus columns and a table this project does not know. Rows are dicts; only
the columns the variant has are written, as Signet would have stored them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import sqlean

CURRENT = """
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL,
    checksum TEXT NOT NULL);
CREATE TABLE memories (
    id TEXT PRIMARY KEY, type TEXT NOT NULL DEFAULT 'fact', category TEXT,
    content TEXT NOT NULL, confidence REAL DEFAULT 1.0, importance REAL DEFAULT 0.5,
    source_id TEXT, source_type TEXT, tags TEXT, who TEXT, why TEXT, project TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL DEFAULT 'system',
    last_accessed TEXT, access_count INTEGER DEFAULT 0, vector_clock TEXT NOT NULL DEFAULT '{}',
    version INTEGER DEFAULT 1, manual_override INTEGER DEFAULT 0, pinned INTEGER DEFAULT 0,
    content_hash TEXT, normalized_content TEXT, is_deleted INTEGER DEFAULT 0, deleted_at TEXT,
    extraction_status TEXT DEFAULT 'none', embedding_model TEXT, extraction_model TEXT,
    update_count INTEGER DEFAULT 0, idempotency_key TEXT, source_path TEXT, source_section TEXT,
    scope TEXT, agent_id TEXT NOT NULL DEFAULT 'default', visibility TEXT DEFAULT 'global',
    runtime_path TEXT, superseded_by TEXT, superseded_at TEXT, superseded_reason TEXT,
    memory_kind TEXT, evidence_meta TEXT, stale_at TEXT, review_after TEXT
);
CREATE VIRTUAL TABLE memories_fts USING fts5(content, content=memories, content_rowid=rowid);
CREATE TABLE memory_history (
    id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, event TEXT NOT NULL, old_content TEXT,
    new_content TEXT, changed_by TEXT NOT NULL, reason TEXT, metadata TEXT,
    created_at TEXT NOT NULL, actor_type TEXT, session_id TEXT, request_id TEXT
);
CREATE TABLE session_transcripts (
    session_key TEXT PRIMARY KEY, content TEXT NOT NULL, harness TEXT, project TEXT,
    agent_id TEXT NOT NULL DEFAULT 'default', created_at TEXT NOT NULL, updated_at TEXT,
    completed_at TEXT, content_hash TEXT, source_id TEXT, source_record_id TEXT,
    source_meta_json TEXT
);
CREATE TABLE embeddings (id TEXT PRIMARY KEY, content_hash TEXT NOT NULL UNIQUE,
    vector BLOB NOT NULL, dimensions INTEGER NOT NULL, source_type TEXT NOT NULL,
    source_id TEXT NOT NULL, chunk_text TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE entities (id TEXT PRIMARY KEY, name TEXT NOT NULL, entity_type TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
INSERT INTO schema_migrations VALUES (147, '2026-01-01T00:00:00.000Z', 'x');
"""

OLDER = """
CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL,
    checksum TEXT NOT NULL);
CREATE TABLE conversations (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
    harness TEXT NOT NULL, started_at TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, updated_by TEXT NOT NULL);
CREATE TABLE memories (
    id TEXT PRIMARY KEY, type TEXT NOT NULL DEFAULT 'fact', category TEXT,
    content TEXT NOT NULL, confidence REAL DEFAULT 1.0, importance REAL DEFAULT 0.5,
    source_id TEXT, source_type TEXT, tags TEXT, who TEXT, why TEXT, project TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, updated_by TEXT NOT NULL DEFAULT 'system',
    last_accessed TEXT, access_count INTEGER DEFAULT 0, vector_clock TEXT NOT NULL DEFAULT '{}',
    version INTEGER DEFAULT 1, manual_override INTEGER DEFAULT 0, pinned INTEGER DEFAULT 0
);
CREATE TABLE memory_history (
    id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, event TEXT NOT NULL, old_content TEXT,
    new_content TEXT, changed_by TEXT NOT NULL, reason TEXT, metadata TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO schema_migrations VALUES (2, '2025-02-01T00:00:00.000Z', 'x');
"""

EXTRA = (
    CURRENT
    + """
ALTER TABLE memories ADD COLUMN sentiment TEXT;
ALTER TABLE memories ADD COLUMN raw_blob BLOB;
ALTER TABLE memory_history ADD COLUMN tool_name TEXT;
ALTER TABLE session_transcripts ADD COLUMN token_count INTEGER;
CREATE TABLE custom_notes (id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO custom_notes (body) VALUES ('one'), ('two');
"""
)

SCHEMAS = {"current": CURRENT, "older": OLDER, "extra": EXTRA}


def memory(number: int, **values: Any) -> dict[str, Any]:
    """A Signet memory row (current-schema column names) with plausible values."""
    stamp = f"2025-03-{1 + number % 28:02d}T10:{number % 60:02d}:00.000Z"
    row: dict[str, Any] = {
        "id": f"sig-{number:06d}",
        "type": "fact",
        "content": f"Signet memory number {number} about topic {number % 97}",
        "importance": 0.7,
        "tags": "alpha,beta",
        "who": "claude-code",
        "project": "/home/me/proj",
        "created_at": stamp,
        "updated_at": stamp,
        "pinned": 0,
        "agent_id": "default",
        "visibility": "global",
    }
    row.update(values)
    return row


def event(memory_id: str, number: int, event_name: str, **values: Any) -> dict[str, Any]:
    """A Signet memory_history row."""
    row: dict[str, Any] = {
        "id": f"hist-{memory_id}-{number}",
        "memory_id": memory_id,
        "event": event_name,
        "changed_by": "claude-code",
        "created_at": f"2025-03-01T10:00:{number:02d}.000Z",
        "actor_type": "agent",
    }
    row.update(values)
    return row


def transcript(key: str, turns: int = 2, **values: Any) -> dict[str, Any]:
    """A Signet session_transcripts row with role-prefixed text."""
    text = "\n\n".join(f"{('User', 'Assistant')[i % 2]}: turn {i} of {key}" for i in range(turns))
    row: dict[str, Any] = {
        "session_key": key,
        "content": text,
        "harness": "claude-code",
        "project": "/home/me/proj",
        "agent_id": "default",
        "created_at": "2025-03-02T09:00:00.000Z",
        "updated_at": "2025-03-02T09:30:00.000Z",
        "completed_at": "2025-03-02T09:30:00.000Z",
    }
    row.update(values)
    return row


def make_signet_db(
    path: Path,
    variant: str = "current",
    *,
    memories: Iterable[Mapping[str, Any]] = (),
    history: Iterable[Mapping[str, Any]] = (),
    transcripts: Iterable[Mapping[str, Any]] = (),
) -> Path:
    """Write a Signet-shaped database (WAL, closed cleanly: no sidecar files remain)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlean.connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMAS[variant])
        conn.execute("BEGIN")
        for table, rows in (
            ("memories", memories),
            ("memory_history", history),
            ("session_transcripts", transcripts),
        ):
            _insert(conn, table, rows)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


def _insert(conn: Any, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}
    for row in rows:
        if not have:
            raise ValueError(f"this variant has no {table} table")
        names = [k for k in row if k in have]
        marks = ", ".join(f":{k}" for k in names)
        conn.execute(
            f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})",
            {k: row[k] for k in names},
        )
