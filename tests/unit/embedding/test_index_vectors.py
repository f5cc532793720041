"""Canonical vectors and their vec0 mirror: checked writes, upserts and resync-vec."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from signet_desktop.domain.errors import NotFound, Unavailable
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import Generation
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import EmbeddingDimensionMismatch, EmbeddingError
from signet_desktop.storage.database import Database, open_database

DIMS = 64
EMBEDDER = HashEmbedder(DIMS)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "v.db")
    yield database
    database.close()


@pytest.fixture
def index(db: Database) -> VectorIndex:
    return VectorIndex(db)


@pytest.fixture
def generation(index: VectorIndex) -> Generation:
    return index.ensure_generation(provider="hash", model=EMBEDDER.model, dimensions=DIMS)


def write(source_id: str, text: str, agent: str = "default") -> vectors.VectorWrite:
    blob = vectors.vector_blob(EMBEDDER.embed([text])[0], DIMS)
    return vectors.VectorWrite(agent, source_id, f"hash-{text}", blob)


def store(db: Database, index: VectorIndex, generation: Generation, n: int) -> list[int]:
    writes = [write(f"m{i}", f"text {i}") for i in range(n)]
    with db.write() as conn:
        return index.store(conn, generation, writes)


def mirror_count(db: Database, generation: Generation) -> int:
    return len(vectors.mirror_ids(db.reader(), generation))


@pytest.mark.parametrize(
    ("vector", "error", "message"),
    [
        (np.ones(DIMS - 1), EmbeddingDimensionMismatch, "63 dimensions"),
        (np.array([]), EmbeddingError, "non-empty"),
        (np.full(DIMS, np.nan), EmbeddingError, "NaN"),
        (np.zeros(DIMS), EmbeddingError, "all zeros"),
        (np.ones((2, DIMS)), EmbeddingError, "1-D"),
    ],
)
def test_bad_vectors_are_refused(vector: np.ndarray, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        vectors.vector_blob(vector, DIMS)


def test_vector_blob_is_unit_float32() -> None:
    blob = vectors.vector_blob(np.full(DIMS, 3.0), DIMS)
    values = np.frombuffer(blob, dtype=np.float32)
    assert values.shape == (DIMS,) and abs(float(np.linalg.norm(values)) - 1.0) < 1e-6


def test_store_writes_canonical_and_mirror_rows(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 3)
    conn = db.reader()
    assert vectors.canonical_count(conn, generation) == 3
    assert vectors.mirror_ids(conn, generation) == set(ids)
    row = conn.execute(
        "SELECT model, dimensions, length(vector) FROM embeddings LIMIT 1"
    ).fetchone()
    assert tuple(row) == (EMBEDDER.model, DIMS, DIMS * 4)


def test_store_replaces_a_sources_vector(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    [first] = store(db, index, generation, 1)
    changed = write("m0", "changed text")
    with db.write() as conn:
        [again] = index.store(conn, generation, [changed])
    assert again > first  # a changed vector is a new row: caches keyed by id only append
    conn = db.reader()
    assert vectors.canonical_count(conn, generation) == 1
    assert conn.execute("SELECT content_hash FROM embeddings").fetchone()[0] == "hash-changed text"
    assert vectors.mirror_ids(conn, generation) == {again}
    assert vectors.mirror_extra_ids(conn, generation) == {again}


def test_a_wrong_width_blob_writes_nothing(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    bad = vectors.VectorWrite("default", "m9", "h", np.ones(DIMS + 8, np.float32).tobytes())
    fine = write("m1", "fine")
    with pytest.raises(EmbeddingDimensionMismatch, match="expects 64"), db.write() as conn:
        index.store(conn, generation, [fine, bad])
    assert vectors.canonical_count(db.reader(), generation) == 0
    assert mirror_count(db, generation) == 0


def test_resync_restores_missing_mirror_rows(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 5)
    with db.write() as conn:
        vectors.remove_from_mirror(conn, generation, ids[:2])
    assert index.mirror_gap(generation) == (2, 0)
    report = index.resync(generation.id)
    assert (report.added, report.removed, report.rebuilt) == (2, 0, False)
    assert vectors.mirror_ids(db.reader(), generation) == set(ids)
    assert index.mirror_gap(generation) == (0, 0)


def test_resync_drops_orphan_mirror_rows(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 3)
    with db.write() as conn:
        conn.execute("DELETE FROM embeddings WHERE id = :id", {"id": ids[0]})
    assert index.mirror_gap(generation) == (0, 1)
    assert index.resync().removed == 1
    assert vectors.mirror_ids(db.reader(), generation) == set(ids[1:])


def test_dry_run_reports_without_changing(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 4)
    with db.write() as conn:
        vectors.remove_from_mirror(conn, generation, ids)
    report = index.resync(dry_run=True)
    assert (report.added, report.dry_run, report.mirrored_before) == (4, True, 0)
    assert mirror_count(db, generation) == 0


def test_full_resync_rebuilds_a_dropped_table(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 4)
    with db.write() as conn:
        conn.execute(f"DROP TABLE {generation.vec_table}")
    assert index.mirror_gap(generation) == (4, 0)
    report = index.resync(full=True)
    assert report.rebuilt and report.added == 4
    assert vectors.mirror_ids(db.reader(), generation) == set(ids)


def test_resync_in_batches(
    db: Database, index: VectorIndex, generation: Generation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "RESYNC_BATCH", 3)
    ids = store(db, index, generation, 10)
    with db.write() as conn:
        vectors.remove_from_mirror(conn, generation, ids)
    assert index.resync().added == 10
    assert mirror_count(db, generation) == 10


def test_resync_without_sqlite_vec_says_so(tmp_path: Path) -> None:
    db = open_database(tmp_path / "novec.db", with_vec=False)
    try:
        index = VectorIndex(db)
        generation = index.ensure_generation(provider="hash", model="m", dimensions=DIMS)
        one = write("m1", "text")
        with db.write() as conn:
            index.store(conn, generation, [one])  # canonical only
        assert vectors.canonical_count(db.reader(), generation) == 1
        assert index.mirror_gap(generation) == (0, 0)
        with pytest.raises(Unavailable, match="sqlite-vec is not loaded"):
            index.resync()
    finally:
        db.close()


def test_vectors_written_without_vec_reach_the_mirror_later(tmp_path: Path) -> None:
    path = tmp_path / "later.db"
    db = open_database(path, with_vec=True)
    generation = VectorIndex(db).ensure_generation(provider="h", model="m", dimensions=DIMS)
    db.close()
    db = open_database(path, with_vec=False)
    pair = [write("m1", "one"), write("m2", "two")]
    with db.write() as conn:
        VectorIndex(db).store(conn, generation, pair)
    db.close()
    db = open_database(path, with_vec=True)
    try:
        index = VectorIndex(db)
        assert index.mirror_gap(generation) == (2, 0)
        assert index.resync().added == 2
        assert index.mirror_gap(generation) == (0, 0)
    finally:
        db.close()


def test_unknown_generation_is_not_found(index: VectorIndex) -> None:
    with pytest.raises(NotFound):
        index.generation(99)
    with pytest.raises(NotFound):
        index.generation()


def test_resync_repairs_rows_missing_from_the_binary_codes_only(
    db: Database, index: VectorIndex, generation: Generation
) -> None:
    ids = store(db, index, generation, 3)
    with db.write() as conn:
        conn.execute(f"DELETE FROM {generation.bits_table} WHERE id = :id", {"id": ids[1]})
    assert vectors.mirror_ids(db.reader(), generation) == {ids[0], ids[2]}
    assert index.mirror_gap(generation) == (1, 0)
    assert index.resync().added == 1
    assert vectors.mirror_ids(db.reader(), generation) == set(ids)
    codes = db.reader().execute(f"SELECT COUNT(*) FROM {generation.bits_table}").fetchone()[0]
    assert codes == 3
