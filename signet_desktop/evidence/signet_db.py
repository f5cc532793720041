"""A Signet `memories.db`, read strictly read-only: its schema by columns present, its rows as
plain values, and a report of what cannot be carried over.

Opening never writes in the user's workspace. A file with no `-wal`/`-journal` beside it is
opened `immutable` (SQLite would otherwise create `-wal`/`-shm` and leave them); a WAL file
whose `-shm` exists (Signet is running, or stopped without a checkpoint) is opened
`mode=ro`, which creates nothing and sees the committed WAL pages; a `-wal` without `-shm`, or
a hot `-journal`, would make SQLite create or recover files, so the three files are copied to
a private temporary directory and the copy is opened (and deleted on close). A Signet daemon
that starts mid-import writes to a new `-wal` first, invisible to an `immutable` reader; only
a checkpoint writes the main file, and `check_unchanged()` (called between reading a batch and
using it) notices that. Every read runs in one read transaction, so the import sees one
snapshot.

The schema is detected from `PRAGMA table_info`, never from Signet's migration number:
columns the reader knows are mapped by `evidence/signet_rows.py` (absent ones get Signet's
defaults), columns it does not know are carried as `extra` values and named in the report,
tables it does not import are listed with their row counts, and rows that cannot be mapped
(no id, empty content...) come back as `Unmapped` with a reason. Nothing is dropped silently.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from signet_desktop.evidence.signet_rows import (
    KNOWN,
    REQUIRED,
    SignetHistoryEvent,
    SignetMemory,
    SignetTranscript,
    Unmapped,
    map_history,
    map_memory,
    map_transcript,
)
from signet_desktop.storage.connect import (
    Connection,
    DatabaseFileError,
    check_database_file,
    connect,
    connect_read_only,
)

DB_RELATIVE = Path("memory") / "memories.db"
BATCH = 500

# Tables that are Signet's bookkeeping or derived indexes, not evidence to report as left
# behind (vectors and FTS are rebuilt here).
INTERNAL_TABLES = frozenset(
    {"schema_migrations", "schema_migrations_audit", "embeddings", "vec_embeddings"}
)
T = TypeVar("T")


class SignetSchemaError(DatabaseFileError):
    """The file is SQLite but not a Signet memories database (no usable memories table)."""


class SignetDatabaseChanged(RuntimeError):
    """The file read `immutable` was written while it was being read (Signet checkpointed)."""


@dataclass(frozen=True, slots=True)
class SchemaReport:
    """What the Signet database holds, and what of it the reader maps."""

    path: str
    migration_version: int | None
    columns: Mapping[str, tuple[str, ...]]  # the three mapped tables that exist
    missing_columns: Mapping[str, tuple[str, ...]]  # known columns an older schema lacks
    unknown_columns: Mapping[str, tuple[str, ...]]  # columns carried as `extra`
    other_tables: Mapping[str, int | None]  # tables not imported, with row counts

    def has(self, table: str) -> bool:
        return table in self.columns

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "migrationVersion": self.migration_version,
            "missingColumns": {k: list(v) for k, v in self.missing_columns.items() if v},
            "unknownColumns": {k: list(v) for k, v in self.unknown_columns.items() if v},
            "tablesNotImported": dict(self.other_tables),
        }


@dataclass(frozen=True, slots=True)
class Batch(Generic[T]):
    """A page of mapped rows, the rows that could not be mapped, and where it ended."""

    rows: list[T]
    unmapped: list[Unmapped]
    last_rowid: int


def locate(path: Path) -> Path:
    """The memories.db of a workspace directory, or the file itself."""
    candidate = path / DB_RELATIVE if path.is_dir() else path
    if not candidate.is_file():
        raise DatabaseFileError(f"no Signet database at {candidate}")
    return candidate


class SignetDatabase:
    """An open, read-only Signet database (use as a context manager)."""

    def __init__(self, path: Path) -> None:
        self.path = locate(path).resolve()
        check_database_file(self.path)
        self._copy_dir: Path | None = None
        self._stamp: tuple[int, int] | None = None  # (size, mtime) when read immutable
        self._conn = self._open()
        try:
            self._conn.execute("BEGIN")  # one snapshot for every read that follows
            self.schema = read_schema(self._conn, str(self.path))
        except BaseException:
            self.close()
            raise
        if not self.schema.has("memories"):
            self.close()
            raise SignetSchemaError(f"{self.path} has no Signet memories table (id, content)")

    def _open(self) -> Connection:
        wal = self.path.with_name(self.path.name + "-wal")
        shm = self.path.with_name(self.path.name + "-shm")
        journal = self.path.with_name(self.path.name + "-journal")
        if not journal.exists() and (not wal.exists() or shm.exists()):
            if not wal.exists():  # connect_read_only opens it immutable
                stat = self.path.stat()
                self._stamp = (stat.st_size, stat.st_mtime_ns)
            return connect_read_only(self.path)
        # Opening would create a -shm or roll a hot journal back: read a private copy.
        self._copy_dir = Path(tempfile.mkdtemp(prefix="signet-import-"))
        copy = self._copy_dir / self.path.name
        for source in (self.path, wal, journal):
            if source.exists():
                shutil.copyfile(
                    source, self._copy_dir / (copy.name + source.name[len(copy.name) :])
                )
        conn, _ = connect(copy, with_vec=False)
        conn.execute("PRAGMA query_only = ON")
        return conn

    def __enter__(self) -> SignetDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
            self._conn = None  # type: ignore[assignment]
        if self._copy_dir is not None:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            self._copy_dir = None

    def check_unchanged(self) -> None:
        """Raise if a file read `immutable` was written since it was opened.

        Nothing tells an immutable reader about writes, so the importer calls this after
        reading each batch and before writing it: rows read while the file changed are never
        used. A Signet that starts meanwhile writes to its `-wal` first (invisible here,
        harmless); only a checkpoint into the main file trips this.
        """
        if self._stamp is None:
            return
        stat = self.path.stat()
        if (stat.st_size, stat.st_mtime_ns) != self._stamp:
            raise SignetDatabaseChanged(
                f"{self.path} was written during the import (is Signet running?); "
                "run the import again: what was imported is kept and the rest resumes"
            )

    def count(self, table: str) -> int:
        """Rows in one of the mapped tables (0 when the schema lacks it)."""
        if not self.schema.has(table):
            return 0
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {_table(table)}").fetchone()[0])

    def memories(self, *, after_rowid: int = 0, size: int = BATCH) -> Iterator[Batch[SignetMemory]]:
        """Memories in rowid order, a batch at a time."""
        yield from self._batches("memories", after_rowid, size, map_memory)

    def transcripts(self, *, size: int = 100) -> Iterator[Batch[SignetTranscript]]:
        """Transcripts in rowid order, a batch at a time (none when the schema lacks them)."""
        if not self.schema.has("session_transcripts"):
            return
        yield from self._batches("session_transcripts", 0, size, map_transcript)

    def history_for(self, memory_ids: Sequence[str]) -> dict[str, list[SignetHistoryEvent]]:
        """Each memory's history, oldest first (empty when the schema has no history)."""
        found: dict[str, list[SignetHistoryEvent]] = {}
        if not memory_ids or not self.schema.has("memory_history"):
            return found
        order = (
            "created_at, rowid"
            if "created_at" in self.schema.columns["memory_history"]
            else "rowid"
        )
        rows = self._conn.execute(
            f"SELECT * FROM memory_history WHERE memory_id IN "
            f"(SELECT value FROM json_each(:ids)) ORDER BY {order}",
            {"ids": json.dumps(list(memory_ids))},
        ).fetchall()
        for row in rows:
            event = map_history(dict(zip(row.keys(), tuple(row), strict=True)))
            found.setdefault(event.memory_id, []).append(event)
        return found

    def orphan_history(self) -> list[Unmapped]:
        """History rows whose memory is not in the memories table (reported, not imported)."""
        if not self.schema.has("memory_history"):
            return []
        rows = self._conn.execute(
            "SELECT h.rowid AS r, h.memory_id AS memory_id FROM memory_history h "
            "WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = h.memory_id) "
            "ORDER BY h.rowid"
        ).fetchall()
        return [
            Unmapped("memory_history", f"{r['memory_id']}#{r['r']}", "memory_not_in_source")
            for r in rows
        ]

    def _batches(
        self,
        table: str,
        after_rowid: int,
        size: int,
        mapper: Callable[[Mapping[str, Any]], T | Unmapped],
    ) -> Iterator[Batch[T]]:
        """A table's pages with each row mapped, or set aside (named by rowid) as Unmapped."""
        for rows, last in self._pages(table, after_rowid, size):
            mapped: list[T] = []
            unmapped: list[Unmapped] = []
            for rowid, row in rows:
                result = mapper(row)
                if isinstance(result, Unmapped):
                    unmapped.append(_with_rowid(result, rowid))
                else:
                    mapped.append(result)
            yield Batch(mapped, unmapped, last)

    def _pages(
        self, table: str, after_rowid: int, size: int
    ) -> Iterator[tuple[list[tuple[int, dict[str, Any]]], int]]:
        last = after_rowid
        while True:
            rows = self._conn.execute(
                f"SELECT rowid AS _rowid_, * FROM {_table(table)} WHERE rowid > :after "
                "ORDER BY rowid LIMIT :size",
                {"after": last, "size": size},
            ).fetchall()
            if not rows:
                return
            values = [dict(zip(r.keys(), tuple(r), strict=True)) for r in rows]
            page = [(int(value.pop("_rowid_")), value) for value in values]
            last = page[-1][0]
            yield page, last


