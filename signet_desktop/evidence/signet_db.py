"""A Signet `memories.db`, read strictly read-only: its schema by columns present, its rows as
plain values, and a report of what cannot be carried over.

Opening never writes in the user's workspace. A file with no `-wal`/`-journal` beside it is
opened `immutable` (SQLite would otherwise create `-wal`/`-shm` and leave them); a WAL file
whose `-shm` exists (Signet is running, or stopped without a checkpoint) is opened
`mode=ro`, which creates nothing and sees the committed WAL pages; a `-wal` without `-shm`, or
a hot `-journal`, would make SQLite create or recover files, so the three files are copied to
a private temporary directory and the copy is opened (and deleted on close). `immutable` is
safe because Signet writes in WAL mode: a Signet daemon that starts mid-import writes to a new
`-wal`, not into the pages being read. Every read runs in one read transaction, so the
import sees one snapshot.

The schema is detected from `PRAGMA table_info`, never from Signet's migration number:
columns the reader knows are mapped (absent ones get Signet's defaults), columns it does not
know are carried as `extra` values and named in the report, and rows that cannot be mapped
(no id, empty content...) come back as `Unmapped` with a reason. Nothing is dropped silently.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from signet_desktop.storage.connect import (
    Connection,
    DatabaseFileError,
    check_database_file,
    connect,
    connect_read_only,
)

DB_RELATIVE = Path("memory") / "memories.db"
MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_EXTRA_TEXT = 2_000
BATCH = 500

# Signet's columns the reader maps, per table (reference §6 plus older names). Derived
# columns (normalized_content, content_hash, embedding_model) are recomputed here.
MEMORY_COLUMNS = frozenset(
    {
        "id", "type", "category", "content", "confidence", "importance", "source_id",
        "source_type", "tags", "who", "why", "project", "created_at", "updated_at",
        "updated_by", "last_accessed", "access_count", "vector_clock", "version",
        "manual_override", "pinned", "content_hash", "normalized_content", "is_deleted",
        "deleted_at", "extraction_status", "embedding_model", "extraction_model",
        "update_count", "idempotency_key", "source_path", "source_section", "scope",
        "agent_id", "visibility", "runtime_path", "superseded_by", "superseded_at",
        "superseded_reason", "memory_kind", "evidence_meta", "stale_at", "review_after",
        "session_id", "delete_reason", "occurred_at",
    }
)  # fmt: skip
HISTORY_COLUMNS = frozenset(
    {
        "id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason",
        "metadata", "created_at", "actor_type", "session_id", "request_id", "agent_id",
    }
)  # fmt: skip
TRANSCRIPT_COLUMNS = frozenset(
    {
        "session_key", "content", "harness", "project", "agent_id", "created_at",
        "updated_at", "completed_at", "content_hash", "source_id", "source_record_id",
        "source_meta_json",
    }
)  # fmt: skip
REQUIRED = {
    "memories": ("id", "content"),
    "memory_history": ("memory_id", "event"),
    "session_transcripts": ("session_key", "content"),
}
KNOWN = {
    "memories": MEMORY_COLUMNS,
    "memory_history": HISTORY_COLUMNS,
    "session_transcripts": TRANSCRIPT_COLUMNS,
}
MEMORY_TYPES = frozenset(
    {
        "fact", "preference", "decision", "rule", "learning", "issue", "episodic",
        "procedural", "semantic", "rationale", "constraint", "daily-log", "system",
        "document_chunk",
    }
)  # fmt: skip
HISTORY_EVENTS = frozenset({"created", "modified", "deleted", "recovered", "none"})
VISIBILITIES = frozenset({"global", "private", "archived"})
# Tables that are Signet's bookkeeping or derived indexes, not evidence to report as left
# behind (vectors and FTS are rebuilt here).
INTERNAL_TABLES = frozenset(
    {"schema_migrations", "schema_migrations_audit", "embeddings", "vec_embeddings"}
)
T = TypeVar("T")
_SQLITE_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")


class SignetSchemaError(DatabaseFileError):
    """The file is SQLite but not a Signet memories database (no usable memories table)."""


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
class Unmapped:
    """A Signet row that cannot be carried over, and why."""

    table: str
    record_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SignetMemory:
    """One Signet memory row as plain values (Signet's defaults where a column is absent)."""

    id: str
    content: str
    type: str
    tags: tuple[str, ...]
    importance: float
    confidence: float
    pinned: bool
    who: str | None
    why: str | None
    project: str | None
    category: str | None
    agent_id: str
    visibility: str
    scope: str | None
    memory_kind: str | None
    created_at: str | None
    updated_at: str | None
    updated_by: str
    is_deleted: bool
    deleted_at: str | None
    values: Mapping[str, Any]  # the other known columns present (source_*, version, ...)
    extra: Mapping[str, Any] = field(default_factory=dict)  # unknown columns
    notes: tuple[str, ...] = ()  # what mapping changed (type remapped, tags dropped...)


@dataclass(frozen=True, slots=True)
class SignetHistoryEvent:
    """One Signet memory_history row."""

    id: str | None
    memory_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changed_by: str
    actor_type: str
    reason: str | None
    metadata: Mapping[str, Any]
    session_id: str | None
    request_id: str | None
    created_at: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SignetTranscript:
    """One Signet session_transcripts row."""

    session_key: str
    content: str
    harness: str | None
    project: str | None
    agent_id: str
    created_at: str | None
    updated_at: str | None
    completed_at: str | None
    content_hash: str | None
    source: Mapping[str, Any]  # Signet's own source_id / source_record_id / source_meta_json
    extra: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


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

    def count(self, table: str) -> int:
        """Rows in one of the mapped tables (0 when the schema lacks it)."""
        if not self.schema.has(table):
            return 0
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {_table(table)}").fetchone()[0])

    def memories(self, *, after_rowid: int = 0, size: int = BATCH) -> Iterator[Batch[SignetMemory]]:
        """Memories in rowid order, a batch at a time."""
        for rows, last in self._pages("memories", after_rowid, size):
            mapped: list[SignetMemory] = []
            unmapped: list[Unmapped] = []
            for rowid, row in rows:
                result = map_memory(row)
                if isinstance(result, Unmapped):
                    unmapped.append(_with_rowid(result, rowid))
                else:
                    mapped.append(result)
            yield Batch(mapped, unmapped, last)

    def transcripts(self, *, size: int = 100) -> Iterator[Batch[SignetTranscript]]:
        """Transcripts in rowid order, a batch at a time (none when the schema lacks them)."""
        if not self.schema.has("session_transcripts"):
            return
        for rows, last in self._pages("session_transcripts", 0, size):
            mapped: list[SignetTranscript] = []
            unmapped: list[Unmapped] = []
            for rowid, row in rows:
                result = map_transcript(row)
                if isinstance(result, Unmapped):
                    unmapped.append(_with_rowid(result, rowid))
                else:
                    mapped.append(result)
            yield Batch(mapped, unmapped, last)

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


# -- mapping (pure) ---------------------------------------------------------------------------


def map_memory(row: Mapping[str, Any]) -> SignetMemory | Unmapped:
    """One Signet memories row (column name -> value) as a SignetMemory, or why not."""
    raw_id = row.get("id")
    if raw_id is None or not str(raw_id).strip():
        return Unmapped("memories", "<no id>", "id_missing")
    memory_id = str(raw_id)
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        return Unmapped("memories", memory_id, "content_empty")
    if "\x00" in content:
        return Unmapped("memories", memory_id, "content_invalid: contains a NUL byte")
    content = content.strip()
    if len(content) > MAX_CONTENT_CHARS:
        return Unmapped("memories", memory_id, f"content_too_long: {len(content)} characters")
    notes: list[str] = []
    memory_type = _text(row.get("type")) or "fact"
    if memory_type not in MEMORY_TYPES:
        notes.append(f"type {memory_type!r} is unknown here; stored as 'fact'")
        memory_type = "fact"
    visibility = _text(row.get("visibility")) or "global"
    if visibility not in VISIBILITIES:
        notes.append(f"visibility {visibility!r} is unknown here; stored as 'private'")
        visibility = "private"
    created_at = timestamp(row.get("created_at"), "created_at", notes)
    values = {
        k: _plain(v)
        for k, v in row.items()
        if k in MEMORY_COLUMNS and k not in _MAPPED_MEMORY_FIELDS and v is not None
    }
    return SignetMemory(
        id=memory_id,
        content=content,
        type=memory_type,
        tags=parse_tags(row.get("tags"), notes),
        importance=_unit(row.get("importance"), 0.5, "importance", notes),
        confidence=_unit(row.get("confidence"), 1.0, "confidence", notes),
        pinned=_flag(row.get("pinned")),
        who=_text(row.get("who")),
        why=_text(row.get("why")),
        project=_text(row.get("project")),
        category=_text(row.get("category")),
        agent_id=_text(row.get("agent_id")) or "default",
        visibility=visibility,
        scope=_text(row.get("scope")),
        memory_kind=_text(row.get("memory_kind")),
        created_at=created_at,
        updated_at=timestamp(row.get("updated_at"), "updated_at", notes) or created_at,
        updated_by=_text(row.get("updated_by")) or "system",
        is_deleted=_flag(row.get("is_deleted")),
        deleted_at=timestamp(row.get("deleted_at"), "deleted_at", notes),
        values=values,
        extra={k: _plain(v) for k, v in row.items() if k not in MEMORY_COLUMNS and v is not None},
        notes=tuple(notes),
    )


_MAPPED_MEMORY_FIELDS = frozenset(
    {
        "id", "content", "type", "tags", "importance", "confidence", "pinned", "who", "why",
        "project", "category", "agent_id", "visibility", "scope", "memory_kind", "created_at",
        "updated_at", "updated_by", "is_deleted", "deleted_at",
        # derived, recomputed here: not carried
        "normalized_content", "embedding_model",
    }
)  # fmt: skip


def map_history(row: Mapping[str, Any]) -> SignetHistoryEvent:
    """One Signet memory_history row (always mappable once it names its memory)."""
    notes: list[str] = []
    event = _text(row.get("event")) or "none"
    metadata = _json_object(row.get("metadata"), notes)
    if event not in HISTORY_EVENTS:
        notes.append(f"event {event!r} is unknown here; stored as 'none'")
        metadata = {**metadata, "signet_event": event}
        event = "none"
    extra = {k: _plain(v) for k, v in row.items() if k not in HISTORY_COLUMNS and v is not None}
    if extra:
        metadata = {**metadata, "signet_extra": extra}
    return SignetHistoryEvent(
        id=_text(row.get("id")),
        memory_id=str(row.get("memory_id")),
        event=event,
        old_content=_str_or_none(row.get("old_content")),
        new_content=_str_or_none(row.get("new_content")),
        changed_by=_text(row.get("changed_by")) or "system",
        actor_type=_text(row.get("actor_type")) or "user",
        reason=_str_or_none(row.get("reason")),
        metadata=metadata,
        session_id=_text(row.get("session_id")),
        request_id=_text(row.get("request_id")),
        created_at=timestamp(row.get("created_at"), "created_at", notes),
        notes=tuple(notes),
    )


def map_transcript(row: Mapping[str, Any]) -> SignetTranscript | Unmapped:
    """One Signet session_transcripts row, or why not."""
    key = _text(row.get("session_key"))
    if not key:
        return Unmapped("session_transcripts", "<no session_key>", "session_key_missing")
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        return Unmapped("session_transcripts", key, "content_empty")
    notes: list[str] = []
    created = timestamp(row.get("created_at"), "created_at", notes)
    source = {
        k: row[k]
        for k in ("source_id", "source_record_id", "source_meta_json")
        if row.get(k) is not None
    }
    return SignetTranscript(
        session_key=key,
        content=content,
        harness=_text(row.get("harness")),
        project=_text(row.get("project")),
        agent_id=_text(row.get("agent_id")) or "default",
        created_at=created,
        updated_at=timestamp(row.get("updated_at"), "updated_at", notes) or created,
        completed_at=timestamp(row.get("completed_at"), "completed_at", notes),
        content_hash=_text(row.get("content_hash")),
        source=source,
        extra={
            k: _plain(v) for k, v in row.items() if k not in TRANSCRIPT_COLUMNS and v is not None
        },
        notes=tuple(notes),
    )


def parse_tags(value: Any, notes: list[str]) -> tuple[str, ...]:
    """Signet tags: a comma string (older rows) or a JSON array; trimmed, deduplicated."""
    if value is None or value == "":
        return ()
    items: list[str]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            items = [str(item) for item in parsed if item is not None]
        else:
            items = text.strip("[]").split(",")
    else:
        items = text.split(",")
    seen: dict[str, None] = {}
    for item in items:
        tag = item.strip().strip('"').strip()
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS or "\x00" in tag:
            notes.append(f"tag {tag[:40]!r}... is longer than {MAX_TAG_CHARS}; left out")
            continue
        seen.setdefault(tag, None)
    tags = tuple(seen)
    if len(tags) > MAX_TAGS:
        notes.append(f"{len(tags)} tags; the first {MAX_TAGS} kept")
        tags = tags[:MAX_TAGS]
    return tags


def timestamp(value: Any, name: str, notes: list[str]) -> str | None:
    """ISO-8601 UTC with milliseconds and Z (our format); None (noted) when unparseable."""
    if value is None or value == "":
        return None
    moment: datetime | None = None
    if isinstance(value, int | float) and math.isfinite(value):
        seconds = value / 1000 if value > 10**11 else value  # epoch ms or s
        moment = datetime.fromtimestamp(seconds, UTC)
    elif isinstance(value, str) and _SQLITE_DATETIME.match(value.strip()):
        text = value.strip().replace(" ", "T", 1)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # SQLite's datetime('now') is UTC
    if moment is None:
        notes.append(f"{name} {str(value)[:40]!r} is not a timestamp")
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value)


def _unit(value: Any, default: float, name: str, notes: list[str]) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        notes.append(f"{name} {str(value)[:20]!r} is not a number; {default} used")
        return default
    if not math.isfinite(number):
        notes.append(f"{name} is not finite; {default} used")
        return default
    if not 0.0 <= number <= 1.0:
        clamped = min(1.0, max(0.0, number))
        notes.append(f"{name} {number} is outside [0, 1]; {clamped} used")
        return clamped
    return number


def _json_object(value: Any, notes: list[str]) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    try:
        parsed = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return {"signet_metadata_text": str(value)[:MAX_EXTRA_TEXT]}
    if isinstance(parsed, dict):
        return parsed
    return {"signet_metadata": _plain(parsed)}


def _plain(value: Any) -> Any:
    """A JSON-safe value (blobs become a size note, long text is cut and says so)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {"blob_bytes": len(bytes(value))}
    if isinstance(value, str) and len(value) > MAX_EXTRA_TEXT:
        return value[:MAX_EXTRA_TEXT] + f"… [{len(value) - MAX_EXTRA_TEXT} characters cut]"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
