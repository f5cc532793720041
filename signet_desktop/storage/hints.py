"""memory_hints: prospective hints, hypothetical future queries a memory answers.

The owner of `memory_hints` (and, through its triggers, `memory_hints_fts`). Hints are
retrieval aids only: nothing here reads or writes the knowledge graph. Every write is bound to
a live memory of the same agent, so a hint can never be attached across agents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.fts_records import leading_varint
from signet_desktop.storage.rows import scalar_int

HINT_MAX_CHARS = 200  # a hint longer than this is cut (at a word boundary when there is one)
DEFAULT_HINTS_PER_MEMORY = 5  # reference §7: at most 5 hints per memory
MAX_HINTS_PER_MEMORY = 10  # the ceiling `memory.pipelineV2.hints.max` may ask for


def clean_hint(text: str) -> str:
    """`text` trimmed, inner whitespace collapsed and cut to HINT_MAX_CHARS ("" when empty)."""
    hint = " ".join(str(text).split())
    if len(hint) <= HINT_MAX_CHARS:
        return hint
    cut = hint[:HINT_MAX_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space >= HINT_MAX_CHARS // 2 else cut).rstrip()


def insert_hints(
    conn: Connection,
    agent_id: str,
    memory_id: str,
    hints: Iterable[str],
    *,
    limit: int = DEFAULT_HINTS_PER_MEMORY,
) -> int:
    """Attach `hints` to the agent's live memory `memory_id`; returns the rows written.

    Each hint is trimmed and bounded (clean_hint); empties and duplicates (case-insensitive,
    against the batch and the memory's existing hints) are skipped; the memory keeps at most
    `limit` hints (capped at MAX_HINTS_PER_MEMORY). A memory that is not the agent's, or is
    deleted, gets nothing (0). Runs inside the caller's transaction.
    """
    cap = max(0, min(int(limit), MAX_HINTS_PER_MEMORY))
    live = conn.execute(
        "SELECT 1 FROM memories WHERE id = ? AND agent_id = ? AND is_deleted = 0",
        (memory_id, agent_id),
    ).fetchone()
    if live is None or cap == 0:
        return 0
    existing = [
        row[0]
        for row in conn.execute(
            "SELECT hint FROM memory_hints WHERE memory_id = ? AND agent_id = ?",
            (memory_id, agent_id),
        ).fetchall()
    ]
    seen = {hint.casefold() for hint in existing}
    room = cap - len(existing)
    now = utc_now()
    written = 0
    for raw in hints:
        if written >= room:
            break
        hint = clean_hint(raw)
        key = hint.casefold()
        if not hint or key in seen:
            continue
        seen.add(key)
        cursor = conn.execute(
            "INSERT INTO memory_hints (memory_id, agent_id, hint, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (memory_id, agent_id, hint, now),
        )
        written += cursor.rowcount
    return written


def hints_for(conn: Connection, agent_id: str, memory_ids: Sequence[str]) -> dict[str, list[str]]:
    """memory id -> its hints in insertion order, for the agent's memories among `memory_ids`."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = conn.execute(
        f"SELECT memory_id, hint FROM memory_hints WHERE agent_id = ? AND memory_id IN ({marks}) "
        "ORDER BY seq",
        (agent_id, *ids),
    ).fetchall()
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(row[1])
    return found


def delete_for_memory(conn: Connection, agent_id: str, memory_id: str) -> int:
    """Drop the hints of the agent's memory `memory_id`; returns rows deleted."""
    cursor = conn.execute(
        "DELETE FROM memory_hints WHERE agent_id = ? AND memory_id = ?", (agent_id, memory_id)
    )
    return cursor.rowcount


def count(conn: Connection, agent_id: str | None = None) -> int:
    """Number of hint rows (of one agent, or of all agents when `agent_id` is None)."""
    if agent_id is None:
        return int(conn.execute("SELECT COUNT(*) FROM memory_hints").fetchone()[0])
    row = conn.execute("SELECT COUNT(*) FROM memory_hints WHERE agent_id = ?", (agent_id,))
    return int(row.fetchone()[0])


# Live memories with no hint and no hint job of any state, in a bounded seq window. A memory
# whose job completed with nothing or went dead is not asked again (until retention prunes the
# finished job).
NEEDING_HINTS = """
SELECT m.seq AS seq, m.id AS id, m.agent_id AS agent_id FROM memories m
WHERE m.seq > :after AND m.seq <= :after + :window AND m.is_deleted = 0
  AND m.type != :skip_type AND length(m.content) >= :min_chars
  AND NOT EXISTS (SELECT 1 FROM memory_hints h WHERE h.memory_id = m.id)
  AND NOT EXISTS (
      SELECT 1 FROM memory_jobs j WHERE j.memory_id = m.id AND j.job_type = :job_type)
ORDER BY m.seq
"""


EVER_QUEUED = "SELECT 1 FROM memory_jobs WHERE memory_id = :memory_id AND job_type = :job_type"


def ever_queued(conn: Connection, *, job_type: str, memory_id: str) -> bool:
    """Whether the memory has had a hint job, of any state (another daemon's included)."""
    row = conn.execute(EVER_QUEUED, {"memory_id": memory_id, "job_type": job_type})
    return row.fetchone() is not None


@dataclass(frozen=True, slots=True)
class HintScan:
    """One window of the backfill scan: (agent id, memory id) pairs, where to go on, done."""

    found: tuple[tuple[str, str], ...]
    next_seq: int
    done: bool


