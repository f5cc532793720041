"""Search telemetry: the opt-in, local-only ledger of what recall answered (`search.telemetry`).

Off by default. When on, `RecallService.search` hands every answer to `observe`, which only
queues it (a bounded queue; a full queue drops the record and counts it): a writer thread
stores queued records in small batches, so recall never waits for a write. Records hold the
query, method, timing and the ranked ids with scores and channels — never memory content.
Reads need the analytics permission (agent callers are refused) and stay within one agent's
scope, and a project's when asked. The ledger is bounded by age and by rows per agent.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from datetime import UTC, datetime, timedelta

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.memory import Actor, utc_now
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.domain.telemetry import (
    SearchRecord,
    SearchResultEntry,
    check_analytics,
)
from signet_desktop.storage import search_telemetry
from signet_desktop.storage.handle import DatabaseHandle

logger = logging.getLogger(__name__)

QUEUE_BOUND = 1_000
BATCH = 100
MAX_HISTORY_LIMIT = 200
PRUNE_EVERY = 500  # records written between two prunes


class SearchTelemetry:
    """Records recalls when enabled; answers history reads for people, never for agents."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        enabled: bool = False,
        retention_days: int = 30,
        max_rows_per_agent: int = 10_000,
    ) -> None:
        self._db = db
        self.enabled = enabled
        self._retention = timedelta(days=retention_days)
        self._keep = max_rows_per_agent
        self._queue: queue.Queue[SearchRecord | None] = queue.Queue(QUEUE_BOUND)
        self._since_prune = 0
        self._agents: set[str] = set()
        self.dropped = 0
        self._writer: threading.Thread | None = None
        if enabled:
            self._writer = threading.Thread(
                target=self._write_loop, name="search-telemetry", daemon=True
            )
            self._writer.start()

    def observe(self, query: RecallQuery, result: RecallResult) -> None:
        """Queue one answer for the ledger (nothing when disabled; never blocks)."""
        if not self.enabled:
            return
        record = SearchRecord(
            id=str(uuid.uuid4()),
            agent_id=query.agent_id,
            project=query.filters.project,
            query=" ".join(query.query.split()),
            keyword_query=query.keyword_query,
            method=result.method,
            result_count=len(result.hits),
            total_ms=result.total_ms,
            results=tuple(SearchResultEntry(h.memory.id, h.score, h.source) for h in result.hits),
            created_at=utc_now(),
        )
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1

    def history(
        self,
        actor: Actor,
        agent_id: str,
        *,
        project: str | None = None,
        query: str | None = None,
        limit: int = 50,
    ) -> list[SearchRecord]:
        """Recorded recalls of `agent_id`, newest first (Forbidden for agent callers)."""
        check_analytics(actor)
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= MAX_HISTORY_LIMIT:
            raise InvalidInput(f"limit must be between 1 and {MAX_HISTORY_LIMIT}", code="bad_limit")
        self.flush()
        return search_telemetry.list_records(
            self._db.reader(), agent_id, project=project, query=query, limit=limit
        )

    def clear(self, actor: Actor, agent_id: str) -> int:
        """Forget one agent's recorded recalls (Forbidden for agent callers); rows removed."""
        check_analytics(actor)
        scope.check_agent_id(agent_id)
        self.flush()
        with self._db.write() as conn:
            return search_telemetry.clear(conn, agent_id)

    def flush(self, timeout_s: float = 5.0) -> None:
        """Wait until every record queued so far is stored (for reads and tests)."""
        if self._writer is None:
            return
        done = threading.Event()

        def wait() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=wait, name="search-telemetry-flush", daemon=True).start()
        done.wait(timeout_s)

    def close(self) -> None:
        """Store what is queued and stop the writer."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join(5)
            self._writer = None

    def _write_loop(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first]
            while len(batch) < BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            records = [r for r in batch if r is not None]
            try:
                if records:
                    self._store(records)
            except Exception:  # a lost ledger row must never take recall down
                logger.exception("search telemetry: %d records not stored", len(records))
            finally:
                for _ in batch:
                    self._queue.task_done()
            if None in batch:
                return

    def _store(self, records: list[SearchRecord]) -> None:
        self._agents.update(r.agent_id for r in records)
        self._since_prune += len(records)
        with self._db.write() as conn:
            search_telemetry.insert_records(conn, records)
            if self._since_prune >= PRUNE_EVERY:
                self._since_prune = 0
                moment = datetime.now(UTC) - self._retention
                cutoff = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
                search_telemetry.prune(
                    conn, cutoff=cutoff, agent_ids=sorted(self._agents), keep=self._keep
                )
