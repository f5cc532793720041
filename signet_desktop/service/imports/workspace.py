"""The `signet-workspace` importer: a Signet workspace's memories, history and transcripts.

It reads the Signet `memories.db` read-only (`evidence/signet_db.py`) and writes, per batch of
memories, one transaction holding the memory rows, their history, one
`source_import_records` row per Signet memory and the run's counters. A record that is
already settled is skipped, so a second run, or a run after a kill -9 at any step, adds
nothing twice and ends with the same rows as a clean run.

Mapping (docs/SIGNET_IMPORT.md has the whole table):

- **Ids.** A Signet memory keeps its id when no memory here has it, so Signet clients'
  references (and `superseded_by` links) keep working; otherwise it gets a stable
  uuid5(source id, Signet id). The Signet id is always in `metadata.signet.id`. History
  events keep their ids the same way.
- **Provenance.** `source_type = 'signet-import'`, `source_id` = our source id,
  `source_path` = the Signet database. Signet's own source_type / source_id / source_path /
  agent_id and any column we do not know go into `metadata.signet`.
- **Kept as recorded.** Content, type, tags, importance, confidence, pinned, who, why,
  project, category, scope, visibility, timestamps, updated_by, version, access counts,
  deletion state (a deleted Signet memory is imported deleted), supersession. One
  `none` history event (`reason = 'imported from Signet'`) records the import itself.
- **Dedupe.** A live Signet memory whose content (or idempotency key) matches a live memory
  of the agent here is a `duplicate` record; nothing is written for it.
- **Scope.** Everything lands in the agent that asked, whatever Signet agent it belonged to.
- **Vectors** are not made here: the embedding tracker's scan embeds every live memory
  without a current vector; when the service gives a `VectorFollow`, committed batches are
  also handed to the remember batcher so they are embedded soon, outside any transaction.
  Each new live memory is announced as `memory.created` after its batch commits.

What cannot be carried over is reported, never dropped silently: unmappable rows are
`failed` records with the reason, and `report.json` in the source's staging directory lists
unknown columns, the tables not imported (with row counts), history rows without a memory
and what mapping changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import MemoryCreated
from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sources import ImportCounts, Source
from signet_desktop.embedding import vectors as vector_rows
from signet_desktop.evidence import signet_db, signet_rows
from signet_desktop.evidence.signet_db import SignetDatabase
from signet_desktop.evidence.signet_rows import SignetMemory, SignetTranscript
from signet_desktop.safety import local_files
from signet_desktop.service.embeddings.batches import VectorFollow
from signet_desktop.service.imports.service import ImportJob
from signet_desktop.service.transcripts.service import content_turns
from signet_desktop.storage import history, memories, transcripts
from signet_desktop.storage import sources as records
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage.connect import Connection, DatabaseFileError
from signet_desktop.storage.database import Database

log = logging.getLogger(__name__)

KIND = "signet-workspace"
SOURCE_TYPE = "signet-import"
IMPORT_ACTOR = "signet-import"
# Per write transaction: small enough that a remember waiting for the write lock during an
# import waits at most about half a second (measured on a 2-core box at load 4: 250 held the
# lock ≤ 0.55 s per batch, 500 up to 2.2 s).
MEMORY_BATCH = 250
TRANSCRIPT_BATCH = 100
REPORT_FILE = "report.json"
REPORT_LIST_LIMIT = 200
MAX_SOURCE_META = 16_000
DONE = frozenset({"imported", "duplicate", "skipped"})
# Fault points, in the order a run passes them (tests/e2e/test_workspace_import_crash.py).
STEPS = (
    "signet.opened",
    "memories.batch_read",
    "memories.batch_written",  # inside the open write transaction
    "memories.batch_committed",
    "transcripts.batch_written",
    "transcripts.batch_committed",
    "report.written",
)
_TIME_COLUMNS = ("occurred_at", "last_accessed", "superseded_at", "stale_at", "review_after")
_TURN = re.compile(r"(?:^|\n\n)(?:User|Assistant|System|Tool): ", re.IGNORECASE)
_ID_NAMESPACE = uuid.UUID("6a1f1f5e-7d0c-4d38-9b7a-3c1e2f9d5a10")


@dataclass
class ImportReport:
    """What a run could not carry over or had to change (written as report.json)."""

    schema: dict[str, Any] = field(default_factory=dict)
    unmapped: list[dict[str, str]] = field(default_factory=list)
    unmapped_count: int = 0
    notes: Counter[str] = field(default_factory=Counter)
    signet_agents: Counter[str] = field(default_factory=Counter)
    ids_remapped: int = 0  # by this run (earlier runs' rows say so in metadata.signet.id)
    orphan_history: int = 0

    def add_unmapped(self, item: signet_rows.Unmapped) -> None:
        self.unmapped_count += 1
        if len(self.unmapped) < REPORT_LIST_LIMIT:
            self.unmapped.append({"table": item.table, "id": item.record_id, "reason": item.reason})

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "unmapped": {"count": self.unmapped_count, "first": self.unmapped},
            "orphanHistory": self.orphan_history,
            "idsRemapped": self.ids_remapped,
            "signetAgents": dict(self.signet_agents),
            "notes": dict(self.notes.most_common(REPORT_LIST_LIMIT)),
        }


class SignetWorkspaceImporter:
    """`Importer` for kind `signet-workspace` (see service/imports/service.py)."""

    kind = KIND

    def __init__(
        self,
        *,
        follow: VectorFollow | None = None,
        own_database: Path | None = None,
        memory_batch: int = MEMORY_BATCH,
        transcript_batch: int = TRANSCRIPT_BATCH,
    ) -> None:
        self._follow = follow
        self._own = None if own_database is None else own_database.resolve()
        self._memory_batch = memory_batch
        self._transcript_batch = transcript_batch

    def default_root(self) -> Path | None:
        return None  # Signet's default (~/.agents) may be this workspace: always ask

    def check_root(self, path: Path, allowed: Sequence[Path]) -> Path:
        """The Signet database file of a workspace (or the file itself), if it is readable
        and not ours. The file is the source's root, so naming the workspace or its
        memories.db reaches the same source."""
        try:
            database = local_files.check_path(str(signet_db.locate(path)), allowed)
            if database == self._own:
                raise InvalidInput("that is this workspace's own database", code="path_forbidden")
            with SignetDatabase(database):
                pass
        except DatabaseFileError as exc:
            raise InvalidInput(str(exc), code="not_signet_workspace") from None
        return database

    def run(self, job: ImportJob) -> None:
        root = Path(job.source.root_path)
        # Checked again as the run starts (SQLite opens by path; the gap is this call to it).
        located = local_files.check_path(str(signet_db.locate(root)), job.roots)
        own = job.db.path.resolve() if isinstance(job.db, Database) else self._own  # PG: no file
        if located == own:
            raise InvalidInput("that is this workspace's own database", code="path_forbidden")
        report = ImportReport()
        with SignetDatabase(located) as source_db:
            report.schema = source_db.schema.to_json()
            _log_schema(source_db.schema)
            job.faults.hit("signet.opened")
            self._memories(job, source_db, report)
            if not job.stop.is_set():
                self._transcripts(job, source_db, report)
            for orphan in source_db.orphan_history():
                report.orphan_history += 1
                report.add_unmapped(orphan)
        _write_report(job.staging_root / REPORT_FILE, report)
        job.faults.hit("report.written")

    def purge(self, conn: Connection, source: Source, *, dry_run: bool) -> Mapping[str, int]:
        """The memories this source imported, their history and vectors."""
        return purge_source(conn, source, dry_run=dry_run)

    # -- memories ---------------------------------------------------------------------------

    def _memories(self, job: ImportJob, source_db: SignetDatabase, report: ImportReport) -> None:
        # A source with no records yet has nothing to skip: no per-record lookups then.
        resuming = bool(
            records.source_totals(job.db.reader(), job.source.agent_id, job.source.id).records
        )
        source_path = str(source_db.path)
        for batch in source_db.memories(size=self._memory_batch):
            if job.stop.is_set():
                return
            conn = job.db.reader()
            for mapped in batch.rows:  # the report describes the whole source, not only this run
                report.signet_agents[mapped.agent_id] += 1
                for note in mapped.notes:
                    report.notes[_note_kind(note)] += 1
            todo = [
                m for m in batch.rows if not (resuming and _done(conn, job, _memory_record(m.id)))
            ]
            skipped = len(batch.rows) - len(todo)
            trails = source_db.history_for([m.id for m in todo])
            source_db.check_unchanged()  # rows read while Signet wrote the file are not used
            job.faults.hit("memories.batch_read")
            with job.db.write() as wconn:
                counts, created = self._write_memories(
                    wconn, job, todo, trails, report, source_path
                )
                for item in batch.unmapped:
                    report.add_unmapped(item)
                    _settle(wconn, job, _memory_record(item.record_id), "failed", item.reason)
                job.count(
                    wconn,
                    replace(
                        counts,
                        records_seen=len(batch.rows) + len(batch.unmapped),
                        records_skipped=counts.records_skipped + skipped,
                        records_failed=counts.records_failed + len(batch.unmapped),
                    ),
                )
                job.faults.hit("memories.batch_written")
            job.faults.hit("memories.batch_committed")
            job.progress()
            if created:
                self._after_commit(job, created)

    def _after_commit(self, job: ImportJob, created: Sequence[str]) -> None:
        """`memory.created` per new live memory (content safety, MEMORY.md and the window
        follow it, as after `remember_many`), and the batch to the vector batcher."""
        live = memories.get_memories(job.db.reader(), job.source.agent_id, created)
        rows = [live[i] for i in created if i in live]
        for row in rows:
            job.events.publish(
                MemoryCreated(
                    agent_id=row.agent_id, memory_id=row.id, memory_type=row.type, embedded=False
                )
            )
        if self._follow is not None:
            self._follow.follow(rows)

    def _write_memories(
        self,
        conn: Connection,
        job: ImportJob,
        todo: Sequence[SignetMemory],
        trails: Mapping[str, Sequence[signet_rows.SignetHistoryEvent]],
        report: ImportReport,
        source_path: str,
    ) -> tuple[ImportCounts, list[str]]:
        """Write one batch; returns its counts and the ids of the live memories it created."""
        source = job.source
        taken = memories.taken_ids(conn, [m.id for m in todo])
        taken_events = history.taken_event_ids(
            conn, [e.id for m in todo for e in trails.get(m.id, ()) if e.id]
        )
        imported = duplicate = 0
        created: list[str] = []
        events: list[history.ImportedEvent] = []
        for item in todo:
            our_id = item.id if item.id not in taken else _derived_id(source.id, item.id)
            row = to_imported(item, our_id, source, job.run_id, source_path)
            if not row.is_deleted:
                match = memories.find_live_match(conn, row)
                if match is not None:
                    _settle(conn, job, _memory_record(item.id), "duplicate", f"same as {match.id}")
                    duplicate += 1
                    continue
            if our_id != item.id:
                report.ids_remapped += 1
            memories.insert_imported(conn, row)
            events += _events(row, trails.get(item.id, ()), source.id, taken_events)
            _settle(conn, job, _memory_record(item.id), "imported", None)
            imported += 1
            if not row.is_deleted:
                created.append(our_id)
        history.insert_imported_events(conn, events)
        return ImportCounts(records_imported=imported, records_duplicate=duplicate), created

    # -- transcripts ------------------------------------------------------------------------

    def _transcripts(self, job: ImportJob, source_db: SignetDatabase, report: ImportReport) -> None:
        for batch in source_db.transcripts(size=self._transcript_batch):
            if job.stop.is_set():
                return
            conn = job.db.reader()
            todo = [t for t in batch.rows if not _done(conn, job, _session_record(t.session_key))]
            source_db.check_unchanged()
            imported = duplicate = turns = 0
            with job.db.write() as wconn:
                for item in todo:
                    count = turn_count(item.content)
                    if transcripts.insert_imported_transcript(
                        wconn, **_transcript_row(item, job.source, count)
                    ):
                        # Recallable once this batch commits: its turns in the same transaction.
                        turn_rows.index_turns(
                            wconn,
                            job.source.agent_id,
                            item.session_key,
                            content_turns(item.content),
                        )
                        imported, turns = imported + 1, turns + count
                        _settle(
                            wconn,
                            job,
                            _session_record(item.session_key),
                            "imported",
                            None,
                            session_key=item.session_key,
                            turns=count,
                        )
                    else:
                        duplicate += 1
                        _settle(
                            wconn,
                            job,
                            _session_record(item.session_key),
                            "duplicate",
                            "this agent already has a transcript with this session key",
                        )
                for unmapped in batch.unmapped:
                    report.add_unmapped(unmapped)
                    _settle(
                        wconn, job, _session_record(unmapped.record_id), "failed", unmapped.reason
                    )
                job.count(
                    wconn,
                    ImportCounts(
                        records_seen=len(batch.rows) + len(batch.unmapped),
                        records_imported=imported,
                        records_duplicate=duplicate,
                        records_skipped=len(batch.rows) - len(todo),
                        records_failed=len(batch.unmapped),
                        turns_imported=turns,
                    ),
                )
                job.faults.hit("transcripts.batch_written")
            job.faults.hit("transcripts.batch_committed")
            job.progress()


# -- mapping to our rows ----------------------------------------------------------------------


def to_imported(
    item: SignetMemory, our_id: str, source: Source, run_id: str, source_path: str
) -> memories.ImportedMemory:
    """Our row for a Signet memory (ids, provenance and metadata as the module says)."""
    values = item.values
    now = utc_now()
    created = item.created_at or now
    signet: dict[str, Any] = {"id": item.id, "agent_id": item.agent_id}
    for name in ("source_type", "source_id", "source_path", "source_section", "content_hash"):
        if name in values:
            signet[name] = values[name]
    if item.extra:
        signet["extra"] = dict(item.extra)
    times = {name: _time(values.get(name)) for name in _TIME_COLUMNS}
    unreadable = {n: values[n] for n in _TIME_COLUMNS if values.get(n) is not None and not times[n]}
    if unreadable:  # kept as Signet wrote them, not dropped
        signet["unreadable_times"] = unreadable
    if item.notes:
        signet["notes"] = list(item.notes)
    return memories.ImportedMemory(
        id=our_id,
        agent_id=source.agent_id,
        content=item.content,
        created_at=created,
        updated_at=item.updated_at or created,
        source_type=SOURCE_TYPE,
        source_id=source.id,
        source_path=source_path,
        type=item.type,
        category=item.category,
        confidence=item.confidence,
        importance=item.importance,
        pinned=item.pinned,
        tags=item.tags,
        who=item.who,
        why=item.why,
        project=item.project,
        scope=item.scope,
        visibility=item.visibility,
        memory_kind=item.memory_kind or "episodic",
        runtime_path=_str(values.get("runtime_path")),
        idempotency_key=_str(values.get("idempotency_key")),
        session_id=_str(values.get("session_id")),
        metadata={"signet": signet, "import": {"run_id": run_id}},
        evidence_meta=_str(values.get("evidence_meta")),
        updated_by=item.updated_by,
        occurred_at=times["occurred_at"],
        last_accessed=times["last_accessed"],
        access_count=_int(values.get("access_count"), 0),
        version=max(1, _int(values.get("version"), 1)),
        update_count=_int(values.get("update_count"), 0),
        manual_override=bool(_int(values.get("manual_override"), 0)),
        vector_clock=_str(values.get("vector_clock")),
        is_deleted=item.is_deleted,
        deleted_at=(item.deleted_at or item.updated_at or created) if item.is_deleted else None,
        delete_reason=_str(values.get("delete_reason")) if item.is_deleted else None,
        extraction_status=_str(values.get("extraction_status")) or "none",
        extraction_model=_str(values.get("extraction_model")),
        superseded_by=_str(values.get("superseded_by")),
        superseded_at=times["superseded_at"],
        superseded_reason=_str(values.get("superseded_reason")),
        stale_at=times["stale_at"],
        review_after=times["review_after"],
    )


def _events(
    row: memories.ImportedMemory,
    trail: Sequence[signet_rows.SignetHistoryEvent],
    source_id: str,
    taken: set[str],
) -> list[history.ImportedEvent]:
    """The memory's Signet history as recorded (an id already used here is derived from the
    source instead), then one event for the import itself."""
    events = []
    for number, event in enumerate(trail):
        original = event.id or f"{row.id}#{number}"
        free = event.id is not None and event.id not in taken
        metadata = dict(event.metadata)
        if not free:
            metadata["signet_history_id"] = event.id
        if event.notes:  # e.g. an unreadable time (the memory's is used): said, not dropped
            metadata["signet_notes"] = list(event.notes)
        events.append(
            history.ImportedEvent(
                id=original if free else _derived_id(source_id, f"history:{original}"),
                memory_id=row.id,
                agent_id=row.agent_id,
                event=event.event,
                changed_by=event.changed_by,
                created_at=event.created_at or row.created_at,
                actor_type=event.actor_type,
                old_content=event.old_content,
                new_content=event.new_content,
                reason=event.reason,
                metadata=metadata,
                session_id=event.session_id,
                request_id=event.request_id,
            )
        )
    events.append(
        history.ImportedEvent(
            id=_derived_id(source_id, f"import:{row.id}"),
            memory_id=row.id,
            agent_id=row.agent_id,
            event="none",
            changed_by=IMPORT_ACTOR,
            actor_type="system",
            created_at=utc_now(),
            reason="imported from Signet",
            metadata={
                "source_id": source_id,
                "source_path": row.source_path,
                "signet_id": row.metadata["signet"]["id"],
                "history_events": len(trail),
            },
        )
    )
    return events


def _transcript_row(item: SignetTranscript, source: Source, turns: int) -> dict[str, Any]:
    created = item.created_at or utc_now()
    updated = item.updated_at or created
    meta: dict[str, Any] = {"signet": {"agent_id": item.agent_id, **dict(item.source)}}
    if item.content_hash:
        meta["signet"]["content_hash"] = item.content_hash
    if item.extra:
        meta["signet"]["extra"] = dict(item.extra)
    if item.notes:
        meta["signet"]["notes"] = list(item.notes)
    text = json.dumps(meta, ensure_ascii=False)
    if len(text) > MAX_SOURCE_META:
        meta = {"signet": {"agent_id": item.agent_id, "truncated": len(text)}}
        text = json.dumps(meta)
    return {
        "agent_id": source.agent_id,
        "session_key": item.session_key,
        "content": item.content,
        "harness": item.harness,
        "project": item.project,
        "created_at": created,
        "updated_at": updated,
        "completed_at": item.completed_at or updated,
        "content_hash": hashlib.sha256(item.content.encode("utf-8")).hexdigest(),
        "turn_count": turns,
        "source_id": source.id,
        "source_record_id": item.session_key,
        "source_meta_json": text,
    }


def turn_count(content: str) -> int:
    """Turns in Signet's role-prefixed transcript text (`User: …` / `Assistant: …` blocks)."""
    return len(_TURN.findall(content))