def memories_needing_hints(
    conn: Connection,
    *,
    job_type: str,
    after_seq: int,
    window: int,
    min_chars: int,
    skip_type: str,
) -> HintScan:
    """Live memories in seq (after_seq, after_seq + window] without hints or a hint job.

    `skip_type` is a memory type never hinted (document chunks); `done` once the window
    reached the newest memory.
    """
    rows = conn.execute(
        NEEDING_HINTS,
        {
            "after": after_seq,
            "window": window,
            "skip_type": skip_type,
            "min_chars": min_chars,
            "job_type": job_type,
        },
    ).fetchall()
    newest = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memories").fetchone()[0])
    next_seq = after_seq + window
    return HintScan(
        tuple((str(r["agent_id"]), str(r["id"])) for r in rows), next_seq, next_seq >= newest
    )


# BM25 over the hints of the agent's live memories, one row per memory (its best hint).
# `{filters}` is recall/filters.py's fragment over `m`; bare `hint` takes the MIN(bm25) row.
# Ranked inside the FTS index first (`:pool` best rows), like the lexical channel's fast path;
# CROSS JOIN keeps SQLite driving from those rows instead of scanning the agent's memories.
HINT_SEARCH = """
WITH pool AS MATERIALIZED (
    SELECT rowid AS seq, bm25(memory_hints_fts) AS bm25 FROM memory_hints_fts
    WHERE memory_hints_fts MATCH :match ORDER BY bm25 LIMIT :pool
)
SELECT m.id AS id, h.hint AS hint, MIN(pool.bm25) AS bm25,
       (SELECT COUNT(*) FROM pool) AS pool_size
FROM pool CROSS JOIN memory_hints h ON h.seq = pool.seq
CROSS JOIN memories m ON m.id = h.memory_id
WHERE h.agent_id = :agent_id AND {filters}
GROUP BY m.id
ORDER BY bm25, m.id
LIMIT :k
"""

# PostgreSQL: the generated `hint_tsv` (GIN) for the FTS5 table, the same MATCH string read by
# websearch_to_tsquery; `bm25` is -ts_rank (normalised into (0, 1)), lower is better as bm25().
# DISTINCT ON keeps each memory's best hint (SQLite's bare column beside MIN()); a NULL
# :pool is no limit.
HINT_SEARCH_PG = """
WITH pool AS MATERIALIZED (
    SELECT h.seq, -ts_rank(h.hint_tsv, query, 32) AS bm25
    FROM memory_hints h, websearch_to_tsquery('signet_unicode61', :match) AS query
    WHERE h.hint_tsv @@ query ORDER BY bm25, h.seq LIMIT :pool
), best AS (
    SELECT DISTINCT ON (m.id) m.id AS id, h.hint AS hint, pool.bm25 AS bm25
    FROM pool JOIN memory_hints h ON h.seq = pool.seq
    JOIN memories m ON m.id = h.memory_id
    WHERE h.agent_id = :agent_id AND {filters}
    ORDER BY m.id, pool.bm25
)
SELECT id, hint, bm25, (SELECT COUNT(*) FROM pool) AS pool_size
FROM best ORDER BY bm25, id LIMIT :k
"""
CAPPED_HINT_DOC_COUNT_PG = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM memory_hints
    WHERE hint_tsv @@ websearch_to_tsquery('signet_unicode61', :term) LIMIT :cap
) AS capped
"""

CAPPED_HINT_DOC_COUNT = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM memory_hints_fts WHERE memory_hints_fts MATCH :term LIMIT :cap
)
"""


@dataclass(frozen=True, slots=True)
class HintMatch:
    """A memory whose hint matched: the best hint's text and its FTS5 bm25 (negative)."""

    memory_id: str
    hint: str
    bm25: float


def search_hints(
    conn: Connection, match: str, filters: str, params: Mapping[str, Any], k: int, pool: int
) -> list[HintMatch]:
    """Best-first memories by their best matching hint; `filters`/`params` scope `m`.

    The caller passes `recall/filters.py: filter_sql` output, which holds `:agent_id`. The
    `pool` best-ranked hints are scoped first; when scope and filters leave fewer than `k`
    of a full pool, every match is scoped (exact, slower).
    """
    args = {**params, "match": match, "k": k}
    postgres = is_postgres(conn)
    sql = (HINT_SEARCH_PG if postgres else HINT_SEARCH).format(filters=filters)
    rows = conn.execute(sql, {**args, "pool": pool}).fetchall()
    if len(rows) < k and (not rows or int(rows[0]["pool_size"]) >= pool):
        full = hint_documents(conn, match, pool + 1) > pool
        if full:  # every row: LIMIT -1 on SQLite, LIMIT NULL on PostgreSQL
            rows = conn.execute(sql, {**args, "pool": None if postgres else -1}).fetchall()
    return [HintMatch(str(r["id"]), str(r["hint"]), float(r["bm25"])) for r in rows]


def hint_documents(conn: Connection, term_match: str, cap: int) -> int:
    """How many hints hold the term (an FTS5 match expression), counting no further than cap."""
    sql = CAPPED_HINT_DOC_COUNT_PG if is_postgres(conn) else CAPPED_HINT_DOC_COUNT
    return scalar_int(conn, sql, {"term": term_match, "cap": cap})


def hint_rows(conn: Connection) -> int:
    """Rows in the hints FTS index (every agent's, as FTS5's IDF counts them); on
    PostgreSQL the hints table's rows (a count: no averages record to read)."""
    if is_postgres(conn):
        return scalar_int(conn, "SELECT COUNT(*) FROM memory_hints")
    row = conn.execute("SELECT block FROM memory_hints_fts_data WHERE id = 1").fetchone()
    return 0 if row is None or not row[0] else leading_varint(bytes(row[0]))
