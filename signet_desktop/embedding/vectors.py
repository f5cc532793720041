"""Canonical vectors (`embeddings`) and their derived vec0 mirror, kept in step.

The canonical row is the truth: float32 blob, dimensions, model, content hash, source. The
mirror row (rowid = embeddings.id) is written beside it when sqlite-vec is loaded and can be
rebuilt from the canonical rows at any time (`resync_mirror`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.memory import Memory, utc_now
from signet_desktop.embedding.generations import (
    Generation,
    checked_bits_table,
    checked_table,
    create_vec_table,
    drop_vec_table,
    list_generations,
    vec_table_exists,
)
from signet_desktop.embedding.provider import (
    EmbeddingDimensionMismatch,
    EmbeddingError,
    EmbeddingProvider,
    validate_vectors,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, lock_until_commit, postgres_twin
from signet_desktop.storage.postgres.vector_text import pg_vector_text

SOURCE_MEMORY = "memory"
RESYNC_BATCH = 1000

# A changed vector gets a new id (AUTOINCREMENT never reuses one), so readers that cache by
# id (recall/codes.py) only ever need to append.
DELETE_EMBEDDING = """
DELETE FROM embeddings
WHERE generation_id = :generation_id AND source_type = :source_type AND source_id = :source_id
RETURNING id
"""
INSERT_EMBEDDING = """
INSERT INTO embeddings (agent_id, generation_id, source_type, source_id, content_hash, model,
                        dimensions, vector, chunk_text, created_at)
VALUES (:agent_id, :generation_id, :source_type, :source_id, :content_hash, :model,
        :dimensions, :vector, :chunk_text, :now)
RETURNING id
"""

# PostgreSQL: the same row, its float32 blob given as pgvector's text form (`pg_vector_text`).
# Daemons sharing the database may embed one memory at once (one's batcher, another's scan):
# both delete nothing, and the second insert would break the unique source key; it replaces
# the first's row instead (the same content, so the same vector but for the model's noise).
INSERT_EMBEDDING_PG = INSERT_EMBEDDING.replace(":vector,", "CAST(:vector AS vector),").replace(
    "RETURNING id",
    """ON CONFLICT (generation_id, source_type, source_id) DO UPDATE
SET agent_id = EXCLUDED.agent_id, content_hash = EXCLUDED.content_hash, model = EXCLUDED.model,
    dimensions = EXCLUDED.dimensions, vector = EXCLUDED.vector, chunk_text = EXCLUDED.chunk_text,
    created_at = EXCLUDED.created_at
