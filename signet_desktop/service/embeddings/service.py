"""Embedding operations behind the facade: status, audit, backfill and mirror resync.

These back `GET /api/embeddings/status` (`signet embed audit`), `POST /api/embeddings/backfill`
(`signet embed backfill`), `POST /api/repair/resync-vec` (`signet repair resync-vec`) and the
`embedding` block of `/api/status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import Generation, list_generations
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.embedding.tracker import BACKFILL_JOB, Coverage, EmbeddingTracker
from signet_desktop.embedding.vectors import ResyncReport
from signet_desktop.queue import jobs
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.embeddings.worker import EmbeddingWorker
from signet_desktop.storage.handle import DatabaseHandle

MAX_BACKFILL = 10_000
DEFAULT_BACKFILL = 500


@dataclass(frozen=True, slots=True)
class EmbeddingParts:
    """The wired vector pieces; all None but `index` when no embedder is configured."""

    index: VectorIndex
    embedder: EmbeddingProvider | None = None
    tracker: EmbeddingTracker | None = None
    vectors: EmbeddingVectors | None = None
    worker: EmbeddingWorker | None = None
    fallback_window: int = 10_000


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """The configured embedder and how far its generation covers the live memories.

    `vector_search`: complete (sqlite-vec), recent-window (bounded scan) or unavailable.
    """

    provider: str
    model: str | None
    dimensions: int | None
    coverage: Coverage | None
    vector_search: str


@dataclass(frozen=True, slots=True)
class MirrorHealth:
    """Whether the vec0 mirror is in use, and how far it is out of step (None: not checked)."""

    enabled: bool
    error: str | None
    missing: int | None = None
    orphans: int | None = None


@dataclass(frozen=True, slots=True)
class GenerationVectors:
    """A generation and how many canonical vectors it holds."""

    generation: Generation
    vectors: int


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """The embedding worker's last step, as the audit shows it."""

    last_error: str | None
    last_step: str | None


@dataclass(frozen=True, slots=True)
class EmbeddingAudit:
    """`signet embed audit`: every generation, fresh coverage, mirror health, queued jobs."""

    status: EmbeddingStatus
    generations: tuple[GenerationVectors, ...]
    mirror: MirrorHealth
    fallback_window: int
    jobs: Mapping[str, int]
    worker: WorkerReport | None


@dataclass(frozen=True, slots=True)
class BackfillOutcome:
    """What `signet embed backfill` found (dry run) or did."""

    dry_run: bool
    generation: int
    missing_before: int
    embedded: int = 0
    skipped: int = 0
    failed: int = 0
    error: str | None = None
    coverage: Coverage | None = None


class EmbeddingOps:
    """Read and repair the vector side of one workspace."""

    def __init__(self, db: DatabaseHandle, parts: EmbeddingParts) -> None:
        self._db = db
        self.parts = parts

    def status(self) -> EmbeddingStatus:
        """The `embedding` block of /api/status (coverage cached for a few seconds)."""
        embedder, tracker = self.parts.embedder, self.parts.tracker
        if embedder is None or tracker is None:
            return EmbeddingStatus("none", None, None, None, "unavailable")
        coverage = tracker.coverage()
        return EmbeddingStatus(
            embedder.name,
            embedder.model,
            embedder.dimensions,
            coverage,
            self._vector_search(coverage.status),
        )

    def audit(self) -> EmbeddingAudit:
        """Every generation with its vector count, coverage, mirror health and queued jobs."""
        conn = self._db.reader()
        generations = tuple(
            GenerationVectors(generation, vectors.canonical_count(conn, generation))
            for generation in list_generations(conn)
        )
        status = self.status()
        if self.parts.tracker is not None:
            status = replace(status, coverage=self.parts.tracker.coverage(fresh=True))
        worker = self.parts.worker
        return EmbeddingAudit(
            status=status,
            generations=generations,
            mirror=self._mirror(),
            fallback_window=self.parts.fallback_window,
            jobs=jobs.counts(conn, BACKFILL_JOB),
            worker=None
            if worker is None
            else WorkerReport(
                worker.last_error, None if worker.last_step is None else worker.last_step.kind
            ),
        )

    def backfill(self, *, limit: int = DEFAULT_BACKFILL, dry_run: bool = False) -> BackfillOutcome:
        """Embed up to `limit` missing vectors now; a dry run only counts them."""
        if not 1 <= limit <= MAX_BACKFILL:
            raise InvalidInput(f"limit must be 1..{MAX_BACKFILL}", code="bad_limit")
        tracker = self._require_tracker()
        generation = tracker.generation
        missing = vectors.missing_count(self._db.reader(), generation.id)
        if dry_run:
            return BackfillOutcome(True, generation.id, missing)
        step = tracker.backfill(limit)
        if step.error and not step.embedded:
            raise Unavailable(f"embedder unavailable: {step.error}", code="embedder_unavailable")
        return BackfillOutcome(
            dry_run=False,
            generation=generation.id,
            missing_before=missing,
            embedded=step.embedded,
            skipped=step.skipped,
            failed=step.failed,
            error=step.error,
            coverage=tracker.coverage(fresh=True),
        )

    def resync(
        self, *, generation: int | None = None, full: bool = False, dry_run: bool = False
    ) -> ResyncReport:
        """Rebuild the vec0 mirror from canonical vectors (incremental unless `full`)."""
        target = generation
        if target is None and self.parts.tracker is not None:
            target = self.parts.tracker.generation.id
        return self.parts.index.resync(target, full=full, dry_run=dry_run)

    def close(self) -> None:
        """Release the remember-path embedding pool and the embedder's resources."""
        if self.parts.vectors is not None:
            self.parts.vectors.close()
        closer = getattr(self.parts.embedder, "close", None)  # optional on providers
        if callable(closer):
            closer()

    def _require_tracker(self) -> EmbeddingTracker:
        if self.parts.tracker is None:
            raise Unavailable(
                "no embedder is configured (embedding.provider: none)", code="no_embedder"
            )
        return self.parts.tracker

    def _vector_search(self, status: str) -> str:
        if status != "active":
            return "unavailable"
        return "complete" if self.parts.index.mirror_enabled else "recent-window"

    def _mirror(self) -> MirrorHealth:
        index, tracker = self.parts.index, self.parts.tracker
        error = None if index.mirror_enabled else self._db.vec.error
        if tracker is not None and index.mirror_enabled:
            missing, orphans = index.mirror_gap(tracker.generation)
            return MirrorHealth(index.mirror_enabled, error, missing, orphans)
        return MirrorHealth(index.mirror_enabled, error)