# -- purge ------------------------------------------------------------------------------------


def purge_source(conn: Connection, source: Source, *, dry_run: bool) -> dict[str, int]:
    """Remove (or count, when `dry_run`) the memories a source imported with their history
    and vectors. Only rows of this agent carrying this source's provenance are touched."""
    ids = memories.imported_ids(conn, source.agent_id, SOURCE_TYPE, source.id)
    if dry_run:
        return {"memories": len(ids), "memory_vectors": vector_rows.count_source_vectors(conn, ids)}
    purged = {"memory_vectors": 0, "memory_history": 0, "memories": 0}
    for start in range(0, len(ids), MEMORY_BATCH):
        chunk = ids[start : start + MEMORY_BATCH]
        purged["memory_vectors"] += vector_rows.delete_source_vectors(conn, chunk)
        purged["memory_history"] += history.delete_events_for(conn, source.agent_id, chunk)
        purged["memories"] += memories.delete_memories(conn, source.agent_id, chunk)
    return purged


# -- helpers ----------------------------------------------------------------------------------


def _memory_record(signet_id: str) -> str:
    return f"memory:{signet_id}"


def _session_record(session_key: str) -> str:
    return f"session:{session_key}"


def _done(conn: Connection, job: ImportJob, record_id: str) -> bool:
    found = records.get_record(conn, job.source.agent_id, job.source.id, record_id)
    return found is not None and found.outcome in DONE


