"""sources, source_import_runs, source_import_files, source_import_records, source_tombstones.

The import bookkeeping (migrations/0002): a registered source, each run over it with its
counters, each file inventoried and staged (offset, hash, size, mtime), each record (one
session) with its outcome and where its turns were appended to the canonical transcript, and
the bounded tombstone a removal leaves. Every read and write is scoped by agent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sources import (
    COUNT_FIELDS,
    ImportCounts,
    ImportFile,
    ImportRecord,
    ImportRun,
    Source,
    SourceTombstone,
    SourceTotals,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import insertion_tie
from signet_desktop.storage.rows import TableRows, from_row, rows_changed, texts

MAX_PURGED_JSON = 4096
SOURCE_COLUMNS = (
    "id, agent_id, kind, name, root_path, status, last_error, created_at, updated_at, removed_at"
)
RUN_COLUMNS = "id, source_id, agent_id, status, triggered_by, error, started_at, finished_at, " + (
    ", ".join(COUNT_FIELDS)
)
FILE_COLUMNS = (
    "id, source_id, relative_path, staged_path, byte_offset, content_hash, size_bytes, mtime, "
    "status, last_error"
)
RECORD_COLUMNS = (
    "id, source_id, source_record_id, file_id, session_key, content_hash, outcome, attempts, "
    "turn_count, canonical_path, canonical_offset, last_error"
)


def new_source_id() -> str:
    return f"src_{uuid.uuid4().hex}"


def new_run_id() -> str:
    return f"run_{uuid.uuid4().hex}"


# -- sources -------------------------------------------------------------------------------


SOURCES = TableRows("sources", SOURCE_COLUMNS, lambda row: from_row(Source, row))


def insert_source(
    conn: Connection, *, agent_id: str, kind: str, name: str, root_path: str
) -> Source:
    now = utc_now()
    source_id = new_source_id()
    conn.execute(
        "INSERT INTO sources (id, agent_id, kind, name, root_path, created_at, updated_at) "
        "VALUES (:id, :a, :kind, :name, :root, :now, :now)",
        {"id": source_id, "a": agent_id, "kind": kind, "name": name, "root": root_path, "now": now},
    )
    found = get_source(conn, agent_id, source_id)
    assert found is not None
    return found


def get_source(conn: Connection, agent_id: str, source_id: str) -> Source | None:
    return SOURCES.one(conn, "agent_id = :a AND id = :id", {"a": agent_id, "id": source_id})


def live_source_at(conn: Connection, agent_id: str, kind: str, root_path: str) -> Source | None:
    """The live (not removed) source of this kind at this root, if registered."""
    return SOURCES.one(
        conn,
        "agent_id = :a AND kind = :kind AND root_path = :root AND removed_at IS NULL",
        {"a": agent_id, "kind": kind, "root": root_path},
    )


def list_sources(conn: Connection, agent_id: str, *, include_removed: bool = False) -> list[Source]:
    return SOURCES.all(
        conn,
        "agent_id = :a AND (:all = 1 OR removed_at IS NULL) ORDER BY created_at, id",
        {"a": agent_id, "all": int(include_removed)},
    )


def set_source_status(
    conn: Connection, agent_id: str, source_id: str, status: str, error: str | None = None
) -> None:
    now = utc_now()
    conn.execute(
        "UPDATE sources SET status = :s, last_error = :e, updated_at = :now, "
        "removed_at = CASE WHEN :s = 'removed' THEN :now ELSE NULL END "
        "WHERE agent_id = :a AND id = :id",
        {"s": status, "e": error, "now": now, "a": agent_id, "id": source_id},
    )


# -- runs ----------------------------------------------------------------------------------


def _run(row: Any) -> ImportRun:
    return ImportRun(
        id=row["id"],
        source_id=row["source_id"],
        agent_id=row["agent_id"],
        status=row["status"],
        triggered_by=row["triggered_by"],
        counts=ImportCounts(*(int(row[name]) for name in COUNT_FIELDS)),
        error=row["error"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
    )


RUNS = TableRows("source_import_runs", RUN_COLUMNS, _run)


def insert_run(conn: Connection, agent_id: str, source_id: str, triggered_by: str) -> str:
    """A running run; the partial unique index refuses a second one (`errors.INTEGRITY_ERRORS`)."""
    run_id = new_run_id()
    conn.execute(
        "INSERT INTO source_import_runs (id, source_id, agent_id, triggered_by, started_at) "
        "VALUES (:id, :src, :a, :by, :now)",
        {"id": run_id, "src": source_id, "a": agent_id, "by": triggered_by, "now": utc_now()},
    )
    return run_id


def get_run(conn: Connection, agent_id: str, run_id: str) -> ImportRun | None:
    return RUNS.one(conn, "agent_id = :a AND id = :id", {"a": agent_id, "id": run_id})


def running_run(conn: Connection, agent_id: str, source_id: str) -> ImportRun | None:
    return RUNS.one(
        conn,
        "agent_id = :a AND source_id = :src AND status = 'running'",
        {"a": agent_id, "src": source_id},
    )


def list_runs(conn: Connection, agent_id: str, source_id: str, limit: int = 20) -> list[ImportRun]:
    return RUNS.all(
        conn,
        f"agent_id = :a AND source_id = :src ORDER BY started_at DESC, {insertion_tie(conn)} "
        "DESC LIMIT :n",
        {"a": agent_id, "src": source_id, "n": limit},
    )


def add_run_counts(conn: Connection, run_id: str, counts: ImportCounts) -> None:
    """Add increments to a run's counters (in the transaction that did the counted work)."""
    sets = ", ".join(f"{name} = {name} + :{name}" for name in COUNT_FIELDS)
    params: dict[str, Any] = {name: getattr(counts, name) for name in COUNT_FIELDS}
    params["id"] = run_id
    conn.execute(f"UPDATE source_import_runs SET {sets} WHERE id = :id", params)


