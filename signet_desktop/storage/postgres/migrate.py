"""PostgreSQL migrations: `migrations/postgres/NNNN_name.sql`, numbered in step with SQLite's.

File NNNN here is the PostgreSQL rendering of `migrations/NNNN_name.sql` (same number, same
name, same tables), ported whole; PostgreSQL may lag behind SQLite while files are still to be
ported, never run ahead (`check_in_step`). Each file is applied in its own transaction with its
`schema_migrations` checksum row and `schema_migrations_audit` timing row, as in SQLite. The
refusals are SQLite's too (`storage/migrate.py: check_schema`): a foreign schema, a changed
checksum, a migration this build does not know (a newer database); each is decided by reads
before anything is written, so a refused database is left untouched.

Several daemons may start at once on one database: the whole run holds a session advisory lock
(`MIGRATION_LOCK`), so exactly one applies the missing files and the others, once it is
released, find nothing left to do.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from signet_desktop.storage.migrate import (
    AUDIT_MIGRATION,
    RECORD_MIGRATION,
    Migration,
    MigrationError,
    check_applied,
    load_migrations,
    migrations_dir,
)
from signet_desktop.storage.postgres.connect import PgConnection

# pg_advisory_lock's key: a fixed number that stands for Signet Desktop's migrations (no other
# lock may use it).
MIGRATION_LOCK = 0x2D5B_91C4_0E6F_7A13

BOOKKEEPING = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schema_migrations_audit (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL
)
"""

USER_TABLES = """
SELECT table_name FROM information_schema.tables
WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
"""


def postgres_migrations_dir() -> Path:
    """`postgres/` beside the SQLite migrations (source tree, wheel or frozen bundle)."""
    return migrations_dir() / "postgres"


def load_postgres_migrations(directory: Path | None = None) -> list[Migration]:
    """The PostgreSQL files, in version order, contiguous from 1."""
    return load_migrations(directory or postgres_migrations_dir())


def check_in_step(postgres: list[Migration], sqlite: list[Migration]) -> None:
    """Each PostgreSQL file must have a SQLite twin of the same number and name."""
    names = {m.version: m.name for m in sqlite}
    for migration in postgres:
        if names.get(migration.version) != migration.name:
            raise MigrationError(
                f"postgres migration {migration.version:04d}_{migration.name} has no SQLite "
                "twin of the same number and name; the two are numbered in step"
            )


def check_schema(conn: PgConnection, migrations: list[Migration]) -> None:
    """Every refusal, as reads only: a foreign schema, a changed checksum, a newer database."""
    tables = {str(r[0]) for r in conn.execute(USER_TABLES).fetchall()}
    if not tables:
        return
    if not {"schema_migrations", "schema_migrations_audit"} <= tables:
        raise MigrationError(
            "this PostgreSQL schema was not created by Signet Desktop (its tables have no "
            "schema_migrations record); refusing to modify it. Point storage.url at an empty "
            "database or schema."
        )
    rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
    check_applied({int(r[0]): str(r[1]) for r in rows}, migrations)


def apply_postgres_migrations(
    conn: PgConnection, migrations: list[Migration] | None = None
) -> list[int]:
    """Bring the schema up to date under the migration lock; returns the versions applied now."""
    migrations = load_postgres_migrations() if migrations is None else migrations
    conn.execute("SELECT pg_advisory_lock(:key)", {"key": MIGRATION_LOCK})
    try:
        check_schema(conn, migrations)
        conn.execute(BOOKKEEPING)
        applied = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
        done: list[int] = []
        for migration in migrations:
            if migration.version not in applied:
                _apply_one(conn, migration)
                done.append(migration.version)
        return done
    finally:
        conn.execute("SELECT pg_advisory_unlock(:key)", {"key": MIGRATION_LOCK})


def _apply_one(conn: PgConnection, migration: Migration) -> None:
    started = time.perf_counter()
    params = {
        "version": migration.version,
        "name": migration.name,
        "checksum": migration.checksum,
        "applied_at": datetime.now(UTC).isoformat(),
    }
    conn.execute("BEGIN")
    try:
        conn.execute(migration.sql)
        conn.execute(RECORD_MIGRATION, params)
        duration_ms = (time.perf_counter() - started) * 1000
        conn.execute(AUDIT_MIGRATION, {**params, "duration_ms": duration_ms})
        conn.execute("COMMIT")
    except Exception as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise MigrationError(
            f"postgres migration {migration.version:04d}_{migration.name} failed: {exc}"
        ) from exc