def _settle(
    conn: Connection,
    job: ImportJob,
    record_id: str,
    outcome: str,
    error: str | None,
    *,
    session_key: str | None = None,
    turns: int | None = None,
) -> None:
    records.settle_record(
        conn,
        agent_id=job.source.agent_id,
        source_id=job.source.id,
        source_record_id=record_id,
        run_id=job.run_id,
        outcome=outcome,
        session_key=session_key,
        turn_count=turns,
        error=error,
    )


def _derived_id(source_id: str, name: str) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, f"{source_id}:{name}"))


def _note_kind(note: str) -> str:
    return note.split(" ", 1)[0] + " " + ("remapped" if "stored as" in note else "adjusted")


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _time(value: Any) -> str | None:
    return signet_rows.timestamp(value, "", [])


def _log_schema(schema: signet_db.SchemaReport) -> None:
    unknown = {t: c for t, c in schema.unknown_columns.items() if c}
    if unknown:
        log.info("Signet columns kept in metadata (not known here): %s", unknown)
    if schema.other_tables:
        log.info("Signet tables not imported: %s", dict(schema.other_tables))


def _write_report(path: Path, report: ImportReport) -> None:
    """report.json beside the source's staged files, replaced atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(report.to_json(), indent=2, sort_keys=True), encoding="utf-8")
    os.replace(temp, path)