RETURNING id""",
)

# PostgreSQL: a transaction-level advisory lock per (generation, agent) around vector writes.
VECTOR_WRITE_LOCK_PREFIX = "signet.embeddings.write:"

MIRROR_DELETE = "DELETE FROM {table} WHERE rowid = :id"
MIRROR_INSERT = "INSERT INTO {table} (rowid, agent_id, embedding) VALUES (:id, :agent_id, :vector)"
BITS_DELETE = "DELETE FROM {table} WHERE id = :id"
BITS_INSERT = (
    "INSERT INTO {table} (agent_id, id, bits) VALUES (:agent_id, :id, vec_quantize_binary(:vector))"
)

CANONICAL_IDS = "SELECT id FROM embeddings WHERE generation_id = :generation_id"
CANONICAL_ROWS = """
SELECT id, agent_id, vector FROM embeddings
WHERE id IN (SELECT value FROM json_each(:ids)) AND +generation_id = :generation_id
"""
COUNT_CANONICAL = "SELECT COUNT(*) FROM embeddings WHERE generation_id = :generation_id"


@dataclass(frozen=True, slots=True)
class VectorWrite:
    """One canonical vector to store for a source."""

    agent_id: str
    source_id: str
    content_hash: str
    vector: bytes
    source_type: str = SOURCE_MEMORY
    chunk_text: str | None = None


@dataclass(frozen=True, slots=True)
class PendingVector:
    """A committed memory whose vector is still to be made."""

    memory_id: str
    agent_id: str
    content: str
    content_hash: str

    @classmethod
    def of(cls, memory: Memory) -> PendingVector:
        return cls(memory.id, memory.agent_id, memory.content, memory.content_hash)


@dataclass(frozen=True, slots=True)
class ResyncReport:
    """What a mirror resync found and did."""

    generation_id: int
    canonical: int
    mirrored_before: int
    added: int
    removed: int
    rebuilt: bool
    dry_run: bool


def embed_writes(
    embedder: EmbeddingProvider, dimensions: int, items: Sequence[PendingVector]
) -> list[VectorWrite]:
    """One provider call for `items`: their vectors, validated, as the canonical rows to write."""
    raw = embedder.embed([item.content for item in items])
    matrix = validate_vectors(raw, dimensions, embedder.name, expected_rows=len(items))
    return [
        VectorWrite(item.agent_id, item.memory_id, item.content_hash, vector_blob(row, dimensions))
        for item, row in zip(items, matrix, strict=True)
    ]


def vector_blob(vector: npt.ArrayLike, dimensions: int) -> bytes:
    """A checked float32 blob: right width, finite, non-zero, unit norm."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.size == 0:
        raise EmbeddingError("vector must be a non-empty 1-D array")
    if array.size != dimensions:
        raise EmbeddingDimensionMismatch(
            f"vector has {array.size} dimensions, generation expects {dimensions}"
        )
    if not np.isfinite(array).all():
        raise EmbeddingError("vector contains NaN or infinite values")
    norm = float(np.linalg.norm(array))
    if norm == 0.0:
        raise EmbeddingError("vector is all zeros")
    return (array / norm).astype(np.float32).tobytes()


def blob_matrix(blobs: Sequence[bytes], dimensions: int) -> npt.NDArray[np.float32]:
    """Stack float32 blobs into an (n, dimensions) matrix without per-row copies."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimensions)


def store_vectors(
    conn: Connection, generation: Generation, writes: Iterable[VectorWrite], *, mirror: bool
) -> list[int]:
    """Write canonical rows (and mirror rows when `mirror`), replacing a source's previous
    vector in the generation; call inside a write transaction. Returns the new ids (on
    PostgreSQL in source order, the order the rows are locked in).

    On PostgreSQL the generation's HNSW index follows the canonical rows by itself: there is
    no mirror to write, whatever `mirror` says."""
    ids: list[int] = []
    now = utc_now()
    postgres = is_postgres(conn)
    insert = INSERT_EMBEDDING_PG if postgres else INSERT_EMBEDDING
    mirror = mirror and not postgres
    if postgres:  # one lock order for every daemon's batch: two overlapping ones deadlocked
        writes = sorted(writes, key=lambda write: (write.source_type, write.source_id))
        for agent_id in sorted({write.agent_id for write in writes}):
            # Each row's counter trigger updates its agent's memory_vector_counts row: one
            # daemon held that row and waited on a vector the other had just inserted, which
            # waited on the row. One writer of an agent's vectors at a time (until commit).
            lock_until_commit(conn, f"{VECTOR_WRITE_LOCK_PREFIX}{generation.id}:{agent_id}")
    for write in writes:
        if len(write.vector) != generation.dimensions * 4:
            raise EmbeddingDimensionMismatch(
                f"vector blob has {len(write.vector) // 4} dimensions, generation "
                f"{generation.id} ({generation.model}) expects {generation.dimensions}"
            )
        params = {
            "agent_id": write.agent_id,
            "generation_id": generation.id,
            "source_type": write.source_type,
            "source_id": write.source_id,
            "content_hash": write.content_hash,
            "model": generation.model,
            "dimensions": generation.dimensions,
            "vector": pg_vector_text(write.vector) if postgres else write.vector,
            "chunk_text": write.chunk_text,
            "now": now,
        }
        replaced = [int(r[0]) for r in conn.execute(DELETE_EMBEDDING, params).fetchall()]
        if replaced and mirror:
            remove_from_mirror(conn, generation, replaced)
        row = conn.execute(insert, params).fetchone()
        embedding_id = int(row[0])
        ids.append(embedding_id)
        if mirror:
            _mirror_rows(conn, generation, [(embedding_id, write.agent_id, write.vector)])
    return ids


def sent_vector_twin(sql: str, column: str = "e.vector") -> str:
    """The PostgreSQL twin of a statement reading the vector `column` as pgvector's binary
    form (`vector_send`), which `stored_vector(..., sent=True)` decodes in ~1 µs: the text form
    took ~80 µs to parse per 384-d vector, ~6 ms of a reranked recall's 60 passage vectors."""
    twin = postgres_twin(sql)
    if f"{column} AS vector" not in twin:
        raise ValueError(f"the statement does not read {column} AS vector")
    return twin.replace(f"{column} AS vector", f"vector_send({column}) AS vector")