def finish_run(conn: Connection, run_id: str, status: str, error: str | None = None) -> None:
    conn.execute(
        "UPDATE source_import_runs SET status = :s, error = :e, finished_at = :now "
        "WHERE id = :id AND status = 'running'",
        {"s": status, "e": error, "now": utc_now(), "id": run_id},
    )


def interrupt_runs(conn: Connection, agent_id: str, source_id: str) -> int:
    """Runs a killed process left `running` become `interrupted` (the caller knows none of
    this process's threads runs one)."""
    return rows_changed(
        conn,
        "UPDATE source_import_runs SET status = 'interrupted', finished_at = :now, "
        "error = 'the process stopped during the run' "
        "WHERE agent_id = :a AND source_id = :src AND status = 'running'",
        {"now": utc_now(), "a": agent_id, "src": source_id},
    )


def running_runs(conn: Connection) -> list[tuple[str, str]]:
    """(agent id, source id) of every run marked running, any agent (start-up recovery)."""
    rows = conn.execute(
        "SELECT agent_id, source_id FROM source_import_runs WHERE status = 'running'"
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


# -- files ---------------------------------------------------------------------------------


FILES = TableRows("source_import_files", FILE_COLUMNS, lambda row: from_row(ImportFile, row))


def get_file(conn: Connection, source_id: str, relative_path: str) -> ImportFile | None:
    return FILES.one(
        conn, "source_id = :src AND relative_path = :rel", {"src": source_id, "rel": relative_path}
    )


def upsert_file(
    conn: Connection,
    *,
    agent_id: str,
    source_id: str,
    relative_path: str,
    run_id: str,
    status: str,
    size_bytes: int | None = None,
    mtime: str | None = None,
    staged_path: str | None = None,
    content_hash: str | None = None,
    byte_offset: int | None = None,
    error: str | None = None,
) -> ImportFile:
    """Create or update a file's row; None leaves a column as it was (except last_error)."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO source_import_files (id, source_id, agent_id, relative_path, staged_path,
            byte_offset, content_hash, size_bytes, mtime, status, last_error, last_run_id,
            created_at, updated_at)
        VALUES (:id, :src, :a, :rel, :staged, COALESCE(:off, 0), :hash, :size, :mtime, :status,
            :err, :run, :now, :now)
        ON CONFLICT (source_id, relative_path) DO UPDATE SET
            staged_path = COALESCE(excluded.staged_path, source_import_files.staged_path),
            byte_offset = COALESCE(:off, source_import_files.byte_offset),
            content_hash = COALESCE(excluded.content_hash, source_import_files.content_hash),
            size_bytes = COALESCE(excluded.size_bytes, source_import_files.size_bytes),
            mtime = COALESCE(excluded.mtime, source_import_files.mtime),
            status = excluded.status,
            last_error = excluded.last_error,
            last_run_id = excluded.last_run_id,
            updated_at = excluded.updated_at
        """,
        {
            "id": f"sif_{uuid.uuid4().hex}",
            "src": source_id,
            "a": agent_id,
            "rel": relative_path,
            "staged": staged_path,
            "off": byte_offset,
            "hash": content_hash,
            "size": size_bytes,
            "mtime": mtime,
            "status": status,
            "err": error,
            "run": run_id,
            "now": now,
        },
    )
    found = get_file(conn, source_id, relative_path)
    assert found is not None
    return found


