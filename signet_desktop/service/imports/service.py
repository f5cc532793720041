"""The imports capability: sources of existing history, runs over them, and their removal.

An **importer** brings one kind of source in (`claude-code`, `codex`, `signet-workspace`).
`ImportService` does what every kind shares: validate the request, register the source
(`sources` row, `source_id`), open a run (one running run per source: a second is a
`Conflict`, HTTP 409), run the importer on a thread (never on the event loop), publish
`import.progress` / `import.finished`, and on removal purge what the source brought, leave a
bounded tombstone and mark derived graph rows unsupported.

**Adding a kind.** Write a class satisfying `Importer` and pass an instance to
`ImportService(importers=...)` (or `service.register(importer)`) in `service/container.py`:

- `kind`: the name on the wire and the CLI (`[a-z][a-z0-9-]*`);
- `default_root()`: the root used when the request names no path (None: a path is required);
- `check_root(path)`: the resolved root if this kind can import it, else raise `InvalidInput`
  (called before anything is written; `allowed` are the roots a request may name);
- `run(job)`: do the work. Use `job.db` for writes through the owning storage modules, add
  counters with `job.count(conn, ImportCounts(...))` inside the transaction that did the
  counted work (so counters never disagree with rows after a crash), call `job.progress()`
  after commits and `job.faults.hit("<step>")` at each named step, stop early when
  `job.stop` is set. Raise to fail the run (its message is stored on the run).
- `purge(conn, source, dry_run=...)`: extra rows of your own to delete when the source is
  removed (counts by name); `conn` is a reader in a dry run and must not be written. The
  shared purge (its `session_transcripts` rows, staged files, `source_import_*` rows, Dreaming
  consumption/review rows, graph staleness) runs for every kind.

Re-importing a removed root is refused with 409 `source_removed` unless the request says
`reimport: true` (`signet import … --reimport`): the removal was deliberate, so bringing its
evidence back must be too. A
re-import registers a new source (a new `source_id`); the tombstone stays as the audit.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from signet_desktop.domain import scope
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.events import DiscardEvents, EventSink, ImportFinished, ImportProgress
from signet_desktop.domain.sources import (
    SOURCE_KINDS_PATTERN,
    ImportCounts,
    ImportRun,
    ImportTicket,
    PurgeReport,
    Source,
    SourceDetail,
    check_run_id,
    check_source_id,
)
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.safety import local_files
from signet_desktop.safety.local_files import FileRoots
from signet_desktop.service.imports import faults as import_faults
from signet_desktop.service.imports.faults import FaultPoints
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage import dreaming_evidence, graph_staleness, import_accounts
from signet_desktop.storage import sources as rows
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage import transcripts as transcript_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.errors import INTEGRITY_ERRORS
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.25
MAX_PATH_CHARS = 4096
STAGING_DIR = "memory/imports"


class Importer(Protocol):
    """One kind of source (see the module docstring for how a kind plugs in)."""

    @property
    def kind(self) -> str: ...

    def default_root(self) -> Path | None: ...

    def check_root(self, path: Path, allowed: Sequence[Path]) -> Path: ...

    def run(self, job: ImportJob) -> None: ...

    def purge(self, conn: Connection, source: Source, *, dry_run: bool) -> Mapping[str, int]: ...


@dataclass
class ImportJob:
    """What an importer's `run` gets: the source, its run, the handles, counters, faults."""

    source: Source
    run_id: str
    db: DatabaseHandle
    workspace: Path
    transcripts: TranscriptService
    faults: FaultPoints
    events: EventSink
    stop: threading.Event = field(default_factory=threading.Event)
    counts: ImportCounts = field(default_factory=ImportCounts)
    lines_skipped: int = 0
    files_total: int | None = None  # set by the importer once it has listed its files
    roots: tuple[Path, ...] = ()  # where the run may read: open files with local_files
    started: float = field(default_factory=time.monotonic)
    _last_progress: float = 0.0

    @property
    def staging_root(self) -> Path:
        """Where this source's staged copies live (immutable evidence)."""
        return self.workspace / STAGING_DIR / self.source.id

    def count(self, conn: Connection, counts: ImportCounts) -> None:
        """Add to the run's counters inside the caller's write transaction."""
        rows.add_run_counts(conn, self.run_id, counts)
        self.counts = self.counts.plus(counts)

    def progress(self, *, force: bool = False) -> None:
        """Publish `import.progress` (at most every 0.25 s unless forced)."""
        now = time.monotonic()
        if not force and now - self._last_progress < PROGRESS_INTERVAL_S:
            return
        self._last_progress = now
        self.events.publish(
            ImportProgress(
                agent_id=self.source.agent_id,
                source_id=self.source.id,
                run_id=self.run_id,
                source_kind=self.source.kind,
                files_seen=self.counts.files_seen,
                records_seen=self.counts.records_seen,
                records_imported=self.counts.records_imported,
                turns_imported=self.counts.turns_imported,
                lines_skipped=self.lines_skipped,
                elapsed_s=round(now - self.started, 3),
                files_total=self.files_total,
            )
        )


