"""`signet storage migrate`: a workspace's database copied into PostgreSQL, or back to SQLite.

One side is the workspace's SQLite file, the other a PostgreSQL database. The source is opened
read-only (SQLite `mode=ro` + `query_only`; a PostgreSQL session with
`default_transaction_read_only`) and must be at the current schema; the target is opened
through its ordinary handle (`PgDatabase` or `open_database`), so it has every migration. A
target holding data is refused unless it is this source's own unfinished copy, which is
resumed (`storage/transfer/progress.py`); the refusals are decided by reads before anything
is written. The rows move in batches (`storage/transfer/copy.py`), then what is derived from
`embeddings` is made for each generation: the HNSW index on PostgreSQL (`create_vec_table`),
the vec0 mirror and binary codes on SQLite (`VectorIndex.resync`, full). Last, every table's
count and content hash are compared (`storage/transfer/verify.py`) and the counters
recounted; the progress record is dropped only when all of it agrees.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from signet_desktop.config.storage import POSTGRES_SCHEMES, check_postgres_url
from signet_desktop.embedding.generations import create_vec_table, list_generations
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.storage import counters
from signet_desktop.storage.connect import (
    Connection,
    DatabaseFileError,
    check_database_file,
    connect_read_only,
)
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.errors import DATABASE_ERRORS
from signet_desktop.storage.migrate import MigrationError, applied_count, load_migrations
from signet_desktop.storage.migrate import check_schema as check_sqlite_schema
from signet_desktop.storage.store import DatabaseHandle
from signet_desktop.storage.transfer import progress
from signet_desktop.storage.transfer.copy import DEFAULT_BATCH, BatchHook, Report, copy_tables
from signet_desktop.storage.transfer.plan import TablePlan, TransferError, build_plan
from signet_desktop.storage.transfer.verify import TableCheck, compare

SQLITE_PREFIX = "sqlite:"
Note = Callable[[str], None]


class MoveRefused(Exception):
    """The copy was refused or stopped; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Location:
    """One end of a copy: a SQLite file or a PostgreSQL database."""

    backend: Literal["sqlite", "postgresql"]
    path: Path | None = None
    url: str | None = None

    @classmethod
    def sqlite(cls, path: Path) -> Location:
        return cls("sqlite", path=Path(path).absolute())

    def describe(self) -> str:
        """How the record names this end (a path, or the URL, which holds no password)."""
        return f"{SQLITE_PREFIX}{self.path}" if self.backend == "sqlite" else str(self.url)


def parse_location(text: str) -> Location:
    """`sqlite:PATH` or `postgresql://host[:port]/database`; ValueError otherwise."""
    text = text.strip()
    if text.startswith(SQLITE_PREFIX) and not text.startswith("sqlite://"):
        path = text[len(SQLITE_PREFIX) :]
        if not path:
            raise ValueError("sqlite: needs a file path (sqlite:/path/to/memories.db)")
        return Location.sqlite(Path(path).expanduser())
    scheme = text.split("://", 1)[0].lower() if "://" in text else ""
    if scheme not in POSTGRES_SCHEMES:
        raise ValueError(f"not sqlite:PATH or postgresql://host/database: {text!r}")
    check_postgres_url(text)
    return Location("postgresql", url=text)


@dataclass(slots=True)
class MoveReport:
    """What a copy did and found."""

    checks: list[TableCheck] = field(default_factory=list)
    resumed: bool = False
    vectors: list[str] = field(default_factory=list)
    counter_drift: tuple[str, ...] = ()

    @property
    def mismatched(self) -> list[str]:
        return [c.name for c in self.checks if not c.ok]

    @property
    def ok(self) -> bool:
        return not self.mismatched


def migrate_storage(
    source: Location,
    target: Location,
    *,
    batch_size: int = DEFAULT_BATCH,
    report: Report | None = None,
    note: Note | None = None,
    batch_hook: BatchHook | None = None,
) -> MoveReport:
    """Copy `source` into `target`, resuming this copy's record, and verify it."""
    if (source.backend == "postgresql") == (target.backend == "postgresql"):
        raise MoveRefused("one end must be PostgreSQL and the other a SQLite file")
    if source == target:
        raise MoveRefused("the source and the target are the same database")
    try:
        return _migrate(source, target, batch_size, report, note or (lambda _: None), batch_hook)
    except TransferError as exc:
        raise MoveRefused(str(exc)) from exc
    except (MigrationError, DatabaseFileError) as exc:
        raise MoveRefused(str(exc)) from exc
    except DATABASE_ERRORS as exc:
        raise MoveRefused(
            f"database error: {str(exc).strip().splitlines()[0]} "
            "(what was committed stays; run the same command again to resume)"
        ) from exc


def _migrate(
    source: Location,
    target: Location,
    batch_size: int,
    report: Report | None,
    note: Note,
    batch_hook: BatchHook | None,
) -> MoveReport:
    with _open_source(source) as source_conn:
        _check_unstarted_target(source_conn, source, target)
        with _open_target(target) as handle:
            reader = handle.reader()
            plans = _plan(source_conn, reader, source)
            resumed = _claim(handle, plans, source)
            if resumed:
                note(f"resuming the unfinished copy from {source.describe()}")
            copy_tables(
                source_conn,
                handle,
                plans,
                batch_size=batch_size,
                report=report,
                batch_hook=batch_hook,
            )
            moved = MoveReport(resumed=resumed)
            moved.vectors = _derive_vectors(handle, note)
            moved.counter_drift = counters.recount(reader, repair=False).drifted
            moved.checks = compare(source_conn, reader, plans)
            if moved.ok:
                with handle.write() as conn:
                    progress.drop_record(conn)
            return moved