def file_path(conn: Connection, file_id: str) -> str | None:
    """The relative path of a file row (None: no such row)."""
    row = conn.execute(
        "SELECT relative_path FROM source_import_files WHERE id = :id", {"id": file_id}
    ).fetchone()
    return None if row is None else str(row[0])


def staged_paths(conn: Connection, agent_id: str, source_id: str) -> list[str]:
    return texts(
        conn,
        "SELECT staged_path FROM source_import_files "
        "WHERE agent_id = :a AND source_id = :src AND staged_path IS NOT NULL",
        {"a": agent_id, "src": source_id},
    )


# -- records -------------------------------------------------------------------------------


RECORDS = TableRows(
    "source_import_records", RECORD_COLUMNS, lambda row: from_row(ImportRecord, row)
)


def get_record(
    conn: Connection, agent_id: str, source_id: str, source_record_id: str
) -> ImportRecord | None:
    return RECORDS.one(
        conn,
        "agent_id = :a AND source_id = :src AND source_record_id = :rec",
        {"a": agent_id, "src": source_id, "rec": source_record_id},
    )


def begin_record(
    conn: Connection,
    *,
    agent_id: str,
    source_id: str,
    source_record_id: str,
    file_id: str,
    run_id: str,
    session_key: str,
    content_hash: str,
    canonical_path: str,
    canonical_offset: int,
) -> ImportRecord:
    """Mark a record pending before its turns are appended, with the canonical file's size
    then: a replay looks for its lines from there and appends none twice. An attempt that
    is already pending keeps its offset (its lines, if any, lie after it)."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO source_import_records (id, source_id, agent_id, source_record_id, file_id,
            session_key, content_hash, outcome, attempts, canonical_path, canonical_offset,
            last_run_id, created_at, updated_at)
        VALUES (:id, :src, :a, :rec, :file, :key, :hash, 'pending', 1, :path, :off, :run,
            :now, :now)
        ON CONFLICT (agent_id, source_id, source_record_id) DO UPDATE SET
            file_id = excluded.file_id,
            session_key = excluded.session_key,
            canonical_offset = CASE WHEN source_import_records.outcome = 'pending'
                AND source_import_records.canonical_offset IS NOT NULL
                THEN source_import_records.canonical_offset ELSE excluded.canonical_offset END,
            canonical_path = excluded.canonical_path,
            content_hash = excluded.content_hash,
            outcome = 'pending',
            attempts = source_import_records.attempts + 1,
            last_run_id = excluded.last_run_id,
            last_error = NULL,
            updated_at = excluded.updated_at
        """,
        {
            "id": f"sir_{uuid.uuid4().hex}",
            "src": source_id,
            "a": agent_id,
            "rec": source_record_id,
            "file": file_id,
            "key": session_key,
            "hash": content_hash,
            "path": canonical_path,
            "off": canonical_offset,
            "run": run_id,
            "now": now,
        },
    )
    found = get_record(conn, agent_id, source_id, source_record_id)
    assert found is not None
    return found


