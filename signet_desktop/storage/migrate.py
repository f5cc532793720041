"""Forward-only SQL migrations: found in package data, each applied in its own transaction."""

from __future__ import annotations

import hashlib
import re
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import sqlean

from signet_desktop.storage.connect import Connection, rollback_if_open

MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schema_migrations_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    duration_ms REAL NOT NULL
);
"""


# Both backends' runners record an applied migration with these (storage/postgres/migrate.py).
RECORD_MIGRATION = (
    "INSERT INTO schema_migrations (version, name, checksum, applied_at) "
    "VALUES (:version, :name, :checksum, :applied_at)"
)
AUDIT_MIGRATION = (
    "INSERT INTO schema_migrations_audit "
    "(version, name, checksum, applied_at, duration_ms) "
    "VALUES (:version, :name, :checksum, :applied_at, :duration_ms)"
)


class MigrationError(RuntimeError):
    """The schema cannot be brought up to date safely; startup must stop."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file."""

    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def migrations_dir() -> Path:
    """Where the SQL files live: frozen bundle, installed wheel, or the source tree."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    candidates = []
    if frozen_root:
        candidates.append(Path(frozen_root) / "migrations")
    candidates.append(Path(str(resources.files("signet_desktop"))) / "_migrations")
    candidates.append(Path(__file__).resolve().parents[2] / "migrations")
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.sql")):
            return candidate
    raise MigrationError(f"no migrations found (looked in {', '.join(map(str, candidates))})")


def load_migrations(directory: Path | None = None) -> list[Migration]:
    """Read every NNNN_name.sql file, in version order, refusing gaps and duplicates."""
    directory = directory or migrations_dir()
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name} is not named NNNN_snake_name.sql")
        found.append(Migration(int(match[1]), match[2], path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise MigrationError(f"migration versions must be contiguous from 1, found {versions}")
    return found


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (trigger bodies stay whole)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlean.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not _only_comments(buffer):
        raise MigrationError(f"incomplete SQL statement at end of migration: {buffer[:80]!r}")
    return statements


def _only_comments(text: str) -> bool:
    return all(not ln.strip() or ln.strip().startswith("--") for ln in text.splitlines())


def check_foreign_schema(conn: Connection) -> None:
    """Refuse a database whose tables were not created by this runner; change nothing."""
    tables = {
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    if not tables:
        return
    # Only the first bookkeeping table: a first start stopped between the two (before they
    # were created in one transaction). Anything else without both is someone else's.
    ours = "schema_migrations" in tables and (
        "schema_migrations_audit" in tables or tables == {"schema_migrations"}
    )
    columns = (
        {str(r[1]) for r in conn.execute("PRAGMA table_info(schema_migrations)")} if ours else set()
    )
    if not ours or "name" not in columns:
        raise MigrationError(
            "this database was not created by Signet Desktop (it may belong to Signet, the "
            "TypeScript daemon, or another program); refusing to modify it. Point --workspace "
            "at a separate directory."
        )


def applied_checksums(conn: Connection) -> dict[int, str]:
    """Versions already applied, with the checksum recorded for each."""
    rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def applied_count(conn: Connection) -> int:
    """How many migrations this database has applied."""
    return int(conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0])


def check_schema(conn: Connection, migrations: list[Migration] | None = None) -> None:
    """Every refusal `apply_migrations` makes, as reads only (safe on a read-only connection).

    A foreign schema, a changed checksum of an applied migration, or a migration this
    version does not know (a newer database) raises MigrationError.
    """
    migrations = load_migrations() if migrations is None else migrations
    check_foreign_schema(conn)
    if not _has_bookkeeping(conn):
        return
    check_applied(applied_checksums(conn), migrations)


def check_applied(applied: dict[int, str], migrations: list[Migration]) -> None:
    """Refuse a changed checksum of an applied migration, or one this version does not know
    (`applied`: version -> recorded checksum). Shared by both backends' runners."""
    for migration in migrations:
        recorded = applied.get(migration.version)
        if recorded is not None and recorded != migration.checksum:
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name} was changed after it was "
                "applied (checksum mismatch). Migrations are forward-only: restore the original "
                "file and add a new numbered migration instead."
            )
    known = {m.version for m in migrations}
    newer = sorted(v for v in applied if v not in known)
    if newer:
        raise MigrationError(
            f"the database has migrations {newer} that this version does not know; "
            "it was written by a newer Signet Desktop"
        )


def _has_bookkeeping(conn: Connection) -> bool:
    row = conn.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    return int(row[0]) > 0


def apply_migrations(conn: Connection, migrations: list[Migration] | None = None) -> list[int]:
    """Bring the schema up to date; returns the versions applied now.

    The checks run again here (the caller ran them read-only first) so this stays safe on
    its own; they write nothing, and the bookkeeping tables are created only after them.
    """
    migrations = load_migrations() if migrations is None else migrations
    check_schema(conn, migrations)
    conn.execute("BEGIN IMMEDIATE")  # both tables or neither: a stop in between is not foreign
    try:
        for statement in split_statements(BOOKKEEPING):
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        rollback_if_open(conn)
        raise
    applied = applied_checksums(conn)
    done: list[int] = []
    for migration in migrations:
        if migration.version not in applied:
            _apply_one(conn, migration)
            done.append(migration.version)
    return done


def _apply_one(conn: Connection, migration: Migration) -> None:
    started = time.perf_counter()
    now = datetime.now(UTC).isoformat()
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in split_statements(migration.sql):
            conn.execute(statement)
        duration_ms = (time.perf_counter() - started) * 1000
        params = {
            "version": migration.version,
            "name": migration.name,
            "checksum": migration.checksum,
            "applied_at": now,
        }
        conn.execute(RECORD_MIGRATION, params)
        conn.execute(AUDIT_MIGRATION, {**params, "duration_ms": duration_ms})
        conn.execute("COMMIT")
    except Exception as exc:
        rollback_if_open(conn)
        raise MigrationError(
            f"migration {migration.version:04d}_{migration.name} failed: {exc}"
        ) from exc