@contextlib.contextmanager
def _open_source(source: Location) -> Iterator[Connection]:
    if source.backend == "sqlite":
        assert source.path is not None
        if not source.path.is_file() or source.path.stat().st_size == 0:
            raise MoveRefused(f"no database at {source.path}")
        check_database_file(source.path)
        conn = connect_read_only(source.path)
        try:
            check_sqlite_schema(conn)
            if applied_count(conn) != len(load_migrations()):
                raise MoveRefused(
                    f"{source.path} is not at the current schema; start the daemon on it once "
                    "(it migrates at start) and stop it, then migrate"
                )
            _refuse_partial_copy(conn, source)
            yield conn
        finally:
            conn.close()
        return
    from signet_desktop.storage.postgres.connect import connect_postgres
    from signet_desktop.storage.postgres.migrate import check_schema, load_postgres_migrations

    assert source.url is not None
    pg = connect_postgres(source.url)
    try:
        pg.execute("SET default_transaction_read_only = on")
        migrations = load_postgres_migrations()
        check_schema(pg, migrations)
        versions = {int(r[0]) for r in pg.execute(_VERSIONS).fetchall()} if _has_record(pg) else ()
        if set(versions) != {m.version for m in migrations}:
            raise MoveRefused(f"{source.url} is not a Signet database at the current schema")
        _refuse_partial_copy(pg, source)
        yield pg
    finally:
        pg.close()


_VERSIONS = "SELECT version FROM schema_migrations"


def _has_record(conn: Connection) -> bool:
    found = conn.execute(
        "SELECT 1 FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_name = 'schema_migrations'"
    ).fetchone()
    return found is not None


def _refuse_partial_copy(conn: Connection, source: Location) -> None:
    if progress.has_record(conn):
        raise MoveRefused(
            f"{source.describe()} holds an unfinished copy of another database; "
            "finish that copy first"
        )


def _check_unstarted_target(source_conn: Connection, source: Location, target: Location) -> None:
    """Refuse a target with data before opening it (opening migrates, which writes)."""
    with _probe(target) as probe:
        if probe is None:
            return
        recorded = progress.recorded_source(probe)
        if recorded == source.describe():
            return
        if recorded is not None:
            raise MoveRefused(f"the target holds an unfinished copy of {recorded}")
        sqlite_side, pg_side = (
            (source_conn, probe)
            if target.backend == "postgresql"
            else (
                probe,
                source_conn,
            )
        )
        try:
            plans = build_plan(sqlite_side, pg_side)
        except TransferError as exc:
            raise MoveRefused(f"the target is not an empty Signet database ({exc})") from exc
        _refuse_data(probe, plans)


def _refuse_data(conn: Connection, plans: list[TablePlan]) -> None:
    table = progress.first_table_with_data(conn, plans)
    if table is not None:
        raise MoveRefused(
            f"the target already holds data (table {table}); migrate into an empty database"
        )


@contextlib.contextmanager
def _probe(target: Location) -> Iterator[Connection | None]:
    """A read-only look at an existing target with Signet's bookkeeping; None when empty."""
    if target.backend == "sqlite":
        assert target.path is not None
        if not target.path.exists() or target.path.stat().st_size == 0:
            yield None
            return
        check_database_file(target.path)
        conn = connect_read_only(target.path)
        try:
            check_sqlite_schema(conn)
            has = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'"
            ).fetchone()
            yield conn if has else None
        finally:
            conn.close()
        return
    from signet_desktop.storage.postgres.connect import connect_postgres

    assert target.url is not None
    pg = connect_postgres(target.url)
    try:
        pg.execute("SET default_transaction_read_only = on")
        yield pg if _has_record(pg) else None
    finally:
        pg.close()


@contextlib.contextmanager
def _open_target(target: Location) -> Iterator[DatabaseHandle]:
    handle: DatabaseHandle
    if target.backend == "sqlite":
        assert target.path is not None
        handle = open_database(target.path)
    else:
        from signet_desktop.storage.postgres.database import PgDatabase

        assert target.url is not None
        handle = PgDatabase(target.url)
    try:
        yield handle
    finally:
        handle.close()


def _plan(source_conn: Connection, reader: Connection, source: Location) -> list[TablePlan]:
    if source.backend == "sqlite":
        return build_plan(source_conn, reader)
    return build_plan(reader, source_conn)


def _claim(handle: DatabaseHandle, plans: list[TablePlan], source: Location) -> bool:
    """Start this copy's record, or find it; True when resuming."""
    with handle.write() as conn:
        recorded = progress.recorded_source(conn)
        if recorded is None:
            _refuse_data(conn, plans)
            progress.begin_record(conn, source.describe(), plans)
            return False
        if recorded != source.describe():
            raise MoveRefused(f"the target holds an unfinished copy of {recorded}")
        return True


def _derive_vectors(handle: DatabaseHandle, note: Note) -> list[str]:
    """Each generation's mirror on the target: HNSW index (PostgreSQL) or vec0 (SQLite)."""
    generations = list_generations(handle.reader())
    done = []
    if not isinstance(handle, Database):
        with handle.write() as conn:
            for generation in generations:
                create_vec_table(conn, generation)
                done.append(f"generation {generation.id}: HNSW index {generation.vec_table}")
        return done
    if not generations:
        return done
    if not handle.vec_available:
        note(
            "sqlite-vec is not loaded here: the vec0 mirrors were not rebuilt; the daemon's "
            "embedding worker rebuilds its generation's at start (`signet repair resync-vec`)"
        )
        return done
    index = VectorIndex(handle)
    for generation in generations:
        resync = index.resync(generation.id, full=True)
        done.append(f"generation {generation.id}: vec0 mirror rebuilt ({resync.added} vectors)")
    return done