def settle_record(
    conn: Connection,
    *,
    agent_id: str,
    source_id: str,
    source_record_id: str,
    run_id: str,
    outcome: str,
    file_id: str | None = None,
    session_key: str | None = None,
    content_hash: str | None = None,
    turn_count: int | None = None,
    error: str | None = None,
) -> None:
    """Record an outcome (imported, duplicate, skipped, failed), creating the row if new."""
    now = utc_now()
    conn.execute(
        """
        INSERT INTO source_import_records (id, source_id, agent_id, source_record_id, file_id,
            session_key, content_hash, outcome, attempts, turn_count, last_run_id, last_error,
            created_at, updated_at, imported_at)
        VALUES (:id, :src, :a, :rec, :file, :key, :hash, :outcome, 1, COALESCE(:turns, 0), :run,
            :err, :now, :now, CASE WHEN :outcome = 'imported' THEN :now END)
        ON CONFLICT (agent_id, source_id, source_record_id) DO UPDATE SET
            file_id = COALESCE(excluded.file_id, source_import_records.file_id),
            session_key = COALESCE(excluded.session_key, source_import_records.session_key),
            content_hash = COALESCE(excluded.content_hash, source_import_records.content_hash),
            outcome = excluded.outcome,
            turn_count = COALESCE(:turns, source_import_records.turn_count),
            appended_at = CASE WHEN excluded.outcome = 'imported'
                THEN COALESCE(source_import_records.appended_at, :now)
                ELSE source_import_records.appended_at END,
            imported_at = CASE WHEN excluded.outcome = 'imported' THEN :now
                ELSE source_import_records.imported_at END,
            last_run_id = excluded.last_run_id,
            last_error = excluded.last_error,
            updated_at = excluded.updated_at
        """,
        {
            "id": f"sir_{uuid.uuid4().hex}",
            "src": source_id,
            "a": agent_id,
            "rec": source_record_id,
            "file": file_id,
            "key": session_key,
            "hash": content_hash,
            "outcome": outcome,
            "turns": turn_count,
            "run": run_id,
            "err": error,
            "now": now,
        },
    )


def move_record(
    conn: Connection, agent_id: str, source_id: str, source_record_id: str, file_id: str
) -> None:
    """A record's session now lives in another file (the harness renamed or moved it)."""
    conn.execute(
        "UPDATE source_import_records SET file_id = :file, updated_at = :now "
        "WHERE agent_id = :a AND source_id = :src AND source_record_id = :rec",
        {
            "file": file_id,
            "now": utc_now(),
            "a": agent_id,
            "src": source_id,
            "rec": source_record_id,
        },
    )


def source_totals(conn: Connection, agent_id: str, source_id: str) -> SourceTotals:
    rows = conn.execute(
        "SELECT outcome, COUNT(*) AS n, SUM(CASE WHEN outcome = 'imported' THEN turn_count "
        "ELSE 0 END) AS turns FROM source_import_records "
        "WHERE agent_id = :a AND source_id = :src GROUP BY outcome",
        {"a": agent_id, "src": source_id},
    ).fetchall()
    files = conn.execute(
        "SELECT COUNT(*) FROM source_import_files WHERE agent_id = :a AND source_id = :src",
        {"a": agent_id, "src": source_id},
    ).fetchone()[0]
    return SourceTotals(
        records={str(r["outcome"]): int(r["n"]) for r in rows},
        turns=sum(int(r["turns"] or 0) for r in rows),
        files=int(files),
    )