def stored_vector(
    value: bytes | str | memoryview, *, sent: bool = False
) -> npt.NDArray[np.float32]:
    """A canonical vector as read back: SQLite's float32 blob; pgvector's binary form when
    `sent` (a statement from `sent_vector_twin`: a 2-byte dimension count, 2 unused bytes,
    then big-endian float32s); or pgvector's `[x1,...]` text (the adapter reads types it
    does not know as text)."""
    if isinstance(value, str):
        return np.array(value.strip("[]").split(","), dtype=np.float32)
    if sent:
        return np.frombuffer(bytes(value), dtype=">f4", offset=4).astype(np.float32)
    return np.frombuffer(bytes(value), dtype=np.float32)


def _mirror_rows(
    conn: Connection, generation: Generation, rows: Sequence[tuple[int, str, bytes]]
) -> None:
    params = [{"id": r[0], "agent_id": r[1], "vector": r[2]} for r in rows]
    table = checked_table(generation)
    conn.executemany(MIRROR_DELETE.format(table=table), params)
    conn.executemany(MIRROR_INSERT.format(table=table), params)
    if generation.has_bits:
        bits = checked_bits_table(generation)
        conn.executemany(BITS_DELETE.format(table=bits), params)
        conn.executemany(BITS_INSERT.format(table=bits), params)


# The one definition of "this memory (alias m) has a current vector in :generation_id".
HAS_CURRENT_VECTOR = """EXISTS (
    SELECT 1 FROM embeddings e
    WHERE e.generation_id = :generation_id AND e.source_type = 'memory'
      AND e.source_id = m.id AND e.content_hash = m.content_hash)"""

MISSING_COUNT = f"""
SELECT COUNT(*) FROM memories m WHERE m.is_deleted = 0 AND NOT {HAS_CURRENT_VECTOR}
"""


def missing_count(conn: Connection, generation_id: int) -> int:
    """Live memories without a current vector in the generation."""
    return int(conn.execute(MISSING_COUNT, {"generation_id": generation_id}).fetchone()[0])


def canonical_count(conn: Connection, generation: Generation) -> int:
    """How many canonical vectors the generation holds."""
    return int(conn.execute(COUNT_CANONICAL, {"generation_id": generation.id}).fetchone()[0])


def _part_ids(conn: Connection, generation: Generation) -> list[set[int]]:
    """Embedding ids in each part of the mirror: the vec0 table, then the binary codes."""
    parts = [f"SELECT rowid FROM {checked_table(generation)}"]
    if generation.has_bits:
        parts.append(f"SELECT id FROM {checked_bits_table(generation)}")
    return [{int(r[0]) for r in conn.execute(sql).fetchall()} for sql in parts]


def mirror_ids(conn: Connection, generation: Generation) -> set[int]:
    """Embedding ids present in every part of the generation's mirror."""
    return set.intersection(*_part_ids(conn, generation))


def mirror_extra_ids(conn: Connection, generation: Generation) -> set[int]:
    """Embedding ids present in any part of the mirror (orphans are found among these)."""
    return set.union(*_part_ids(conn, generation))


