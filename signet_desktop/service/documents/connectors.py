"""Connectors: a folder registered as a source, kept in step with document ingest.

`add_folder` registers a `filesystem` connector (path, globs, excludes, watch) in
`connectors`; `sync` scans the folder against the stored cursor (ingest/folder_scan.py) and
turns the differences into document operations through `service.documents`: a new file is
submitted as a `file` document with the connector's id, a changed one has its old document
deleted and the new content submitted, a vanished one has its document deleted. Only files
whose content hash changed are touched; the cursor is saved every `CURSOR_EVERY` operations,
so a sync stopped halfway resumes where it was (a resubmitted file deduplicates by URL).
`remove` deletes every document the connector owns (their chunk memories are forgotten,
then purged by retention after the recovery window) and leaves the row `disabled`; nothing
else is touched, and nothing is ever written into the folder. Watch mode is polling: the
`connectors` worker syncs connectors with `watch: true` every `WATCH_INTERVAL_S`.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from signet_desktop.domain import scope
from signet_desktop.domain.connectors import (
    PROVIDER_FILESYSTEM,
    Connector,
    ConnectorHealth,
    DisconnectReport,
    SyncReport,
)
from signet_desktop.domain.documents import DocumentRequest
from signet_desktop.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from signet_desktop.embedding.priority import lower_current_thread
from signet_desktop.ingest import folder_scan
from signet_desktop.ingest.folder_scan import FileState, ScanRules
from signet_desktop.safety import local_files
from signet_desktop.safety.local_files import FileRoots
from signet_desktop.service.documents.service import DocumentService
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage import connectors as rows
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

CURSOR_EVERY = 200
WATCH_INTERVAL_S = 30.0
WORKER_NAME = "connectors"
MAX_NAME_CHARS = 200
MAX_ERRORS = 20
CHANGE_REASON = "changed in its folder source"
REMOVE_REASON = "removed from its folder source"
DISCONNECT_REASON = "folder source disconnected"


@dataclass(frozen=True, slots=True)
class FolderRequest:
    """`signet source add folder` / POST /api/connectors for a folder."""

    path: str
    name: str | None = None
    globs: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    watch: bool = False


class ConnectorService:
    """Folder connectors for every agent over one database; every call is agent-scoped."""

    def __init__(
        self,
        db: DatabaseHandle,
        documents: DocumentService,
        *,
        roots: FileRoots | None = None,
    ) -> None:
        self._db = db
        self._documents = documents
        self._roots = roots or documents.limits.file_roots
        self._syncing: set[str] = set()
        self._reports: dict[str, SyncReport] = {}
        self._lock = threading.Lock()

    # -- registration ---------------------------------------------------------------------

    def add_folder(self, agent_id: str, request: FolderRequest, *, local: bool = True) -> Connector:
        """Register a folder; InvalidInput (nothing written) for a bad path or pattern,
        Forbidden for a folder outside the roots the caller may read (`local`: the machine's
        own user) or in a credential store, Conflict when the agent already has a live
        connector on that folder. Its syncs read with the same caller's roots."""
        agent_id = scope.check_agent_id(agent_id)
        root = local_files.open_dir(request.path, self._roots.for_caller(local))
        try:
            globs = folder_scan.check_patterns(request.globs, "glob") or folder_scan.DEFAULT_GLOBS
            excludes = folder_scan.check_patterns(request.excludes, "exclude")
        except ValueError as exc:
            raise InvalidInput(str(exc), code="pattern_invalid") from None
        name = (request.name or "").strip() or root.name or str(root)
        if len(name) > MAX_NAME_CHARS:
            raise InvalidInput(f"name is longer than {MAX_NAME_CHARS}", code="name_invalid")
        config = {
            "path": str(root),
            "globs": list(globs),
            "excludes": list(excludes or folder_scan.DEFAULT_EXCLUDES),
            "watch": bool(request.watch),
            "reader": "local" if local else "remote",
        }
        connector_id = f"con_{uuid.uuid4().hex[:16]}"
        with self._db.write() as conn:
            existing = rows.live_on_root(conn, agent_id, PROVIDER_FILESYSTEM, str(root))
            if existing is not None:
                raise Conflict(
                    f"{root} is already connected as {existing}",
                    code="connector_exists",
                    details={"id": existing},
                )
            rows.insert_connector(
                conn,
                connector_id,
                agent_id=agent_id,
                provider=PROVIDER_FILESYSTEM,
                name=name,
                config=config,
            )
        return self.get(agent_id, connector_id)

    def get(self, agent_id: str, connector_id: str) -> Connector:
        """One connector of this agent; NotFound for another agent's or an unknown id."""
        agent_id = scope.check_agent_id(agent_id)
        found = rows.get_connector(self._db.reader(), agent_id, connector_id)
        if found is None:
            raise NotFound(f"connector {connector_id} not found", code="connector_not_found")
        return found

    def list(self, agent_id: str, *, include_disabled: bool = False) -> list[Connector]:
        """The agent's connectors (disconnected ones only when asked)."""
        agent_id = scope.check_agent_id(agent_id)
        return rows.list_connectors(self._db.reader(), agent_id, include_disabled=include_disabled)

    def health(self, agent_id: str, connector_id: str) -> ConnectorHealth:
        """The connector, whether its folder is readable, files in the cursor, documents."""
        connector = self.get(agent_id, connector_id)
        root = Path(str(connector.config.get("path", "")))
        files = len((connector.cursor or {}).get("files", {}) or {})
        states = rows.document_states(self._db.reader(), connector.agent_id, connector.id)
        return ConnectorHealth(
            connector, root.is_dir(), files, states, self.last_report(connector.id)
        )

    # -- sync -----------------------------------------------------------------------------

    def sync(self, agent_id: str, connector_id: str, *, full: bool = False) -> SyncReport:
        """Bring the connector's documents in step with its folder (blocks until done).

        `full` ignores the cursor's (size, mtime) shortcut and re-reads every file; only
        files whose content hash changed are re-ingested either way.
        """
        connector = self._claim(agent_id, connector_id)
        try:
            return self._sync(connector, full=full)
        finally:
            self._release(connector.id)

    def sync_in_background(self, agent_id: str, connector_id: str, *, full: bool = False) -> None:
        """Start a sync on a thread (the HTTP routes); the row says `syncing` before this
        returns, and its outcome lands on the row (and in `last_report`)."""
        connector = self._claim(agent_id, connector_id)
        with self._db.write() as conn:
            rows.set_status(conn, connector.agent_id, connector.id, "syncing")

        def run() -> None:
            lower_current_thread()  # a sync yields the CPU to requests someone waits on
            try:
                self._sync(connector, full=full)
            except Exception:  # recorded on the row by _sync
                log.exception("sync of connector %s failed", connector_id)
            finally:
                self._release(connector.id)

        threading.Thread(target=run, name=f"sync-{connector_id}", daemon=True).start()

    def last_report(self, connector_id: str) -> SyncReport | None:
        """The latest sync of this connector in this process, if any."""
        with self._lock:
            return self._reports.get(connector_id)

    def _claim(self, agent_id: str, connector_id: str) -> Connector:
        connector = self.get(agent_id, connector_id)
        if connector.status == "disabled":
            raise Conflict("the connector was removed", code="connector_disabled")
        with self._lock:
            if connector.id in self._syncing:
                raise Conflict("a sync of this connector is running", code="sync_running")
            self._syncing.add(connector.id)
        return connector

    def _release(self, connector_id: str) -> None:
        with self._lock:
            self._syncing.discard(connector_id)

    def recover(self) -> int:
        """Syncs a stopped process left `syncing` become `error` (start-up)."""
        with self._lock:
            busy = sorted(self._syncing)
        with self._db.write() as conn:
            return rows.interrupt_syncing(conn, busy)

    def sync_watched(self) -> int:
        """One pass of watch mode: sync every connector with `watch: true`; how many synced."""
        synced = 0
        for connector in rows.watched_connectors(self._db.reader()):
            try:
                self.sync(connector.agent_id, connector.id)
                synced += 1
            except Conflict:
                continue
            except Exception:  # recorded on the row; the next pass tries again
                log.exception("watch sync of connector %s failed", connector.id)
        return synced

    def _sync(self, connector: Connector, *, full: bool) -> SyncReport:
        started = time.monotonic()
        with self._db.write() as conn:
            rows.set_status(conn, connector.agent_id, connector.id, "syncing")
        try:
            report = self._apply(connector, full=full)
        except Exception as exc:
            with self._db.write() as conn:
                rows.set_status(
                    conn, connector.agent_id, connector.id, "error", error=str(exc)[:2000]
                )
            raise
        error = "; ".join(report.errors[:3]) or None
        report = replace(report, elapsed_s=time.monotonic() - started)
        with self._lock:  # before the row says idle: a poller that sees idle reads this report
            self._reports[connector.id] = report
        with self._db.write() as conn:
            rows.set_status(
                conn, connector.agent_id, connector.id, "idle", error=error, synced=True
            )
        return report

    def _apply(self, connector: Connector, *, full: bool) -> SyncReport:
        local = _local(connector)
        try:  # checked again at every sync: files.roots may have changed since
            root = local_files.open_dir(
                str(connector.config["path"]), self._roots.for_caller(local)
            )
        except InvalidInput:
            raise InvalidInput(
                f"{connector.config['path']} is not a readable folder", code="folder_missing"
            ) from None
        rules = ScanRules(
            globs=tuple(connector.config.get("globs") or folder_scan.DEFAULT_GLOBS),
            excludes=tuple(connector.config.get("excludes") or ()),
            max_bytes=self._documents.limits.max_content_bytes,
            roots=(root,),  # each file is checked as opened: really inside the folder
        )
        previous = folder_scan.cursor_from_json(connector.cursor)
        # A full sync forgets the (size, mtime) shortcut, so every file is read and hashed.
        base = {p: replace(st, size=-1, mtime_ns=-1) for p, st in previous.items()}
        result = folder_scan.scan(root, rules, base if full else previous)
        found = dict(result.states)
        changed, added, removed = list(result.changed), list(result.added), list(result.removed)
        # Files whose submit failed last time (no document yet) are tried again.
        pending = set(changed) | set(added)
        retried = [p for p, st in found.items() if st.document_id is None and p not in pending]
        added += retried
        # Until a change or removal is applied, the cursor keeps the old state (old hash, old
        # document), so a sync stopped midway redoes it instead of losing the old document.
        states = {**found, **{p: previous[p] for p in (*changed, *removed)}}
        errors: builtins.list[str] = []
        ops = 0
        for path in removed:
            self._drop(connector, previous.get(path), REMOVE_REASON, errors)
            del states[path]
            ops = self._tick(connector, states, ops)
        for path in changed:
            self._drop(connector, previous.get(path), CHANGE_REASON, errors)
            states[path] = self._submit(connector, root, path, found[path], errors, local)
            ops = self._tick(connector, states, ops)
        for path in added:
            states[path] = self._submit(connector, root, path, found[path], errors, local)
            ops = self._tick(connector, states, ops)
        self._save(connector, states)
        failed = sum(1 for s in states.values() if s.document_id is None)
        return SyncReport(
            connector_id=connector.id,
            full=full,
            added=len(added),
            changed=len(changed),
            removed=len(removed),
            unchanged=result.unchanged - len(retried),
            skipped=len(result.skipped),
            failed=failed,
            read_files=result.read_files,
            truncated=result.truncated,
            errors=tuple(errors[:MAX_ERRORS]),
            skipped_reasons=dict(Counter(s.reason for s in result.skipped)),
        )

    def _submit(
        self,
        connector: Connector,
        root: Path,
        relative: str,
        state: FileState,
        errors: builtins.list[str],
        local: bool,
    ) -> FileState:
        request = DocumentRequest(
            source_type="file",
            path=str(root / relative),
            title=relative,
            content_type="text/markdown" if relative.endswith((".md", ".markdown")) else None,
            connector_id=connector.id,
            metadata={"connectorId": connector.id, "relativePath": relative},
        )
        try:
            ticket = self._documents.submit(connector.agent_id, request, local=local)
        except (InvalidInput, Conflict, Forbidden) as exc:
            errors.append(f"{relative}: {exc}")
            return state
        shared = False
        if ticket.deduplicated:
            owner = self._documents.get(connector.agent_id, ticket.id)
            shared = owner.connector_id != connector.id
        return replace(state, document_id=ticket.id, shared=shared)

    def _drop(
        self, connector: Connector, state: FileState | None, reason: str, errors: builtins.list[str]
    ) -> int:
        if state is None or state.document_id is None or state.shared:
            return 0
        try:
            return self._documents.delete(
                connector.agent_id, state.document_id, reason
            ).memories_deleted
        except NotFound:
            return 0  # deleted by hand meanwhile
        except Conflict as exc:
            errors.append(f"{state.document_id}: {exc}")
            return 0

    def _tick(self, connector: Connector, states: Mapping[str, FileState], ops: int) -> int:
        ops += 1
        if ops % CURSOR_EVERY == 0:
            self._save(connector, states)
        return ops

    def _save(self, connector: Connector, states: Mapping[str, FileState]) -> None:
        with self._db.write() as conn:
            rows.set_cursor(conn, connector.agent_id, connector.id, folder_scan.cursor_json(states))

    # -- removal --------------------------------------------------------------------------

    def remove(self, agent_id: str, connector_id: str) -> DisconnectReport:
        """Disconnect: delete the documents the connector owns (and only those), drop its
        cursor, leave the row `disabled`. A second remove is NotFound."""
        connector = self.get(agent_id, connector_id)
        if connector.status == "disabled":
            raise NotFound(f"connector {connector_id} not found", code="connector_not_found")
        with self._lock:
            if connector.id in self._syncing:
                raise Conflict("a sync of this connector is running", code="sync_running")
            self._syncing.add(connector.id)  # no sync may start while the documents go
        try:
            documents = chunks = 0
            ids = rows.live_document_ids(self._db.reader(), connector.agent_id, connector.id)
            for document_id in ids:
                try:
                    outcome = self._documents.delete(
                        connector.agent_id, document_id, DISCONNECT_REASON
                    )
                except NotFound:
                    continue
                documents += 1
                chunks += outcome.memories_deleted
            with self._db.write() as conn:
                rows.disable(conn, connector.agent_id, connector.id)
        finally:
            with self._lock:
                self._syncing.discard(connector.id)
        return DisconnectReport(connector.id, documents, chunks)


def _local(connector: Connector) -> bool:
    """Was the connector registered by the local user? (A row from before the `reader` was
    recorded counts as the local user's.)"""
    return connector.config.get("reader") != "remote"


class ConnectorWatcher:
    """Watch mode by polling: every `interval_s`, sync the connectors that ask for it."""

    def __init__(self, service: ConnectorService, *, interval_s: float = WATCH_INTERVAL_S):
        self._service = service
        self.interval_s = interval_s

    def run_once(self) -> bool:
        return self._service.sync_watched() > 0

    def run_forever(self, stop: threading.Event) -> None:
        self._service.recover()
        while not stop.wait(self.interval_s):
            try:
                self.run_once()
            except Exception:  # a failed pass is retried next interval
                log.exception("connector watch pass failed")

    def release_leases(self) -> int:
        return 0  # holds no job leases


def declaration(watcher: ConnectorWatcher) -> WorkerDeclaration:
    return WorkerDeclaration(name=WORKER_NAME, job_types=(), factory=lambda: watcher)
