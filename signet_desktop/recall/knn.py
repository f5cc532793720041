"""The database's own nearest-neighbour search: vec0's KNN on SQLite, the generation's
pgvector HNSW index on PostgreSQL, each widened until k live rows pass scope and filters.

The semantic channel (`recall/vector.py`) uses `exact_knn` when its in-memory matrix is off;
`nearest` is the backend-neutral entry point the storage contract tests and benches call.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from signet_desktop.domain.recall import RecallFilters
from signet_desktop.embedding.generations import Generation, checked_table
from signet_desktop.recall.filters import filter_sql
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.postgres.vector_text import pg_vector_text

SEMANTIC_TOP_K = 50
KNN_MAX_K = 4096  # sqlite-vec's ceiling for `k`
PG_KNN_MAX_K = 40_000  # pgvector's iterative scan stops at hnsw.max_scan_tuples (20,000)

EXACT_KNN = """
WITH knn AS MATERIALIZED (
    SELECT rowid AS embedding_id, distance FROM {table}
    WHERE embedding MATCH :query AND k = :k AND agent_id = :agent_id
)
SELECT m.id AS id, 1.0 - knn.distance AS similarity
FROM knn
JOIN embeddings e ON e.id = knn.embedding_id
JOIN memories m ON m.id = e.source_id
WHERE e.source_type = 'memory' AND e.content_hash = m.content_hash AND {filters}
ORDER BY knn.distance
"""

# PostgreSQL: the generation's HNSW index (a partial index over its canonical rows, cast to
# its width: embedding/generations.py HNSW_INDEX_DDL) ranks the agent's vectors alone, walked
# in exact distance order past other agents' rows (`hnsw.iterative_scan`,
# storage/postgres/connect.py); the live rows are joined and filtered after, as EXACT_KNN
# does. Joined in one query, the planner misjudged the join and sorted every row instead.
HNSW_KNN = """
WITH knn AS MATERIALIZED (
    SELECT e.source_id, e.content_hash,
           e.vector::vector({dims}) <=> CAST(:query AS vector({dims})) AS distance
    FROM embeddings e
    WHERE e.generation_id = {generation_id} AND e.agent_id = :agent_id
      AND e.source_type = 'memory'
    ORDER BY e.vector::vector({dims}) <=> CAST(:query AS vector({dims}))
    LIMIT :knn_k
)
SELECT m.id AS id, 1.0 - knn.distance AS similarity
FROM knn
JOIN memories m ON m.id = knn.source_id
WHERE knn.content_hash = m.content_hash AND {filters}
ORDER BY knn.distance
LIMIT :k
"""


def exact_knn(
    conn: Connection,
    generation: Generation,
    where: str,
    params: dict[str, object],
    k: int,
    size: int,
) -> list[tuple[str, float]]:
    """vec0's KNN in the generation's table (sqlite-vec loaded), widened until k rows pass
    scope and filters or the agent's `size` rows were all seen."""
    sql = EXACT_KNN.format(table=checked_table(generation), filters=where)
    return _widened(conn, sql, params, "k", k, KNN_MAX_K, min(KNN_MAX_K, size))


def nearest(
    conn: Connection,
    generation: Generation,
    query: npt.NDArray[np.float32],
    agent_id: str,
    filters: RecallFilters,
    k: int = SEMANTIC_TOP_K,
) -> list[tuple[str, float]]:
    """The agent's k nearest live memories (id, cosine) as the database's own index answers:
    vec0's KNN on SQLite, the generation's HNSW index on PostgreSQL."""
    postgres = is_postgres(conn)
    where, params = filter_sql(agent_id, filters, postgres=postgres)
    if not postgres:
        params = {**params, "query": query.tobytes()}
        return exact_knn(conn, generation, where, params, k, KNN_MAX_K)
    sql = HNSW_KNN.format(
        dims=int(generation.dimensions), generation_id=int(generation.id), filters=where
    )
    vector = pg_vector_text(np.ascontiguousarray(query, dtype=np.float32).tobytes())
    params = {**params, "query": vector, "k": k}
    return _widened(conn, sql, params, "knn_k", k, PG_KNN_MAX_K, PG_KNN_MAX_K)


def _widened(
    conn: Connection,
    sql: str,
    params: dict[str, object],
    width_param: str,
    k: int,
    ceiling: int,
    enough: int,
) -> list[tuple[str, float]]:
    """Run a KNN statement with `width_param` neighbours, widened fourfold until k rows pass
    scope and filters (deleted rows and filters thin the list) or the width reaches `enough`
    (every row of the agent seen) or `ceiling` (the index's own limit)."""
    width = min(ceiling, max(2 * k, k + 20))
    while True:
        rows = conn.execute(sql, {**params, width_param: width}).fetchall()
        if len(rows) >= k or width >= enough:
            return [(str(r["id"]), float(r["similarity"])) for r in rows[:k]]
        width = min(ceiling, width * 4)
