"""The artifacts capability: canonical Markdown history of sessions, and its rebuildable index.

Files first, then the row: an artifact is written atomically (temp file + rename) as an
immutable file under `memory/`, then indexed in `memory_artifacts` in one short transaction.
A crash between the two leaves a file the next `reindex` adopts. `reindex` rebuilds the
index from the files alone (rows for vanished files go, tombstoned sessions stay out);
`remove_session` tombstones a session first and then deletes its files, so a file that
survives (a failed unlink, a restore from backup) never comes back.

Transcript artifacts are written once a session's transcript is complete (session end,
recovery, TTL), from its `session_transcripts` row; `captured_at` is the row's last capture,
so writing the same state twice names the same file and writes nothing. More turns after
completion make a new file (the old one stays: artifacts are immutable). Compaction
artifacts are written by the hooks when compaction-complete stores a summary.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from signet_desktop.domain import scope
from signet_desktop.domain.artifacts import (
    Artifact,
    ArtifactMeta,
    ArtifactWritten,
    ReindexReport,
    RemovedSession,
    session_token,
)
from signet_desktop.domain.errors import InvalidInput, NotFound
from signet_desktop.domain.events import DiscardEvents, EventSink
from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.sessions import normalize_harness
from signet_desktop.evidence import artifacts as files
from signet_desktop.service.transcripts.service import TranscriptService
from signet_desktop.storage import artifacts as rows
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

SENTENCE_CHARS = 200
MAX_NAME_BUMPS = 1000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_SPEAKER = re.compile(r"^(?:User|Assistant):\s*")


def first_sentence(text: str) -> str | None:
    """The first sentence of `text` on one line (at most 200 characters), None if blank."""
    flat = _SPEAKER.sub("", " ".join(text.split()))
    if not flat:
        return None
    cut = _SENTENCE_END.search(flat)
    sentence = flat[: cut.start()] if cut else flat
    if len(sentence) > SENTENCE_CHARS:
        sentence = sentence[: SENTENCE_CHARS - 1].rstrip() + "…"
    return sentence


def _later_by_a_millisecond(iso: str) -> str:
    moment = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    moment += timedelta(milliseconds=1)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ArtifactService:
    """Write, index, re-index and remove Markdown artifacts under `<workspace>/memory/`."""

    def __init__(
        self,
        db: DatabaseHandle,
        workspace: Path,
        transcripts: TranscriptService,
        *,
        events: EventSink | None = None,
    ) -> None:
        self._db = db
        self._root = workspace
        self._dir = workspace / "memory"
        self._transcripts = transcripts
        self._events = events or DiscardEvents()
        self._lock = threading.Lock()  # the daemon is the artifacts' only writer

    @property
    def directory(self) -> Path:
        return self._dir

    # -- writing ---------------------------------------------------------------------------

    def write_transcript(self, agent_id: str, session_key: str) -> Artifact | None:
        """The transcript artifact of a completed session (None: open, imported, removed or
        unknown)."""
        scope.check_agent_id(agent_id)
        try:
            row = self._transcripts.get(agent_id, session_key)
        except NotFound:
            return None
        if row.completed_at is None or row.source_id is not None:
            return None  # open, or imported (its source owns that evidence)
        latest = rows.latest_of_session(self._db.reader(), agent_id, row.session_key, "transcript")
        if latest is not None and latest.meta.captured_at >= row.updated_at:
            return latest
        meta = ArtifactMeta(
            kind="transcript",
            agent_id=agent_id,
            session_key=row.session_key,
            session_token=session_token(agent_id, row.session_key),
            captured_at=row.updated_at,
            harness=row.harness,
            project=row.project,
            started_at=row.created_at,
            ended_at=row.completed_at,
            memory_sentence=first_sentence(row.content),
        )
        return self._write(meta, row.content)

    def write_compaction(
        self,
        agent_id: str,
        session_key: str,
        summary: str,
        *,
        harness: str | None = None,
        project: str | None = None,
        kind: str = "compaction",
    ) -> Artifact | None:
        """A compaction (or session) summary as an artifact; None when the session was removed."""
        scope.check_agent_id(agent_id)
        key = scope.check_session_key(session_key)
        if not key or not isinstance(summary, str) or not summary.strip():
            raise InvalidInput("a session key and a summary are required", code="summary_required")
        if kind not in ("compaction", "summary"):
            raise InvalidInput("kind must be compaction or summary", code="artifact_kind_invalid")
        latest = rows.latest_of_session(self._db.reader(), agent_id, key, kind)
        if latest is not None and latest.content == summary.strip():
            return latest  # a retried hook: the same summary is not written twice
        meta = ArtifactMeta(
            kind="compaction" if kind == "compaction" else "summary",
            agent_id=agent_id,
            session_key=key,
            session_token=session_token(agent_id, key),
            captured_at=utc_now(),
            harness=None if harness is None else normalize_harness(harness),
            project=project,
            memory_sentence=first_sentence(summary),
        )
        return self._write(meta, summary)

    def _write(self, meta: ArtifactMeta, body: str) -> Artifact | None:
        """File first (atomic, never over another file), then the index row."""
        body = body.strip()
        with self._lock:
            if (meta.agent_id, meta.session_token) in rows.tombstoned(
                self._db.reader(), meta.agent_id
            ):
                return None
            self._dir.mkdir(parents=True, exist_ok=True)
            for _ in range(MAX_NAME_BUMPS):
                data = files.render(meta, body).encode("utf-8")
                path = self._dir / files.file_name(meta)
                if not path.exists():
                    files.write_atomic(path, data)
                    break
                if path.read_bytes() == data:
                    break  # written before (a retry): index it again, write nothing
                # Same session, kind and millisecond, other text: the next free name.
                meta = replace(meta, captured_at=_later_by_a_millisecond(meta.captured_at))
            else:
                raise RuntimeError(f"no free artifact name for {meta.session_token}")
            artifact = Artifact(meta, self._relative(path), _sha256(data), body)
            with self._db.write() as conn:
                rows.upsert_artifact(conn, artifact, _mtime(path))
        self._events.publish(
            ArtifactWritten(
                agent_id=meta.agent_id,
                session_key=meta.session_key,
                artifact_kind=meta.kind,
                path=artifact.source_path,
            )
        )
        return artifact

    def write_pending_transcripts(self) -> int:
        """Artifacts for every completed transcript that has none for its last capture."""
        written = 0
        for agent_id, key in rows.transcripts_without_artifact(self._db.reader()):
            try:
                if self.write_transcript(agent_id, key) is not None:
                    written += 1
            except (OSError, ValueError):
                log.exception("transcript artifact for a session of %s failed", agent_id)
        return written

    # -- index -----------------------------------------------------------------------------

    def indexed(self, agent_id: str) -> list[Artifact]:
        """The agent's indexed artifacts, oldest first."""
        scope.check_agent_id(agent_id)
        return rows.list_artifacts(self._db.reader(), agent_id)

    def reindex(self, agent_id: str | None = None) -> ReindexReport:
        """Rebuild the index of one agent (or all) from the files under `memory/`."""
        if agent_id is not None:
            scope.check_agent_id(agent_id)
        with self._lock:
            self._sweep_temps()
            graves = rows.tombstoned(self._db.reader(), agent_id)
            found: list[tuple[Artifact, str | None]] = []
            unreadable = skipped = 0
            for path in sorted(self._dir.glob("*.md")) if self._dir.is_dir() else []:
                name = files.FILE_NAME.match(path.name)
                if name is None:
                    continue  # MEMORY.backup-*.md and other files of the directory
                artifact = self._read(path, name)
                if artifact is None:
                    unreadable += 1
                elif agent_id is None or artifact.meta.agent_id == agent_id:
                    if (artifact.meta.agent_id, artifact.meta.session_token) in graves:
                        skipped += 1
                    else:
                        found.append((artifact, _mtime(path)))
            with self._db.write() as conn:
                before = rows.indexed_paths(conn, agent_id)
                changed = sum(rows.upsert_artifact(conn, a, mtime) for a, mtime in found)
                seen = {a.source_path for a, _ in found}
                removed = rows.delete_rows(conn, agent_id, [p for p in before if p not in seen])
        return ReindexReport(changed, removed, skipped, unreadable)

    def _sweep_temps(self) -> None:
        """Temp files a killed write left (`.<name>.<random>.tmp`); under the lock no write
        of ours is in flight, so every one is stale."""
        for temp in self._dir.glob(".*.md.*.tmp") if self._dir.is_dir() else []:
            if not files.FILE_NAME.match(temp.name[1:].rsplit(".", 2)[0]):
                continue  # not an artifact's (MEMORY.md backups have their own writer)
            with contextlib.suppress(OSError):
                temp.unlink()
                log.info("removed %s, left by an interrupted artifact write", temp.name)

    def _read(self, path: Path, name: re.Match[str]) -> Artifact | None:
        try:
            data = path.read_bytes()
            meta, body = files.parse(data.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("artifact %s is unreadable: %s", path.name, exc)
            return None
        if meta.session_token != name["token"] or meta.kind != name["kind"]:
            log.warning("artifact %s: its frontmatter disagrees with its name", path.name)
            return None
        return Artifact(meta, self._relative(path), _sha256(data), body)

    def remove_session(self, agent_id: str, session_key: str, reason: str) -> RemovedSession:
        """Tombstone a session, drop its rows, then delete its files (they never return)."""
        scope.check_agent_id(agent_id)
        key = scope.check_session_key(session_key)
        if not key:
            raise InvalidInput("sessionKey is required", code="session_required")
        token = session_token(agent_id, key)
        with self._lock:
            on_disk = sorted(self._dir.glob(f"*--{token}--*.md")) if self._dir.is_dir() else []
            paths = sorted(
                {*rows.session_paths(self._db.reader(), agent_id, token)}
                | {self._relative(p) for p in on_disk}
            )
            with self._db.write() as conn:
                rows.add_tombstone(conn, agent_id, token, reason or "removed", paths)
                count = rows.delete_session(conn, agent_id, token)
            deleted = []
            for relative in paths:
                try:
                    (self._root / relative).unlink()
                    deleted.append(relative)
                except FileNotFoundError:
                    pass
                except OSError:
                    log.warning("artifact %s stays on disk (tombstoned)", relative)
        return RemovedSession(token, count, tuple(deleted))

    def _relative(self, path: Path) -> str:
        return path.relative_to(self._root).as_posix()


def _mtime(path: Path) -> str | None:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return None
    moment = datetime.fromtimestamp(stamp, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
