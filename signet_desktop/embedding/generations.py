"""Embedding generations: one per (model, dimensions), each with its own vec0 mirror table.

A generation moves `building -> active -> retired`. The first generation of a database is
active at once (there is nothing to migrate from); a later one stays `building` until the
tracker has embedded every live memory with its model, then it becomes active and the old
active one is retired. Canonical vectors of a retired generation stay until retention.

The vec0 table is the one piece of dynamic DDL in the project: its width depends on the
model. Its name is derived from the integer generation id and checked against a pattern,
never taken from input.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

VEC_TABLE_PATTERN = re.compile(r"^vec_embeddings_g[0-9]+$")
BITS_TABLE_PATTERN = re.compile(r"^vec_bits_g[0-9]+$")

GENERATION_COLUMNS = (
    "id, provider, model, dimensions, vec_table, status, created_at, activated_at, retired_at"
)
SELECT_GENERATIONS = f"SELECT {GENERATION_COLUMNS} FROM embedding_generations"

INSERT_GENERATION = """
INSERT INTO embedding_generations (provider, model, dimensions, vec_table, status, created_at,
                                   activated_at)
VALUES (:provider, :model, :dimensions, :placeholder, :status, :now,
        CASE WHEN :status = 'active' THEN :now END)
RETURNING id
"""

# PostgreSQL: daemons starting at once on one database register the same generation; this
# transaction-level advisory lock (held until the registering transaction ends) makes the
# second find the first's row instead of failing on the unique (model, dimensions).
REGISTER_LOCK = 0x2D5B_91C4_0E6F_7A14
TAKE_REGISTER_LOCK = "SELECT pg_advisory_xact_lock(:key)"

SET_VEC_TABLE = "UPDATE embedding_generations SET vec_table = :vec_table WHERE id = :id"

REOPEN_GENERATION = """
UPDATE embedding_generations
SET status = 'building', provider = :provider, retired_at = NULL
WHERE id = :id AND status = 'retired'
"""

RETIRE_OTHERS = """
UPDATE embedding_generations SET status = 'retired', retired_at = :now
WHERE status = 'active' AND id <> :id
"""

ACTIVATE = """
UPDATE embedding_generations SET status = 'active', activated_at = :now, retired_at = NULL
WHERE id = :id
"""

VEC_TABLE_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0("
    "agent_id TEXT PARTITION KEY, embedding FLOAT[{dims}] distance_metric=cosine)"
)
# Binary codes (sign bits) of the same vectors, for large partitions: a Hamming scan over a
# plain table keeps 1,000 candidates for about what vec0 charges for 100, in this sqlite-vec
# build (no SIMD; its KNN cost grows with k). Candidates are rescored exactly.
BITS_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS {table} ("
    "agent_id TEXT NOT NULL, id INTEGER NOT NULL, bits BLOB NOT NULL, "
    "PRIMARY KEY (agent_id, id)) WITHOUT ROWID"
)
BITS_INDEX_DDL = "CREATE INDEX IF NOT EXISTS {table}_id ON {table} (id)"
# PostgreSQL: the generation's mirror is a partial HNSW index over its canonical rows (named
# like the vec0 table), cast to its width; pgvector's defaults for the graph.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_INDEX_DDL = (
    "CREATE INDEX IF NOT EXISTS {table} ON embeddings USING hnsw "
    "((vector::vector({dims})) vector_cosine_ops) "
    f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
    "WHERE generation_id = {generation_id}"
)


@dataclass(frozen=True, slots=True)
class Generation:
    """One (model, dimensions) vector space and the vec0 table that mirrors it."""

    id: int
    provider: str
    model: str
    dimensions: int
    vec_table: str
    status: str  # building | active | retired
    created_at: str
    activated_at: str | None
    retired_at: str | None

    @property
    def has_bits(self) -> bool:
        """Whether the mirror keeps binary codes (the width must be a multiple of 8)."""
        return self.dimensions % 8 == 0

    @property
    def bits_table(self) -> str:
        """The plain table of binary codes beside the vec0 table."""
        return f"vec_bits_g{self.id}"


def vec_table_name(generation_id: int) -> str:
    """The vec0 table name for a generation id (digits only, so safe to splice into DDL)."""
    if not isinstance(generation_id, int) or generation_id <= 0:
        raise ValueError(f"bad generation id {generation_id!r}")
    return f"vec_embeddings_g{generation_id}"


def checked_table(generation: Generation) -> str:
    """The generation's vec table name, refusing anything that is not ours."""
    if not VEC_TABLE_PATTERN.match(generation.vec_table):
        raise ValueError(f"refusing unexpected vec table name {generation.vec_table!r}")
    return generation.vec_table


def checked_bits_table(generation: Generation) -> str:
    """The generation's binary-code table name, checked like the vec table's."""
    if not BITS_TABLE_PATTERN.match(generation.bits_table):
        raise ValueError(f"refusing unexpected bits table name {generation.bits_table!r}")
    return generation.bits_table


def _row(r: Any) -> Generation:
    return Generation(
        id=int(r["id"]),
        provider=str(r["provider"]),
        model=str(r["model"]),
        dimensions=int(r["dimensions"]),
        vec_table=str(r["vec_table"]),
        status=str(r["status"]),
        created_at=str(r["created_at"]),
        activated_at=r["activated_at"],
        retired_at=r["retired_at"],
    )


