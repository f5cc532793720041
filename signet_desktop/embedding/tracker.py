"""The embedding tracker: keeps the configured generation covering every live memory.

Queued `embedding_backfill` jobs (memories saved while the embedder was down) go through the
generic queue worker (`queue/worker.py`) with `embed_job` as the handler, one job each. When
none is queued, `idle_step()` embeds a batch of live memories that have no current vector in
the target generation (new model, gaps, changed content), scanning newest first with a cursor
so a full pass costs one walk over the table, and activates a `building` generation once it
covers every live memory (the previous one is retired). Provider calls happen outside any
write transaction; each result is written in one short transaction. `run_once()` does both
in one bounded step (the `signet embed backfill` path and the tests).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from signet_desktop.domain.events import EventSink
from signet_desktop.embedding.generations import Generation, activate_generation, get_generation
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import (
    EmbeddingError,
    EmbeddingProvider,
    EmbeddingUnavailable,
)
from signet_desktop.embedding.vectors import (
    HAS_CURRENT_VECTOR,
    PendingVector,
    VectorWrite,
    embed_writes,
)
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import (
    IdleStep,
    Outcome,
    QueueWorker,
    WorkerSettings,
    current_stop,
    run_interruptibly,
    stopping,
)
from signet_desktop.storage import counters, memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)

BACKFILL_JOB = "embedding_backfill"
COVERAGE_TTL_S = 10.0
MAX_ITEM_FAILURES = 3
SEQ_MAX = 2**63 - 1

MISSING_BATCH = f"""
SELECT m.seq AS seq, m.id AS id, m.agent_id AS agent_id, m.content AS content,
       m.content_hash AS content_hash
FROM memories m
WHERE m.is_deleted = 0 AND m.seq < :cursor
  AND NOT {HAS_CURRENT_VECTOR}
ORDER BY m.seq DESC
LIMIT :limit
"""

MEMORIES_FOR_JOBS = f"""
SELECT m.id AS id, m.agent_id AS agent_id, m.content AS content, m.content_hash AS content_hash,
       m.is_deleted AS is_deleted,
       {HAS_CURRENT_VECTOR} AS embedded
