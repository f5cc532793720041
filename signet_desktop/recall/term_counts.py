"""Capped FTS document counts per query term, remembered for a short while.

The lexical plan admits query terms rarest first within a postings budget, so it counts each
term's documents first (capped at the budget: up to 10,000 postings read per common term).
Counts only steer that plan: one a few seconds old admits or drops a term slightly early or
late, nothing more. The common terms are both the costly ones to count and the ones queries
repeat, so remembering them for `max_age_s` takes most of the planning cost off a recall.

Only counts of at least `min_cached` are remembered: a small count is cheap to take again,
and a remembered 0 would hide a just-remembered memory holding a new word.

PostgreSQL has no FTS5 averages record: BM25's row count and token total (`corpus_totals`)
are counted over `memories`, exactly up to EXACT_TOTAL_ROWS rows, from a sample of about
TOTAL_SAMPLE_ROWS rows beyond, and remembered like a count once the table holds
`min_cached` rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from signet_desktop.recall.sanitize import match_expression
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

DEFAULT_MAX_AGE_S = 30.0
DEFAULT_MAX_ENTRIES = 4096
DEFAULT_MIN_CACHED = 1000
EXACT_TOTAL_ROWS = 20_000
TOTAL_SAMPLE_ROWS = 5_000

CAPPED_DOC_COUNT = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM memories_fts WHERE memories_fts MATCH :term LIMIT :cap
)
"""
# The same count over each FTS index a channel plans against (fixed statements by name).
CAPPED_DOC_COUNTS = {
    "memories_fts": CAPPED_DOC_COUNT,
    "transcript_turns_fts": """
SELECT COUNT(*) FROM (
    SELECT 1 FROM transcript_turns_fts WHERE transcript_turns_fts MATCH :term LIMIT :cap
)
""",
}

# PostgreSQL: the content tables' generated tsvector columns (GIN), the term parsed with the
# column's configuration (both Porter-stemmed, as the FTS5 tables are).
CAPPED_DOC_COUNTS_PG = {
    "memories_fts": """
SELECT COUNT(*) FROM (
    SELECT 1 FROM memories
    WHERE content_tsv @@ websearch_to_tsquery('signet_porter', :term) LIMIT :cap
) AS capped
""",
    "transcript_turns_fts": """
SELECT COUNT(*) FROM (
    SELECT 1 FROM transcript_turns
    WHERE text_tsv @@ websearch_to_tsquery('signet_porter', :term) LIMIT :cap
) AS capped
""",
}


# A row's token count: every position of every lexeme (to_tsvector numbers each word, the
# config drops none), as FTS5 counts a row's tokens.
ROW_TOKENS = "(SELECT SUM(cardinality(u.positions)) FROM unnest(content_tsv) AS u)"
MEMORY_ROWS_PG = "SELECT COUNT(*) FROM memories"
MEMORY_TOKENS_PG = f"SELECT COALESCE(SUM({ROW_TOKENS}), 0) FROM memories"
MEMORY_TOKENS_SAMPLED_PG = (
    f"SELECT COALESCE(AVG({ROW_TOKENS}), 0) FROM memories TABLESAMPLE SYSTEM (:percent)"
)


def corpus_totals(conn: Connection) -> tuple[int, int]:
    """PostgreSQL: (rows, tokens) of `memories`, what FTS5's averages record holds; the
    tokens counted exactly up to EXACT_TOTAL_ROWS rows, estimated from a sample beyond."""
    rows = int(conn.execute(MEMORY_ROWS_PG).fetchone()[0])
    if rows <= EXACT_TOTAL_ROWS:
        return rows, int(conn.execute(MEMORY_TOKENS_PG).fetchone()[0])
    percent = min(100.0, 100.0 * TOTAL_SAMPLE_ROWS / rows)
    average = float(conn.execute(MEMORY_TOKENS_SAMPLED_PG, {"percent": percent}).fetchone()[0])
    return rows, round(average * rows)


def count_documents(conn: Connection, term: str, cap: int, table: str = "memories_fts") -> int:
    """How many documents of `table` hold `term`, counting no further than `cap`."""
    statements = CAPPED_DOC_COUNTS_PG if is_postgres(conn) else CAPPED_DOC_COUNTS
    row = conn.execute(statements[table], {"term": match_expression([term]), "cap": cap}).fetchone()
    return int(row[0])


class TermCounts:
    """A thread-safe cache of large `count_documents` results, expiring after `max_age_s`."""

    def __init__(
        self,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        min_cached: int = DEFAULT_MIN_CACHED,
        clock: Callable[[], float] = time.monotonic,
        table: str = "memories_fts",
    ) -> None:
        if table not in CAPPED_DOC_COUNTS:
            raise ValueError(f"no document count for {table!r}")
        self._table = table
        self._max_age_s = max_age_s
        self._max_entries = max_entries
        self._min_cached = max(1, min_cached)
        self._clock = clock
        self._entries: dict[tuple[str, int], tuple[int, float]] = {}
        self._totals: tuple[tuple[int, int], float] | None = None
        self._lock = threading.Lock()

    def totals(self, conn: Connection) -> tuple[int, int]:
        """`corpus_totals`, remembered for `max_age_s` once the table holds `min_cached` rows."""
        now = self._clock()
        with self._lock:
            cached = self._totals
        if cached is not None and now - cached[1] < self._max_age_s:
            return cached[0]
        value = corpus_totals(conn)
        with self._lock:
            self._totals = (value, now) if value[0] >= self._min_cached else None
        return value

    def count(self, conn: Connection, term: str, cap: int) -> int:
        """The cached count when fresh, else a new count (remembered)."""
        key, now = (term, cap), self._clock()
        with self._lock:
            cached = self._entries.get(key)
        if cached is not None and now - cached[1] < self._max_age_s:
            return cached[0]
        value = count_documents(conn, term, cap, self._table)
        if value < self._min_cached:
            return value
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._evict(now)
            self._entries[key] = (value, now)
        return value

    def _evict(self, now: float) -> None:
        fresh = {k: v for k, v in self._entries.items() if now - v[1] < self._max_age_s}
        self._entries = fresh if len(fresh) < self._max_entries else {}