def list_generations(conn: Connection) -> list[Generation]:
    """Every generation, oldest first."""
    return [_row(r) for r in conn.execute(f"{SELECT_GENERATIONS} ORDER BY id").fetchall()]


def get_generation(conn: Connection, generation_id: int) -> Generation | None:
    """One generation by id."""
    row = conn.execute(f"{SELECT_GENERATIONS} WHERE id = :id", {"id": generation_id}).fetchone()
    return _row(row) if row else None


def find_generation(conn: Connection, model: str, dimensions: int) -> Generation | None:
    """The generation of a (model, dimensions) pair, if one was ever registered."""
    row = conn.execute(
        f"{SELECT_GENERATIONS} WHERE model = :model AND dimensions = :dimensions",
        {"model": model, "dimensions": dimensions},
    ).fetchone()
    return _row(row) if row else None


def active_generation(conn: Connection) -> Generation | None:
    """The generation recall searches, if any."""
    row = conn.execute(f"{SELECT_GENERATIONS} WHERE status = 'active' LIMIT 1").fetchone()
    return _row(row) if row else None


def register_generation(
    conn: Connection, *, provider: str, model: str, dimensions: int
) -> Generation:
    """Find or create the generation for (model, dimensions); call inside a write transaction.

    New: active when no generation is active yet, else building. A retired generation chosen
    again is reopened as building (its old vectors count towards coverage). On PostgreSQL
    the registration of every daemon sharing the database is serialised (`REGISTER_LOCK`).
    """
    if is_postgres(conn):
        conn.execute(TAKE_REGISTER_LOCK, {"key": REGISTER_LOCK})
    existing = find_generation(conn, model, dimensions)
    if existing is not None:
        if existing.status == "retired":
            conn.execute(REOPEN_GENERATION, {"id": existing.id, "provider": provider})
            if active_generation(conn) is None:
                activate_generation(conn, existing.id)
            return _require(conn, existing.id)
        return existing
    status = "building" if active_generation(conn) is not None else "active"
    row = conn.execute(
        INSERT_GENERATION,
        {
            "provider": provider,
            "model": model,
            "dimensions": dimensions,
            "placeholder": f"pending-{uuid.uuid4()}",
            "status": status,
            "now": utc_now(),
        },
    ).fetchone()
    generation_id = int(row[0])
    conn.execute(SET_VEC_TABLE, {"id": generation_id, "vec_table": vec_table_name(generation_id)})
    return _require(conn, generation_id)


def activate_generation(conn: Connection, generation_id: int) -> Generation:
    """Make `generation_id` the active generation and retire the previous one."""
    now = utc_now()
    conn.execute(RETIRE_OTHERS, {"id": generation_id, "now": now})
    conn.execute(ACTIVATE, {"id": generation_id, "now": now})
    return _require(conn, generation_id)


def create_vec_table(conn: Connection, generation: Generation) -> None:
    """Create the generation's mirror (vec0 table, binary codes) if missing; needs sqlite-vec.
    On PostgreSQL the mirror is the generation's HNSW index (no binary codes)."""
    if is_postgres(conn):
        conn.execute(
            HNSW_INDEX_DDL.format(
                table=checked_table(generation),
                dims=int(generation.dimensions),
                generation_id=int(generation.id),
            )
        )
        return
    conn.execute(
        VEC_TABLE_DDL.format(table=checked_table(generation), dims=int(generation.dimensions))
    )
    if generation.has_bits:
        bits = checked_bits_table(generation)
        conn.execute(BITS_TABLE_DDL.format(table=bits))
        conn.execute(BITS_INDEX_DDL.format(table=bits))


def drop_vec_table(conn: Connection, generation: Generation) -> None:
    """Drop the generation's mirror (it is rebuilt from canonical vectors); on PostgreSQL its
    HNSW index."""
    if is_postgres(conn):
        conn.execute(f"DROP INDEX IF EXISTS {checked_table(generation)}")
        return
    conn.execute(f"DROP TABLE IF EXISTS {checked_table(generation)}")
    conn.execute(f"DROP TABLE IF EXISTS {checked_bits_table(generation)}")


VEC_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
# PostgreSQL: the generation's HNSW index, named like its vec0 table, in the current schema.
HNSW_INDEX_EXISTS = (
    "SELECT 1 FROM pg_class WHERE relname = :name AND relkind = 'i' "
    "AND relnamespace = current_schema()::regnamespace"
)


def vec_table_exists(conn: Connection, generation: Generation) -> bool:
    """Whether the generation's vec0 table (PostgreSQL: HNSW index) exists in the schema."""
    row = conn.execute(
        HNSW_INDEX_EXISTS if is_postgres(conn) else VEC_TABLE_EXISTS,
        {"name": checked_table(generation)},
    ).fetchone()
    return row is not None


def _require(conn: Connection, generation_id: int) -> Generation:
    generation = get_generation(conn, generation_id)
    if generation is None:
        raise LookupError(f"embedding generation {generation_id} vanished")
    return generation
