"""Embedding operations behind the facade: status, audit, backfill and mirror resync.

These back `GET /api/embeddings/status` (`signet embed audit`), `POST /api/embeddings/backfill`
(`signet embed backfill`), `POST /api/repair/resync-vec` (`signet repair resync-vec`) and the
`embedding` block of `/api/status`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.errors import InvalidInput, Unavailable
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import list_generations
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.embedding.tracker import BACKFILL_JOB, EmbeddingTracker
from signet_desktop.queue import jobs
from signet_desktop.service.embedding_worker import EmbeddingWorker
from signet_desktop.service.vectors import EmbeddingVectors
from signet_desktop.storage.database import Database

MAX_BACKFILL = 10_000
DEFAULT_BACKFILL = 500

MISSING_COUNT = """
SELECT COUNT(*) FROM memories m
WHERE m.is_deleted = 0 AND NOT EXISTS (
    SELECT 1 FROM embeddings e
    WHERE e.generation_id = :generation_id AND e.source_type = 'memory'
      AND e.source_id = m.id AND e.content_hash = m.content_hash)
"""


@dataclass(frozen=True, slots=True)
class EmbeddingParts:
    """The wired vector pieces; all None but `index` when no embedder is configured."""

    index: VectorIndex
    embedder: EmbeddingProvider | None = None
    tracker: EmbeddingTracker | None = None
    vectors: EmbeddingVectors | None = None
    worker: EmbeddingWorker | None = None
    fallback_window: int = 10_000


class EmbeddingOps:
    """Read and repair the vector side of one workspace."""

    def __init__(self, db: Database, parts: EmbeddingParts) -> None:
        self._db = db
        self.parts = parts

    def status_json(self) -> dict[str, Any]:
        """`/api/status` → `embedding: {provider, model, dimensions, generation, coverage}`."""
        embedder, tracker = self.parts.embedder, self.parts.tracker
        if embedder is None or tracker is None:
            return {
                "provider": "none",
                "model": None,
                "dimensions": None,
                "generation": None,
                "coverage": None,
                "vectorSearch": "unavailable",
            }
        coverage = tracker.coverage()
        return {
            "provider": embedder.name,
            "model": embedder.model,
            "dimensions": embedder.dimensions,
            "generation": {"id": coverage.generation_id, "status": coverage.status},
            "coverage": coverage.to_json(),
            "vectorSearch": self._vector_search(coverage.status),
        }

    def audit(self) -> dict[str, Any]:
        """Every generation with its vector count, coverage, mirror health and queued jobs."""
        conn = self._db.reader()
        generations = []
        for generation in list_generations(conn):
            item: dict[str, Any] = generation.to_json()
            item["vectors"] = vectors.canonical_count(conn, generation)
            generations.append(item)
        body: dict[str, Any] = {
            **self.status_json(),
            "generations": generations,
            "mirror": self._mirror_json(),
            "fallbackWindow": self.parts.fallback_window,
            "jobs": jobs.counts(conn, BACKFILL_JOB),
        }
        if self.parts.tracker is not None:
            body["coverage"] = self.parts.tracker.coverage(fresh=True).to_json()
        worker = self.parts.worker
        body["worker"] = (
            None
            if worker is None
            else {
                "lastError": worker.last_error,
                "lastStep": None if worker.last_step is None else worker.last_step.kind,
            }
        )
        return body

    def backfill(self, *, limit: int = DEFAULT_BACKFILL, dry_run: bool = False) -> dict[str, Any]:
        """Embed up to `limit` missing vectors now; a dry run only counts them."""
        if not 1 <= limit <= MAX_BACKFILL:
            raise InvalidInput(f"limit must be 1..{MAX_BACKFILL}", code="bad_limit")
        tracker = self._require_tracker()
        generation = tracker.generation
        missing = int(
            self._db.reader().execute(MISSING_COUNT, {"generation_id": generation.id}).fetchone()[0]
        )
        if dry_run:
            return {"dryRun": True, "generation": generation.id, "missing": missing}
        step = tracker.backfill(limit)
        if step.error and not step.embedded:
            raise Unavailable(f"embedder unavailable: {step.error}", code="embedder_unavailable")
        return {
            "dryRun": False,
            "generation": generation.id,
            "missingBefore": missing,
            "embedded": step.embedded,
            "skipped": step.skipped,
            "failed": step.failed,
            "error": step.error,
            "coverage": tracker.coverage(fresh=True).to_json(),
        }

    def resync(
        self, *, generation: int | None = None, full: bool = False, dry_run: bool = False
    ) -> dict[str, Any]:
        """Rebuild the vec0 mirror from canonical vectors (incremental unless `full`)."""
        target = generation
        if target is None and self.parts.tracker is not None:
            target = self.parts.tracker.generation.id
        return self.parts.index.resync(target, full=full, dry_run=dry_run).to_json()

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

    def _mirror_json(self) -> dict[str, Any]:
        index, tracker = self.parts.index, self.parts.tracker
        body: dict[str, Any] = {
            "enabled": index.mirror_enabled,
            "error": None if index.mirror_enabled else self._db.vec.error,
        }
        if tracker is not None and index.mirror_enabled:
            missing, orphans = index.mirror_gap(tracker.generation)
            body.update(missing=missing, orphans=orphans)
        return body
