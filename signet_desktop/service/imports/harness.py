"""Claude Code and Codex history as import sources: one record per session file.

Every file listed is read once per change and ends in one state with its reason
(`source_import_files.status` / `last_error`): `imported`; `skipped` for good while the file
stays as it is (no conversation turns, a compaction or warm-up agent, the same session as
another file, a session the agent already has, too large); `pending` to be read again next
run (a session still being written — imported as it is but not completed —, open in live
capture, changed while copied); `failed` (outside the readable roots). A Claude Code
subagent transcript is a session of its own whose `source_meta_json` names its parent. A
session is keyed by the ids in its records, so a renamed file continues its record (a second
file of the same session, with the first still there, is a duplicate).

Per file, in order (each step is a named fault point, `service/imports/faults.py`):

1. `file.inventoried` — stat the file; unchanged since it was settled (imported or skipped;
   same size and mtime): done. Else its `source_import_files` row says `pending` with the
   size and mtime seen.
2. `file.staged` — copy it into `memory/imports/<source_id>/<relative>.<sha256[:16]>.jsonl`
   (temp, fsync, rename, read-only): immutable evidence, named by content. If the file
   changed while it was copied (size, mtime, bytes copied), the copy is dropped and the file
   stays `pending` for the next run.
3. `file.recorded` — its row records the staged path and hash (`importing`).
4. The staged copy is parsed (torn and garbage lines counted, never fatal). A session still
   open in live capture is `skipped` (tried again next run); one the agent already has from
   live capture or another source is a `duplicate`. Otherwise, holding the canonical file
   (`TranscriptService.exclusive`):
   `record.pending` — the record row says `pending` with the canonical file's size, so a
   replay looks for its lines from there; `canonical.torn` / `canonical.appended` — the turns
   the database does not have are appended, tagged with the source and their staged offset,
   none that a killed attempt already appended; `record.finalised` — one transaction: the
   `session_transcripts` row (source_id, source_record_id = the harness session id, bounded
   source_meta_json; completed unless the file was written in the last `live_window_s`), the
   file's committed offset, the record `imported`, the run's counters.
5. `file.imported` — the file's row says where parsing stopped (byte_offset) and how many
   lines could not be read.

A kill anywhere leaves either nothing, lines the replay recognises, or a finished record, so a
rerun creates no second session, record or turn and ends with the counts of a clean run.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput, SignetError
from signet_desktop.domain.memory import parse_utc
from signet_desktop.domain.sources import ImportCounts, ImportFile, Source
from signet_desktop.evidence import harness_history as history
from signet_desktop.evidence.canonical import CanonicalFile, CanonicalTurn
from signet_desktop.evidence.transcript_formats import MAX_TRANSCRIPT_BYTES
from signet_desktop.service.imports.service import ImportJob
from signet_desktop.service.imports.staging import Staged, stage
from signet_desktop.service.transcripts.service import render_content
from signet_desktop.service.transcripts.worker import DEFAULT_IDLE_TTL_S
from signet_desktop.storage import hook_sessions as live_rows
from signet_desktop.storage import sources as rows
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage import transcripts as transcript_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.import_accounts import IN_PROGRESS
from signet_desktop.storage.transcript_turns import TurnRow

MAX_META_JSON = 16_384
MAX_PROJECT_CHARS = 1024
# A file written this recently may still be growing: imported as it is, not completed.
LIVE_WINDOW_S = 300.0
SETTLED = ("imported", "skipped")  # unchanged on disk since: not read again


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """Where a file ends (`source_import_files.status`) and why."""

    status: str  # imported | skipped | pending | failed
    reason: str | None = None


class HarnessHistoryImporter:
    """An `Importer` over a harness's own session files (see the module docstring)."""

    def __init__(
        self,
        kind: str,
        *,
        root: Callable[[], Path],
        files: Callable[[Path], Iterator[str]],
        reader: history.SessionReader,
        live_window_s: float = LIVE_WINDOW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._kind = kind
        self._root = root
        self._files = files
        self._reader = reader
        self._live_window_s = live_window_s
        self._clock = clock

    @property
    def kind(self) -> str:
        return self._kind

    def default_root(self) -> Path | None:
        return self._root()

    def check_root(self, path: Path, allowed: Sequence[Path]) -> Path:
        if not path.is_dir():
            raise InvalidInput(f"{path} is not a directory", code="path_not_directory")
        return path

    def purge(self, conn: Connection, source: Source, *, dry_run: bool) -> Mapping[str, int]:
        return {}  # everything this kind brings is purged by the shared steps

    def run(self, job: ImportJob) -> None:
        root = Path(job.source.root_path)
        if not root.is_dir():
            raise FileNotFoundError(f"{root} is no longer a directory")
        files = list(self._files(root))
        job.files_total = len(files)
        for relative in files:
            if job.stop.is_set():
                return
            self._file(job, root, relative)
            job.progress()

    # -- one file ---------------------------------------------------------------------------

    def _file(self, job: ImportJob, root: Path, relative: str) -> None:
        try:
            stat = (root / relative).stat()
        except FileNotFoundError:
            return  # vanished between listing and reading
        if not self._inventory(job, relative, stat):
            return
        job.faults.hit("file.inventoried")
        age = self._clock() - stat.st_mtime  # before the copy: a write during it shows too
        staged = self._stage(job, root, relative, stat)
        if staged is None:
            return
        job.faults.hit("file.staged")
        with job.db.write() as conn:
            row = self._file_row(
                conn,
                job,
                relative,
                "importing",
                staged_path=staged.relative,
                content_hash=staged.digest,
                byte_offset=0,
            )
        job.faults.hit("file.recorded")
        session = self._reader(job.workspace / staged.relative, relative)
        job.lines_skipped += session.skipped_lines
        outcome = self._session(job, row, session, staged, age < self._live_window_s)
        if outcome.reason == IN_PROGRESS:
            outcome = FileOutcome("pending", f"{IN_PROGRESS}: written {max(age, 0):.0f} s ago")
        unreadable = session.skipped_lines
        with job.db.write() as conn:
            self._file_row(
                conn,
                job,
                relative,
                outcome.status,
                byte_offset=session.complete_end,
                error=outcome.reason
                or (f"{unreadable} unreadable lines skipped" if unreadable else None),
            )
        job.faults.hit("file.imported")

    def _inventory(self, job: ImportJob, relative: str, stat: os.stat_result) -> bool:
        """Count the file seen; True when it is to be read (new, changed or not settled)."""
        mtime = _iso_ns(stat.st_mtime_ns)
        known = rows.get_file(job.db.reader(), job.source.id, relative)
        if (
            known is not None
            and known.status in SETTLED
            and (known.size_bytes, known.mtime) == (stat.st_size, mtime)
        ):
            with job.db.write() as conn:
                job.count(conn, ImportCounts(files_seen=1))
            return False
        too_large = stat.st_size > MAX_TRANSCRIPT_BYTES
        with job.db.write() as conn:
            self._file_row(
                conn,
                job,
                relative,
                "skipped" if too_large else "pending",
                size_bytes=stat.st_size,
                mtime=mtime,
                error=f"larger than {MAX_TRANSCRIPT_BYTES // 2**20} MB" if too_large else None,
            )
            job.count(conn, ImportCounts(files_seen=1, files_changed=1))
        return not too_large

    def _stage(
        self, job: ImportJob, root: Path, relative: str, stat: os.stat_result
    ) -> Staged | None:
        """The staged copy, or None with the file's row saying why there is none."""
        try:
            staged = stage(
                root / relative,
                relative,
                stat,
                staging_root=job.staging_root,
                workspace=job.workspace,
                roots=job.roots,
            )
        except SignetError as exc:  # outside the caller's roots or a credential store
            with job.db.write() as conn:
                self._file_row(conn, job, relative, "failed", error=f"{exc.code}: {exc}"[:500])
            return None
        if staged is None:
            with job.db.write() as conn:
                self._file_row(
                    conn, job, relative, "pending", error="changed while importing; next run"
                )
        return staged

    @staticmethod
    def _file_row(
        conn: Connection, job: ImportJob, relative: str, status: str, **columns: Any
    ) -> ImportFile:
        return rows.upsert_file(
            conn,
            agent_id=job.source.agent_id,
            source_id=job.source.id,
            relative_path=relative,
            run_id=job.run_id,
            status=status,
            **columns,
        )

    # -- one record (a session) -------------------------------------------------------------

    def _session(
        self,
        job: ImportJob,
        file: ImportFile,
        session: history.HistorySession,
        staged: Staged,
        live: bool,
    ) -> FileOutcome:
        """Import the file's session (or say why not); where the file ends."""
        if session.skip is not None:
            return FileOutcome("skipped", session.skip)
        record_id = session.session_id or f"file:{file.relative_path}"
        try:
            key = scope.check_session_key(session.session_id) if session.session_id else None
        except InvalidInput:
            key = None
        if key is None or not session.turns:
            why = "no conversation turns" if key else "no usable session id"
            self._settle(job, record_id, file, "skipped", why)
            return FileOutcome("skipped", why)
        turns = [t.turn for t in session.turns]
        content = render_content(turns)
        digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
        reader = job.db.reader()
        previous = rows.get_record(reader, job.source.agent_id, job.source.id, key)
        elsewhere = previous.file_id if previous and previous.outcome == "imported" else None
        if elsewhere not in (None, file.id) and self._still_there(job, elsewhere):
            why = "same session as another file"
            self._settle(job, f"file:{file.relative_path}", file, "duplicate", why, key)
            return FileOutcome("skipped", f"duplicate: {why}")
        if previous and previous.outcome == "imported" and previous.content_hash == digest:
            self._unchanged(job, key, file, live)
            return FileOutcome("pending", IN_PROGRESS) if live else FileOutcome("imported")
        refused = self._refusal(job, key)
        if refused is not None:
            outcome, why, status = refused
            self._settle(job, key, file, outcome, why, key)
            return FileOutcome(status, why if outcome == "skipped" else f"{outcome}: {why}")
        existing = transcript_rows.transcript_source(reader, job.source.agent_id, key)
        committed = existing.turn_count if existing else 0
        if len(turns) < committed:
            why = "fewer turns than imported"
            self._settle(job, key, file, "skipped", why, key)
            return FileOutcome("skipped", why)
        self._append_and_finalise(
            job, file, session, staged, key, content, digest, committed, complete=not live
        )
        return FileOutcome("pending", IN_PROGRESS) if live else FileOutcome("imported")

    def _refusal(self, job: ImportJob, key: str) -> tuple[str, str, str] | None:
        """(record outcome, reason, file status) when the agent has this session already or
        live capture holds it open; None when it is this source's to import."""
        reader = job.db.reader()
        agent_id = job.source.agent_id
        live = live_rows.get_session(reader, agent_id, key)
        if live is not None and live.ended_at is None and _recent(live.last_seen_at):
            return "skipped", "open in live capture; next run", "pending"
        existing = transcript_rows.transcript_source(reader, agent_id, key)
        if existing is None or (existing.source_id, existing.source_record_id) == (
            job.source.id,
            key,
        ):
            return None
        why = "captured live" if existing.source_id is None else f"imported by {existing.source_id}"
        return "duplicate", why, "skipped"

    @staticmethod
    def _still_there(job: ImportJob, file_id: str | None) -> bool:
        """Does the file a record was imported from still exist (else it was renamed)?"""
        relative = rows.file_path(job.db.reader(), file_id) if file_id else None
        return relative is not None and (Path(job.source.root_path) / relative).is_file()

    @staticmethod
    def _unchanged(job: ImportJob, key: str, file: ImportFile, live: bool) -> None:
        """The session as imported before (perhaps from the file's old name): completed now
        if it was in progress and is quiet."""
        with job.db.write() as conn:
            rows.move_record(conn, job.source.agent_id, job.source.id, key, file.id)
            if not live:
                transcript_rows.complete_imported_transcript(
                    conn, job.source.agent_id, key, job.source.id
                )
            job.count(conn, ImportCounts(records_seen=1))

    def _append_and_finalise(
        self,
        job: ImportJob,
        file: ImportFile,
        session: history.HistorySession,
        staged: Staged,
        key: str,
        content: str,
        digest: str,
        committed: int,
        *,
        complete: bool,
    ) -> None:
        source, faults = job.source, job.faults
        harness = self._kind
        project = session.project if session.project and len(session.project) <= 1024 else None
        meta = bounded_meta(session, staged, file.relative_path)
        with job.transcripts.exclusive(harness) as canonical:
            with job.db.write() as conn:
                record = rows.begin_record(
                    conn,
                    agent_id=source.agent_id,
                    source_id=source.id,
                    source_record_id=key,
                    file_id=file.id,
                    run_id=job.run_id,
                    session_key=key,
                    content_hash=digest,
                    canonical_path=canonical.relative,
                    canonical_offset=canonical.size(),
                )
            faults.hit("record.pending")
            present = (
                _present_ordinals(canonical, record.canonical_offset, source, key)
                if record.attempts > 1 and record.canonical_offset is not None
                else set()
            )
            fresh = [
                CanonicalTurn(
                    source.agent_id, key, harness, project, ordinal, t.turn, source.id, t.offset
                )
                for ordinal, t in enumerate(session.turns)
                if ordinal >= committed and ordinal not in present
            ]
            if faults.armed("canonical.torn"):
                _write_torn(canonical, fresh)
            faults.hit("canonical.torn")
            size = canonical.append(fresh)
            faults.hit("canonical.appended")
            with job.db.write() as conn:
                transcript_rows.save_imported_transcript(
                    conn,
                    agent_id=source.agent_id,
                    session_key=key,
                    harness=harness,
                    project=project,
                    content=content,
                    turn_count=len(session.turns),
                    content_hash=digest,
                    source_id=source.id,
                    source_record_id=key,
                    source_meta_json=meta,
                    created_at=session.started_at,
                    complete=complete,
                )
                # Recallable the moment the import commits: the turns in the same transaction.
                turn_rows.index_turns(
                    conn,
                    source.agent_id,
                    key,
                    [
                        TurnRow(ordinal, t.turn.role, t.turn.text, t.turn.timestamp)
                        for ordinal, t in enumerate(session.turns)
                    ],
                )
                turn_rows.settle_backfill(conn, source.agent_id, key)
                transcript_rows.set_committed_bytes(conn, canonical.relative, size)
                rows.settle_record(
                    conn,
                    agent_id=source.agent_id,
                    source_id=source.id,
                    source_record_id=key,
                    run_id=job.run_id,
                    outcome="imported",
                    file_id=file.id,
                    session_key=key,
                    content_hash=digest,
                    turn_count=len(session.turns),
                )
                job.count(
                    conn,
                    ImportCounts(
                        records_seen=1,
                        records_imported=1,
                        turns_imported=len(session.turns) - committed,
                    ),
                )
            faults.hit("record.finalised")

    @staticmethod
    def _settle(
        job: ImportJob,
        record_id: str,
        file: ImportFile,
        outcome: str,
        why: str,
        key: str | None = None,
    ) -> str:
        counts = {
            "skipped": ImportCounts(records_seen=1, records_skipped=1),
            "duplicate": ImportCounts(records_seen=1, records_duplicate=1),
            "failed": ImportCounts(records_seen=1, records_failed=1),
        }[outcome]
        with job.db.write() as conn:
            rows.settle_record(
                conn,
                agent_id=job.source.agent_id,
                source_id=job.source.id,
                source_record_id=record_id[:512],
                run_id=job.run_id,
                outcome=outcome,
                file_id=file.id,
                session_key=key,
                error=why,
            )
            job.count(conn, counts)
        return outcome


def claude_code_importer() -> HarnessHistoryImporter:
    return HarnessHistoryImporter(
        "claude-code",
        root=history.claude_code_root,
        files=history.claude_code_files,
        reader=history.read_claude_code_session,
    )


def codex_importer() -> HarnessHistoryImporter:
    return HarnessHistoryImporter(
        "codex",
        root=history.codex_root,
        files=history.codex_files,
        reader=history.read_codex_session,
    )


# -- helpers -------------------------------------------------------------------------------


def bounded_meta(session: history.HistorySession, staged: Staged, relative: str) -> str:
    """`source_meta_json` within its 16 KB: the staged copy, counts, then the harness facts
    (dropped largest first if they would not fit)."""
    meta: dict[str, Any] = {
        "relativePath": relative[:1024],
        "stagedPath": staged.relative[:1024],
        "stagedSha256": staged.digest,
        "stagedBytes": staged.size,
        "lines": session.lines,
        "skippedLines": session.skipped_lines,
        "turns": len(session.turns),
        "parsedBytes": session.complete_end,
        **session.meta,
    }
    text = json.dumps(meta, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    for name in sorted(session.meta, key=lambda n: -len(json.dumps(session.meta[n]))):
        if len(text.encode("utf-8")) <= MAX_META_JSON:
            break
        meta.pop(name, None)
        meta["truncated"] = True
        text = json.dumps(meta, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text


def _present_ordinals(canonical: CanonicalFile, offset: int, source: Source, key: str) -> set[int]:
    """Ordinals of this record's lines a killed attempt already appended (past `offset`)."""
    return {
        line.ordinal
        for line in canonical.tail(offset).turns
        if line.source_id == source.id
        and line.agent_id == source.agent_id
        and line.session_key == key
    }


def _write_torn(canonical: CanonicalFile, turns: Sequence[CanonicalTurn]) -> None:
    """The `canonical.torn` fault: half of the append reaches the disk before the kill."""
    data = "".join(
        json.dumps(t.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n" for t in turns
    ).encode("utf-8")
    canonical.path.parent.mkdir(parents=True, exist_ok=True)
    with canonical.path.open("ab") as handle:
        handle.write(data[: max(1, len(data) // 2 + 7)])
        handle.flush()
        os.fsync(handle.fileno())


def _iso_ns(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="microseconds")


def _recent(last_seen_at: str) -> bool:
    seen = parse_utc(last_seen_at)
    if seen is None:
        return True
    return datetime.now(UTC) - seen < timedelta(seconds=DEFAULT_IDLE_TTL_S)
