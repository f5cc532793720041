"""The vector index over one database: generations, canonical writes and mirror repair.

Writes go to `embeddings` always and to the generation's vec0 mirror when sqlite-vec is
loaded. When it is not, the mirror simply falls behind; `resync` (and the tracker at start)
brings it back in step from the canonical rows, in short batches of write transactions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from signet_desktop.domain.errors import NotFound, Unavailable
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import (
    Generation,
    active_generation,
    create_vec_table,
    get_generation,
    register_generation,
    vec_table_exists,
)
from signet_desktop.embedding.vectors import ResyncReport, VectorWrite
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.handle import DatabaseHandle

log = logging.getLogger(__name__)


class VectorIndex:
    """Canonical vectors plus the vec0 mirror of each generation, for one database."""

    def __init__(self, db: DatabaseHandle) -> None:
        self._db = db

    @property
    def mirror_enabled(self) -> bool:
        """True when sqlite-vec is loaded, so mirror rows are written and KNN can run."""
        return self._db.vec.available

    def ensure_generation(self, *, provider: str, model: str, dimensions: int) -> Generation:
        """Register the generation for (model, dimensions) and create its mirror table."""
        with self._db.write() as conn:
            generation = register_generation(
                conn, provider=provider, model=model, dimensions=dimensions
            )
            if self.mirror_enabled:
                create_vec_table(conn, generation)
        return generation

    def generation(self, generation_id: int | None = None) -> Generation:
        """A generation by id, or the active one; NotFound when there is none."""
        conn = self._db.reader()
        found = (
            active_generation(conn)
            if generation_id is None
            else get_generation(conn, generation_id)
        )
        if found is None:
            what = "active embedding generation" if generation_id is None else generation_id
            raise NotFound(f"no {what}", code="generation_not_found")
        return found

    def store(
        self, conn: Connection, generation: Generation, writes: Iterable[VectorWrite]
    ) -> list[int]:
        """Write canonical (+ mirror) rows inside the caller's write transaction."""
        mirror = self.mirror_enabled and vec_table_exists(conn, generation)
        return vectors.store_vectors(conn, generation, writes, mirror=mirror)

    def mirror_gap(self, generation: Generation) -> tuple[int, int]:
        """(canonical rows missing from the mirror, orphan mirror rows); (0, 0) without vec."""
        if not self.mirror_enabled:
            return 0, 0
        conn = self._db.reader()
        if not vec_table_exists(conn, generation):
            return vectors.canonical_count(conn, generation), 0
        if is_postgres(conn):  # the HNSW index covers every row of its generation: no gap
            return 0, 0
        missing, orphans, _ = vectors.resync_plan(conn, generation)
        return len(missing), len(orphans)

    def resync(
        self, generation_id: int | None = None, *, full: bool = False, dry_run: bool = False
    ) -> ResyncReport:
        """Bring the mirror back in step with the canonical rows (`signet repair resync-vec`).

        Incremental by default (add missing rows, drop orphans); `full` drops and refills
        the table. Each batch is its own short write transaction.
        """
        if not self.mirror_enabled:
            raise Unavailable(
                f"sqlite-vec is not loaded ({self._db.vec.error}); the vec0 mirror cannot be "
                "rebuilt here, and recall is using the bounded recent-window scan",
                code="vec_unavailable",
            )
        generation = self.generation(generation_id)
        conn = self._db.reader()
        exists = vec_table_exists(conn, generation)
        canonical = vectors.canonical_count(conn, generation)
        if is_postgres(conn):
            return self._resync_hnsw(generation, exists, canonical, full=full, dry_run=dry_run)
        if exists and not full:
            missing, orphans, mirrored = vectors.resync_plan(conn, generation)
        else:
            mirrored = len(vectors.mirror_ids(conn, generation)) if exists else 0
            missing, orphans = self._all_ids(generation), []
        report = ResyncReport(
            generation_id=generation.id,
            canonical=canonical,
            mirrored_before=mirrored,
            added=len(missing),
            removed=len(orphans),
            rebuilt=full or not exists,
            dry_run=dry_run,
        )
        if dry_run:
            return report
        with self._db.write() as wconn:
            if full or not exists:
                vectors.rebuild_mirror_table(wconn, generation)
            if orphans:
                vectors.remove_from_mirror(wconn, generation, orphans)
        for batch in vectors.batched(missing):
            with self._db.write() as wconn:
                vectors.copy_to_mirror(wconn, generation, batch)
        log.info("resynced vec mirror of generation %s: %s", generation.id, report)
        return report

    def _resync_hnsw(
        self, generation: Generation, exists: bool, canonical: int, *, full: bool, dry_run: bool
    ) -> ResyncReport:
        """PostgreSQL: the generation's HNSW index covers every canonical row as the server
        keeps it, so there is nothing to add or remove; a missing index, or `full`, is built
        again from the rows (one statement)."""
        rebuild = full or not exists
        report = ResyncReport(
            generation_id=generation.id,
            canonical=canonical,
            mirrored_before=canonical if exists else 0,
            added=canonical if rebuild else 0,
            removed=0,
            rebuilt=rebuild,
            dry_run=dry_run,
        )
        if rebuild and not dry_run:
            with self._db.write() as wconn:
                vectors.rebuild_mirror_table(wconn, generation)
            log.info("rebuilt the HNSW index of generation %s: %s", generation.id, report)
        return report

    def _all_ids(self, generation: Generation) -> list[int]:
        rows = self._db.reader().execute(vectors.CANONICAL_IDS, {"generation_id": generation.id})
        return sorted(int(r[0]) for r in rows)