FROM memories m
WHERE m.id IN (SELECT value FROM json_each(:ids))
"""
MEMORIES_FOR_JOBS_PG = postgres_twin(MEMORIES_FOR_JOBS)


def memories_for_jobs(conn: Connection) -> str:
    """MEMORIES_FOR_JOBS in the connection's dialect."""
    return MEMORIES_FOR_JOBS_PG if is_postgres(conn) else MEMORIES_FOR_JOBS


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many live memories have a current vector in a generation."""

    generation_id: int
    status: str
    total: int
    embedded: int

    @property
    def missing(self) -> int:
        return self.total - self.embedded

    @property
    def ratio(self) -> float:
        return 1.0 if self.total == 0 else self.embedded / self.total


@dataclass(frozen=True, slots=True)
class StepResult:
    """What one tracker step did."""

    kind: str  # jobs | scan | activate | idle
    embedded: int = 0
    skipped: int = 0
    failed: int = 0
    error: str | None = None
    unavailable: bool = False  # the embedder itself is down: back off

    @property
    def did_work(self) -> bool:
        return self.kind != "idle" and not self.unavailable


def _pending(row: Any) -> PendingVector:
    """A memory row (id, agent_id, content, content_hash) as the text to embed."""
    return PendingVector(
        str(row["id"]), str(row["agent_id"]), str(row["content"]), str(row["content_hash"])
    )


class EmbeddingTracker:
    """Backfills and migrates the vectors of one embedder's generation."""

    def __init__(
        self,
        db: DatabaseHandle,
        index: VectorIndex,
        embedder: EmbeddingProvider,
        *,
        batch_size: int = 8,
        lease_ms: int = jobs.DEFAULT_LEASE_MS,
        events: EventSink | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._db = db
        self._index = index
        self.embedder = embedder
        self._batch_size = batch_size
        self._lease_ms = lease_ms
        self._generation: Generation | None = None
        self._cursor: int | None = None
        self._failures: dict[str, int] = {}
        self._coverage: tuple[float, Coverage] | None = None
        self._lock = threading.Lock()  # one scan step at a time (worker and backfill route)
        self._jobs = self.job_worker(events=events)

    def start(self) -> Generation:
        """Register the embedder's generation (and its mirror table); idempotent."""
        if self._generation is None:
            self._generation = self._index.ensure_generation(
                provider=self.embedder.name,
                model=self.embedder.model,
                dimensions=self.embedder.dimensions,
            )
        return self._generation

    @property
    def generation(self) -> Generation:
        """The target generation with its current status."""
        generation_id = self.start().id
        current = get_generation(self._db.reader(), generation_id)
        return current or self.start()

    def run_once(self, max_items: int | None = None) -> StepResult:
        """One bounded step (at most `max_items` memories): queued jobs, else `idle_step()`."""
        size = self._batch_size if max_items is None else max(1, min(self._batch_size, max_items))
        result = self._process_jobs(size)
        if result.kind == "idle":
            result = self.idle_step(size)
        return result

    def idle_step(self, max_items: int | None = None) -> StepResult:
        """With no job queued: a scan batch of memories without a vector, else activation."""
        size = self._batch_size if max_items is None else max(1, min(self._batch_size, max_items))
        with self._lock:
            result = self._scan_batch(size)
            if result.kind == "idle" and self._maybe_activate():
                result = StepResult("activate")
            if result.embedded:
                self._coverage = None
            return result

    def job_worker(
        self,
        *,
        name: str = "embedding",
        settings: WorkerSettings | None = None,
        events: EventSink | None = None,
        idle: Callable[[], IdleStep] | None = None,
    ) -> QueueWorker:
        """A queue worker over this tracker's `embedding_backfill` jobs (`embed_job` each)."""
        return QueueWorker(
            self._db,
            name=name,
            job_types=(BACKFILL_JOB,),
            handler=self.embed_job,
            events=events,
            settings=replace(settings or WorkerSettings(), lease_ms=self._lease_ms),
            idle=idle,
            unavailable=(EmbeddingUnavailable,),
        )

    def embed_job(self, job: jobs.Job) -> dict[str, Any]:
        """The handler of one `embedding_backfill` job: embed its memory unless moot.

        A memory that is gone, deleted or already embedded completes the job without a
        provider call. Raises `EmbeddingError` (the queue worker retries the job).
        """
        generation = self.start()
        row = None
        if job.memory_id:
            reader = self._db.reader()
            row = reader.execute(
                memories_for_jobs(reader),
                {"generation_id": generation.id, "ids": json.dumps([job.memory_id])},
            ).fetchone()
        if row is None or row["is_deleted"] or row["embedded"]:
            return {"embedded": False, "generation": generation.id}
        writes = self._embed([_pending(row)])
        with self._db.write() as conn:
            self._write(conn, generation, writes)
        self._coverage = None
        return {"embedded": True, "generation": generation.id}

    def backfill(self, limit: int) -> StepResult:
        """Embed at most `limit` missing vectors now (the `signet embed backfill` path)."""
        embedded = skipped = failed = 0
        while embedded + skipped + failed < limit:
            step = self.run_once(max_items=limit - embedded - skipped - failed)
            embedded, skipped, failed = (
                embedded + step.embedded,
                skipped + step.skipped,
                failed + step.failed,
            )
            if not step.did_work or step.kind == "activate":
                return StepResult("backfill", embedded, skipped, failed, step.error)
        return StepResult("backfill", embedded, skipped, failed)

    def coverage(self, *, fresh: bool = False) -> Coverage:
        """Live memories with a current vector in the target generation (cached briefly)."""
        cached = self._coverage
        if cached and not fresh and time.monotonic() - cached[0] < COVERAGE_TTL_S:
            return cached[1]
        generation = self.generation
        # The database's maintained counters (storage/counters.py), not a pass over memories.
        conn = self._db.reader()
        total = counters.all_counts(conn).live
        embedded = counters.generation_embedded(conn, generation.id)
        value = Coverage(generation.id, generation.status, total, embedded)
        self._coverage = (time.monotonic(), value)
        return value

    def release_stale_leases(self) -> jobs.ReleaseReport:
        """Return backfill jobs whose worker died mid-lease to the queue."""
        with self._db.write() as conn:
            return jobs.release_stale(conn, job_type=BACKFILL_JOB)

    # -- steps ----------------------------------------------------------------------------

    def _process_jobs(self, size: int) -> StepResult:
        """Up to `size` queued jobs through the queue worker; stops when the embedder is down."""
        embedded = skipped = failed = 0
        last: Outcome | None = None
        for _ in range(size):
            if stopping():  # the worker is stopping: leave the rest queued
                break
            outcome = self._jobs.run_job(current_stop())
            if outcome is None:
                break
            last = outcome
            if outcome.status == "completed":
                done = bool(outcome.result and outcome.result.get("embedded"))
                embedded, skipped = embedded + done, skipped + (not done)
            elif outcome.status in ("pending", "dead"):
                failed += 1
            if outcome.unavailable:
                break
        if last is None:
            return StepResult("idle")
        error = last.error if failed else None
        return StepResult("jobs", embedded, skipped, failed, error, last.unavailable)

    def _scan_batch(self, size: int) -> StepResult:
        generation = self.start()
        if self._cursor is None and self._nothing_missing(generation):
            return StepResult("idle")
        rows = (
            self._db.reader()
            .execute(
                MISSING_BATCH,
                {
                    "generation_id": generation.id,
                    # A plain bound (no OR) lets SQLite seek straight to the cursor by rowid.
                    "cursor": self._cursor if self._cursor is not None else SEQ_MAX,
                    "limit": size,
                },
            )
            .fetchall()
        )
        items = [
            _pending(r) for r in rows if self._failures.get(str(r["id"]), 0) < MAX_ITEM_FAILURES
        ]
        self._advance_cursor([int(r["seq"]) for r in rows], size)
        if not rows:
            return StepResult("idle")
        if not items:
            return StepResult("scan", skipped=len(rows))
        try:
            writes = self._embed(items)
        except EmbeddingUnavailable as exc:
            self._cursor = None  # retry the same memories once the embedder is back
            return StepResult("scan", failed=len(items), error=str(exc), unavailable=True)
        except EmbeddingError:
            writes = self._embed_one_by_one(items)
        with self._db.write() as conn:
            self._write(conn, generation, writes)
        return StepResult("scan", embedded=len(writes), failed=len(items) - len(writes), skipped=0)

    def _nothing_missing(self, generation: Generation) -> bool:
        """Every live memory has its current vector: the counters say so without a pass.

        Without this, an idle worker walked every memory row (content and all) each few
        seconds to find nothing; at 100k memories that held ~600 MB of the file mapped.
        """
        conn = self._db.reader()
        live = counters.all_counts(conn).live
        return counters.generation_embedded(conn, generation.id) >= live

    def _advance_cursor(self, seqs: Sequence[int], size: int) -> None:
        if len(seqs) < size:
            # End of a pass: start the next from the newest row. An empty pass means done.
            self._cursor = None
        else:
            self._cursor = min(seqs)

    def _embed(self, items: Sequence[PendingVector]) -> list[VectorWrite]:
        """Vectors for `items` (one provider call); validated before anything is written.

        On a stopping queue worker the call is left to end on its own (`run_interruptibly`):
        nothing of it is written, and the memories are found missing again later."""
        if not items:
            return []
        return run_interruptibly(
            lambda: embed_writes(self.embedder, self.embedder.dimensions, items)
        )

    def _embed_one_by_one(self, items: Sequence[PendingVector]) -> list[VectorWrite]:
        writes: list[VectorWrite] = []
        for item in items:
            try:
                writes.extend(self._embed([item]))
            except EmbeddingError as exc:
                self._failures[item.memory_id] = self._failures.get(item.memory_id, 0) + 1
                log.warning("cannot embed memory %s: %s", item.memory_id, exc)
        return writes

    def _write(self, conn: Any, generation: Generation, writes: Sequence[VectorWrite]) -> None:
        if not writes:
            return
        self._index.store(conn, generation, writes)
        memories.set_embedding_model(conn, [w.source_id for w in writes], generation.model)

    def _maybe_activate(self) -> bool:
        generation = self.generation
        if generation.status != "building":
            return False
        stuck = sum(1 for count in self._failures.values() if count >= MAX_ITEM_FAILURES)
        if self.coverage(fresh=True).missing > stuck:
            return False
        with self._db.write() as conn:
            activate_generation(conn, generation.id)
        self._coverage = None
        log.info("embedding generation %s (%s) is now active", generation.id, generation.model)
        return True