def resync_plan(conn: Connection, generation: Generation) -> tuple[list[int], list[int], int]:
    """(canonical ids missing from the mirror, mirror ids with no canonical row, mirror size)."""
    canonical = {int(r[0]) for r in conn.execute(CANONICAL_IDS, {"generation_id": generation.id})}
    parts = _part_ids(conn, generation)
    complete, present = set.intersection(*parts), set.union(*parts)
    return sorted(canonical - complete), sorted(present - canonical), len(complete)


def copy_to_mirror(conn: Connection, generation: Generation, ids: Sequence[int]) -> int:
    """Copy canonical rows `ids` into the mirror; returns how many were written."""
    rows = conn.execute(
        CANONICAL_ROWS, {"generation_id": generation.id, "ids": json.dumps(list(ids))}
    ).fetchall()
    _mirror_rows(conn, generation, [(int(r[0]), str(r[1]), bytes(r[2])) for r in rows])
    return len(rows)


def remove_from_mirror(conn: Connection, generation: Generation, ids: Sequence[int]) -> None:
    """Delete mirror rows whose canonical row is gone."""
    params = [{"id": i} for i in ids]
    conn.executemany(MIRROR_DELETE.format(table=checked_table(generation)), params)
    if generation.has_bits:
        conn.executemany(BITS_DELETE.format(table=checked_bits_table(generation)), params)


def rebuild_mirror_table(conn: Connection, generation: Generation) -> None:
    """Drop and recreate the (empty) mirror table; the caller refills it in batches."""
    drop_vec_table(conn, generation)
    create_vec_table(conn, generation)


def batched(items: Sequence[int], size: int = RESYNC_BATCH) -> Iterable[Sequence[int]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


# -- purging a source's vectors (a removed import source) -----------------------------------

DELETE_FOR_SOURCES = """
DELETE FROM embeddings
WHERE source_type = :source_type AND source_id IN (SELECT value FROM json_each(:ids))
RETURNING id, generation_id
"""
DELETE_FOR_SOURCES_PG = postgres_twin(DELETE_FOR_SOURCES)
COUNT_FOR_SOURCES = """
SELECT COUNT(*) FROM embeddings
WHERE source_type = :source_type AND source_id IN (SELECT value FROM json_each(:ids))
"""
COUNT_FOR_SOURCES_PG = postgres_twin(COUNT_FOR_SOURCES)


def count_source_vectors(
    conn: Connection, source_ids: Sequence[str], source_type: str = SOURCE_MEMORY
) -> int:
    """Canonical vectors (every generation) of these sources."""
    if not source_ids:
        return 0
    params = {"source_type": source_type, "ids": json.dumps(list(source_ids))}
    sql = COUNT_FOR_SOURCES_PG if is_postgres(conn) else COUNT_FOR_SOURCES
    return int(conn.execute(sql, params).fetchone()[0])


def delete_source_vectors(
    conn: Connection, source_ids: Sequence[str], source_type: str = SOURCE_MEMORY
) -> int:
    """Delete these sources' canonical vectors in every generation, and their mirror rows
    when sqlite-vec is loaded here (otherwise the next resync removes the orphans)."""
    if not source_ids:
        return 0
    params = {"source_type": source_type, "ids": json.dumps(list(source_ids))}
    postgres = is_postgres(conn)
    gone = conn.execute(
        DELETE_FOR_SOURCES_PG if postgres else DELETE_FOR_SOURCES, params
    ).fetchall()
    if gone and not postgres and _vec_loaded(conn):  # PostgreSQL: the HNSW index follows
        by_generation: dict[int, list[int]] = {}
        for row in gone:
            by_generation.setdefault(int(row[1]), []).append(int(row[0]))
        for generation in list_generations(conn):
            ids = by_generation.get(generation.id)
            if ids and vec_table_exists(conn, generation):
                remove_from_mirror(conn, generation, ids)
    return len(gone)


def _vec_loaded(conn: Connection) -> bool:
    try:
        conn.execute("SELECT vec_version()").fetchone()
    except Exception:  # no sqlite-vec on this connection: the mirror cannot be touched
        return False
    return True