class ImportService:
    """Register sources, run importers off the caller's thread, report, remove."""

    def __init__(
        self,
        db: DatabaseHandle,
        workspace: Path,
        transcripts: TranscriptService,
        *,
        importers: Sequence[Importer] = (),
        allowed_roots: Sequence[Path] = (),
        configured_roots: Sequence[Path] = (),
        events: EventSink | None = None,
        faults: FaultPoints | None = None,
    ) -> None:
        self._db = db
        self._workspace = workspace
        self._transcripts = transcripts
        self._importers: dict[str, Importer] = {}
        # `allowed_roots` are the local user's defaults; `configured_roots` is files.roots.
        self._roots = FileRoots.of(configured_roots, [workspace, *allowed_roots])
        self._events = events or DiscardEvents()
        self._faults = faults or import_faults.from_env()
        self._lock = threading.Lock()
        self._active: dict[str, tuple[threading.Thread | None, ImportJob]] = {}  # by source id
        for importer in importers:
            self.register(importer)

    def register(self, importer: Importer) -> None:
        """Add an importer kind (composition time)."""
        if not SOURCE_KINDS_PATTERN.fullmatch(importer.kind):
            raise ValueError(f"importer kind {importer.kind!r} is not a valid kind name")
        self._importers[importer.kind] = importer

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted(self._importers))

    # -- starting ---------------------------------------------------------------------------

    def start(
        self,
        agent_id: str,
        kind: str,
        path: str | None = None,
        *,
        reimport: bool = False,
        triggered_by: str = "manual",
        wait: bool = False,
        local: bool = True,
    ) -> ImportTicket:
        """Register (or reuse) the source and start a run: on a thread, or here if `wait`.

        The root and every file the run reads must lie in the roots the caller may read
        (`local`: the machine's own user) and outside credential stores (Forbidden)."""
        scope.check_agent_id(agent_id)
        importer = self._importer(kind)
        roots = self._roots.for_caller(local)
        root = self._root(importer, path, roots)
        job, created = self._open_run(agent_id, importer, root, reimport, triggered_by)
        job.roots = roots
        ticket = ImportTicket(job.source.id, job.run_id, created)
        if wait:
            self._execute(importer, job)
            return ticket
        thread = threading.Thread(
            target=self._execute_in_background,
            args=(importer, job),
            name=f"import-{job.source.id}",
            daemon=True,
        )
        with self._lock:
            self._active[job.source.id] = (thread, job)
        thread.start()
        return ticket

    def _importer(self, kind: object) -> Importer:
        if not isinstance(kind, str) or kind not in self._importers:
            known = ", ".join(self.kinds) or "none"
            raise InvalidInput(
                f"unknown import kind {kind!r} (known: {known})", code="kind_invalid"
            )
        return self._importers[kind]

    def _root(self, importer: Importer, path: str | None, roots: Sequence[Path]) -> Path:
        if path is None or (isinstance(path, str) and not path.strip()):
            default = importer.default_root()
            if default is None:
                raise InvalidInput(f"{importer.kind} needs a path", code="path_required")
            candidate = default
        elif not isinstance(path, str) or "\x00" in path or len(path) > MAX_PATH_CHARS:
            raise InvalidInput("path must be a directory path", code="path_invalid")
        else:
            candidate = Path(path).expanduser()
            if not candidate.is_absolute():
                raise InvalidInput("path must be absolute", code="path_invalid")
        resolved = local_files.check_path(str(candidate), roots)
        if not resolved.exists():
            raise InvalidInput(f"{resolved} does not exist", code="path_not_found")
        if resolved.is_relative_to((self._workspace / STAGING_DIR).resolve()):
            raise InvalidInput("path is inside the import staging area", code="path_forbidden")
        return importer.check_root(resolved, roots)

    def _open_run(
        self, agent_id: str, importer: Importer, root: Path, reimport: bool, triggered_by: str
    ) -> tuple[ImportJob, bool]:
        root_text = str(root)
        with self._lock, self._db.write() as conn:
            source = rows.live_source_at(conn, agent_id, importer.kind, root_text)
            created = source is None
            if source is None:
                if rows.tombstones_at(conn, agent_id, importer.kind, root_text) and not reimport:
                    raise Conflict(
                        f"a {importer.kind} source at {root_text} was removed; import it "
                        'again with --reimport (over HTTP: "reimport": true) to bring its '
                        "history back as a new source",
                        code="source_removed",
                    )
                source = rows.insert_source(
                    conn,
                    agent_id=agent_id,
                    kind=importer.kind,
                    name=f"{importer.kind}: {root.name or root_text}",
                    root_path=root_text,
                )
            elif source.id in self._active:
                running = self._active[source.id][1]
                raise Conflict(
                    f"an import of this source is already running ({running.run_id})",
                    code="import_running",
                    details={"source_id": source.id, "run_id": running.run_id},
                )
            else:
                rows.interrupt_runs(conn, agent_id, source.id)  # left by a killed process
            try:
                run_id = rows.insert_run(conn, agent_id, source.id, triggered_by[:64])
            except INTEGRITY_ERRORS as exc:  # another process's run (never in-process)
                raise Conflict("an import of this source is already running") from exc
            if source.status != "active":
                rows.set_source_status(conn, agent_id, source.id, "active")
            job = ImportJob(
                source=source,
                run_id=run_id,
                db=self._db,
                workspace=self._workspace,
                transcripts=self._transcripts,
                faults=self._faults,
                events=self._events,
            )
            self._active[source.id] = (None, job)
        job.faults.hit("run.started")
        return job, created

    def _execute_in_background(self, importer: Importer, job: ImportJob) -> None:
        lower_current_thread()  # an import yields the CPU to requests someone waits on
        try:
            self._execute(importer, job)
        except Exception as exc:
            if not job.stop.is_set():
                raise
            # Stopped and past the close's wait: the database may be gone; the next start's
            # recovery says the run was interrupted and its next run resumes.
            log.info("import %s abandoned at shutdown (%s)", job.run_id, exc)

    def _execute(self, importer: Importer, job: ImportJob) -> None:
        status, error = "completed", None
        try:
            importer.run(job)
            if job.stop.is_set():
                status = "cancelled"
        except Exception as exc:  # a failed run is reported on the run, never raised away
            if job.stop.is_set():  # stopping: a closing database is not the import's fault
                log.info("import %s of %s stopped: %s", job.run_id, job.source.id, exc)
            else:
                log.exception("import %s of %s failed", job.run_id, job.source.id)
            status, error = "failed", f"{type(exc).__name__}: {exc}"[:1000]
        finally:
            job.faults.hit("run.finishing")
            with self._db.write() as conn:
                rows.finish_run(conn, job.run_id, status, error)
                rows.set_source_status(
                    conn,
                    job.source.agent_id,
                    job.source.id,
                    "error" if status == "failed" else "active",
                    error,
                )
            with self._lock:
                self._active.pop(job.source.id, None)
        job.progress(force=True)
        self._events.publish(
            ImportFinished(
                agent_id=job.source.agent_id,
                source_id=job.source.id,
                run_id=job.run_id,
                status=status,
                records_imported=job.counts.records_imported,
                records_duplicate=job.counts.records_duplicate,
                records_failed=job.counts.records_failed,
                turns_imported=job.counts.turns_imported,
                lines_skipped=job.lines_skipped,
                error=error,
            )
        )

    def recover(self) -> int:
        """At start: runs a killed process left `running` become `interrupted` (the next run
        of their source resumes from the rows); how many. Runs started here are left alone."""
        interrupted = 0
        with self._lock:
            stale = [
                pair for pair in rows.running_runs(self._db.reader()) if pair[1] not in self._active
            ]
            if stale:
                with self._db.write() as conn:
                    for agent_id, source_id in stale:
                        interrupted += rows.interrupt_runs(conn, agent_id, source_id)
        if interrupted:
            log.info("import recovery: %d runs a stop interrupted", interrupted)
        return interrupted

    def wait(self, source_id: str, timeout: float | None = None) -> bool:
        """Join a source's running thread (tests, shutdown); True when none is running."""
        with self._lock:
            entry = self._active.get(source_id)
        if entry is None or entry[0] is None:
            return entry is None
        entry[0].join(timeout)
        return not entry[0].is_alive()

    def close(self, timeout: float = 0.5) -> None:
        """Ask running imports to stop at the next file and wait for them."""
        with self._lock:
            entries = list(self._active.values())
        for thread, job in entries:
            job.stop.set()
            if thread is not None:
                thread.join(timeout)

    # -- reads ------------------------------------------------------------------------------

    def sources(self, agent_id: str) -> list[Source]:
        scope.check_agent_id(agent_id)
        return rows.list_sources(self._db.reader(), agent_id)

    def source(self, agent_id: str, source_id: str, *, runs: int = 10) -> SourceDetail:
        scope.check_agent_id(agent_id)
        conn = self._db.reader()
        found = rows.get_source(conn, agent_id, check_source_id(source_id))
        if found is None or found.removed_at is not None:
            raise NotFound(f"no source {source_id!r}", code="source_not_found")
        totals = dataclasses.replace(
            rows.source_totals(conn, agent_id, found.id),
            lines_skipped=transcript_rows.source_skipped_lines(conn, agent_id, found.id),
        )
        return SourceDetail(found, rows.list_runs(conn, agent_id, found.id, limit=runs), totals)

    def run(self, agent_id: str, run_id: str) -> ImportRun:
        """A run with its counters and its account (which files and sessions, and why)."""
        scope.check_agent_id(agent_id)
        conn = self._db.reader()
        found = rows.get_run(conn, agent_id, check_run_id(run_id))
        if found is None:
            raise NotFound(f"no import run {run_id!r}", code="run_not_found")
        found = dataclasses.replace(
            found, account=import_accounts.run_account(conn, agent_id, found.id)
        )
        with self._lock:
            entry = self._active.get(found.source_id)
        if entry is not None and entry[1].run_id == found.id:
            return dataclasses.replace(found, files_total=entry[1].files_total)
        return found

    # -- removal ----------------------------------------------------------------------------

    def remove(
        self,
        agent_id: str,
        source_id: str,
        *,
        dry_run: bool = True,
        reason: str | None = None,
        removed_by: str = "user",
    ) -> PurgeReport:
        """Purge what the source brought (a preview when `dry_run`) and tombstone it."""
        detail = self.source(agent_id, source_id, runs=1)
        source = detail.source
        if reason is not None and not isinstance(reason, str):
            raise InvalidInput("reason must be text", code="reason_invalid")
        importer = self._importers.get(source.kind)
        if dry_run:
            return PurgeReport(source, True, self._purge(self._db.reader(), source, importer, True))
        with self._lock:
            if source.id in self._active:
                raise Conflict("stop the running import before removing", code="import_running")
            self._active[source.id] = (None, _removal_marker(self, source))
        try:
            staged = rows.staged_paths(self._db.reader(), agent_id, source.id)
            with self._db.write() as conn:
                purged = dict(self._purge(conn, source, importer, False))
                purged["staged_files"] = sum(1 for p in staged if (self._workspace / p).is_file())
                rows.set_source_status(conn, agent_id, source.id, "removed")
                tombstone = rows.insert_tombstone(
                    conn, source, purged=purged, reason=reason, removed_by=removed_by
                )
            # Files go after the commit: a crash before this leaves orphans (tagged with a
            # removed source id, which no read uses), never rows pointing at missing evidence.
            shutil.rmtree(self._workspace / STAGING_DIR / source.id, ignore_errors=True)
            for harness in self._canonical_harnesses():
                self._transcripts.drop_source_lines(harness, agent_id, source.id)
        finally:
            with self._lock:
                self._active.pop(source.id, None)
        return PurgeReport(source, False, purged, tombstone)

    def _canonical_harnesses(self) -> list[str]:
        found = (self._workspace / "memory").glob("*/transcripts/transcript.jsonl")
        return sorted(path.parent.parent.name for path in found)

    def _purge(
        self, conn: Connection, source: Source, importer: Importer | None, dry_run: bool
    ) -> dict[str, int]:
        agent_id = source.agent_id
        keys = transcript_rows.source_session_keys(conn, agent_id, source.id)
        purged: dict[str, int] = {
            "canonical_lines": rows.source_totals(conn, agent_id, source.id).turns,
            # recall's turn index: deleted with the session rows below (cascade), counted here
            "transcript_turns": turn_rows.source_turn_count(conn, agent_id, source.id),
        }
        if dry_run:
            purged.update(rows.count_source_rows(conn, agent_id, source.id))
            purged["session_transcripts"] = len(keys)
            purged.update(dreaming_evidence.count_transcript_evidence(conn, agent_id, keys))
            purged["graph_rows_unsupported"] = graph_staleness.count_supported_by(
                conn, agent_id, "transcript", keys
            )
            purged["staged_files"] = sum(
                1
                for p in rows.staged_paths(conn, agent_id, source.id)
                if (self._workspace / p).is_file()
            )
        else:
            purged.update(dreaming_evidence.purge_transcript_evidence(conn, agent_id, keys))
            purged["graph_rows_unsupported"] = graph_staleness.mark_unsupported(
                conn, agent_id, "transcript", keys
            )
            purged["session_transcripts"] = transcript_rows.delete_source_transcripts(
                conn, agent_id, source.id
            )
            purged.update(rows.delete_source_rows(conn, agent_id, source.id))
        if importer is not None:
            purged.update(importer.purge(conn, source, dry_run=dry_run))
        return purged


def _removal_marker(service: ImportService, source: Source) -> ImportJob:
    """A placeholder in the active map so no import starts while a removal runs."""
    return ImportJob(
        source=source,
        run_id="removal",
        db=service._db,
        workspace=service._workspace,
        transcripts=service._transcripts,
        faults=service._faults,
        events=service._events,
    )