def imported_session_keys(conn: Connection, agent_id: str, source_id: str) -> list[str]:
    """Session keys this source imported (its own sessions, not duplicates of others)."""
    return texts(
        conn,
        "SELECT session_key FROM source_import_records WHERE agent_id = :a AND source_id = :src "
        "AND session_key IS NOT NULL AND outcome IN ('imported', 'pending')",
        {"a": agent_id, "src": source_id},
    )


# -- removal -------------------------------------------------------------------------------


def count_source_rows(conn: Connection, agent_id: str, source_id: str) -> dict[str, int]:
    """How many bookkeeping rows a purge of this source deletes, per table."""
    counts = {}
    for table in ("source_import_runs", "source_import_files", "source_import_records"):
        counts[table] = int(
            conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE agent_id = :a AND source_id = :src",
                {"a": agent_id, "src": source_id},
            ).fetchone()[0]
        )
    return counts


def delete_source_rows(conn: Connection, agent_id: str, source_id: str) -> dict[str, int]:
    """Delete the source's records, files and runs (the source row stays, marked removed)."""
    params = {"a": agent_id, "src": source_id}
    return {
        "source_import_records": int(
            conn.execute(
                "DELETE FROM source_import_records WHERE agent_id = :a AND source_id = :src",
                params,
            ).rowcount
        ),
        "source_import_files": int(
            conn.execute(
                "DELETE FROM source_import_files WHERE agent_id = :a AND source_id = :src", params
            ).rowcount
        ),
        "source_import_runs": int(
            conn.execute(
                "DELETE FROM source_import_runs WHERE agent_id = :a AND source_id = :src", params
            ).rowcount
        ),
    }


def bounded_purged_json(purged: Mapping[str, int]) -> str:
    """The counts as JSON within the tombstone's 4 KB (keys dropped from the end if needed)."""
    items = {str(k)[:64]: int(v) for k, v in purged.items()}
    text = json.dumps(items, sort_keys=True, separators=(",", ":"))
    if len(text) <= MAX_PURGED_JSON:
        return text
    kept: dict[str, int] = {"truncated": 1}
    for key in sorted(items):  # at most 4 KB of counts, in name order
        kept[key] = items[key]
        if len(json.dumps(kept, separators=(",", ":"))) > MAX_PURGED_JSON:
            del kept[key]
            break
    return json.dumps(kept, sort_keys=True, separators=(",", ":"))


def insert_tombstone(
    conn: Connection,
    source: Source,
    *,
    purged: Mapping[str, int],
    reason: str | None,
    removed_by: str,
) -> str:
    tombstone_id = f"stb_{uuid.uuid4().hex}"
    conn.execute(
        "INSERT INTO source_tombstones (id, agent_id, source_id, kind, name, root_path, reason, "
        "removed_by, purged_json, removed_at) VALUES (:id, :a, :src, :kind, :name, :root, "
        ":reason, :by, :purged, :now)",
        {
            "id": tombstone_id,
            "a": source.agent_id,
            "src": source.id,
            "kind": source.kind,
            "name": source.name[:200],
            "root": source.root_path,
            "reason": None if reason is None else reason[:500],
            "by": removed_by[:100],
            "purged": bounded_purged_json(purged),
            "now": utc_now(),
        },
    )
    return tombstone_id


def tombstones_at(
    conn: Connection, agent_id: str, kind: str, root_path: str
) -> list[SourceTombstone]:
    """Removals of a source of this kind at this root, newest first."""
    rows = conn.execute(
        "SELECT id, agent_id, source_id, kind, name, root_path, reason, removed_by, purged_json, "
        "removed_at FROM source_tombstones WHERE agent_id = :a AND kind = :kind "
        "AND root_path = :root ORDER BY removed_at DESC",
        {"a": agent_id, "kind": kind, "root": root_path},
    ).fetchall()
    return [from_row(SourceTombstone, r, purged=json.loads(r["purged_json"])) for r in rows]