def _with_rowid(item: Unmapped, rowid: int) -> Unmapped:
    """A row without its key is named by its rowid, so each gets its own record."""
    if item.record_id.startswith("<"):
        return Unmapped(item.table, f"<rowid {rowid}>", item.reason)
    return item


def _table(name: str) -> str:
    if name not in KNOWN:
        raise ValueError(f"not a mapped Signet table: {name}")
    return name


def read_schema(conn: Connection, path: str) -> SchemaReport:
    """The mapped tables' columns (present, missing, unknown) and every other table."""
    tables = [
        (str(r["name"]), str(r["sql"] or ""))
        for r in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
    ]
    virtual = [name for name, sql in tables if sql.upper().startswith("CREATE VIRTUAL")]
    columns: dict[str, tuple[str, ...]] = {}
    others: dict[str, int | None] = {}
    for name, _ in tables:
        if name in KNOWN:
            present = tuple(
                str(r["name"]) for r in conn.execute(f"PRAGMA table_info({name})").fetchall()
            )
            if all(c in present for c in REQUIRED[name]):
                columns[name] = present
                continue
        if name in INTERNAL_TABLES or name in virtual:
            continue
        if any(name.startswith(v + "_") for v in virtual):
            continue  # FTS5 / vec0 shadow tables
        others[name] = _row_count(conn, name)
    return SchemaReport(
        path=path,
        migration_version=_migration_version(conn, {n for n, _ in tables}),
        columns=columns,
        missing_columns={t: tuple(sorted(KNOWN[t] - set(c))) for t, c in columns.items()},
        unknown_columns={
            t: tuple(c for c in cols if c not in KNOWN[t]) for t, cols in columns.items()
        },
        other_tables=others,
    )


def _row_count(conn: Connection, name: str) -> int | None:
    quoted = '"' + name.replace('"', '""') + '"'
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {quoted}").fetchone()[0])
    except Exception:  # a table this SQLite cannot read (a module it lacks): count unknown
        return None


def _migration_version(conn: Connection, tables: set[str]) -> int | None:
    if "schema_migrations" not in tables:
        return None
    try:
        row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    except Exception:  # an unexpected shape of Signet's own bookkeeping: not ours to judge
        return None
    return None if row[0] is None else int(row[0])
