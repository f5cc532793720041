"""Capped FTS document counts per query term, remembered for a short while.

The lexical plan admits query terms rarest first within a postings budget, so it counts each
term's documents first (capped at the budget: up to 10,000 postings read per common term).
Counts only steer that plan: one a few seconds old admits or drops a term slightly early or
late, nothing more. The common terms are both the costly ones to count and the ones queries
repeat, so remembering them for `max_age_s` takes most of the planning cost off a recall.

Only counts of at least `min_cached` are remembered: a small count is cheap to take again,
and a remembered 0 would hide a just-remembered memory holding a new word.

On PostgreSQL the uncached terms of a query are counted in one statement (`count_many`),
except the common ones of a large `memories` (more than EXACT_TOTAL_ROWS rows): a count
there visits every row holding the term, up to the cap (~20 ms for a term in 1,000-10,000 of
100,000 rows, against ~2 ms under 150), so a term whose lexeme ANALYZE's statistics of the
column (`pg_stats.most_common_elems`, refreshed with the totals) put in at least
`estimated_from` rows is given that estimate, capped (a 30,000-row sample: a few percent off,
a small change in IDF). A rarer term, or one ANALYZE has not seen, is counted exactly, so a
new word is never planned away.
It has no FTS5 averages record: BM25's row count and token total (`corpus_totals`) are
counted over `memories`, exactly up to EXACT_TOTAL_ROWS rows, from a sample of about
TOTAL_SAMPLE_ROWS rows beyond. `TermCounts.totals` remembers them for `max_age_s` once the
table holds `min_cached` rows; below, until its row count or newest row changes (a content
edit that keeps both is seen when the totals expire).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from signet_desktop.recall.sanitize import match_expression
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

DEFAULT_MAX_AGE_S = 30.0
DEFAULT_MAX_ENTRIES = 4096
DEFAULT_MIN_CACHED = 1000
DEFAULT_ESTIMATED_FROM = 1000  # PostgreSQL: documents from which a statistics estimate stands
EXACT_TOTAL_ROWS = 5_000
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
# config drops none), as FTS5 counts a row's tokens; generated with the row
# (migrations/postgres/0018).
ROW_TOKENS = "content_tokens"
MEMORY_ROWS_PG = "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM memories"
MEMORY_TOKENS_PG = f"SELECT COALESCE(SUM({ROW_TOKENS}), 0) FROM memories"
MEMORY_TOKENS_SAMPLED_PG = (
    f"SELECT COUNT(*), COALESCE(AVG({ROW_TOKENS}), 0) FROM memories TABLESAMPLE SYSTEM (:percent)"
)


def memory_rows(conn: Connection) -> tuple[int, int]:
    """PostgreSQL: the rows of `memories` and its newest seq."""
    row = conn.execute(MEMORY_ROWS_PG).fetchone()
    return int(row[0]), int(row[1])


def corpus_totals(conn: Connection, rows: int | None = None) -> tuple[int, int]:
    """PostgreSQL: (rows, tokens) of `memories`, what FTS5's averages record holds; the
    tokens counted exactly up to EXACT_TOTAL_ROWS rows, estimated from a sample beyond (or
    counted when the sample of pages came back empty)."""
    rows = memory_rows(conn)[0] if rows is None else rows
    if rows > EXACT_TOTAL_ROWS:
        percent = min(100.0, 100.0 * TOTAL_SAMPLE_ROWS / rows)
        sampled, average = conn.execute(MEMORY_TOKENS_SAMPLED_PG, {"percent": percent}).fetchone()
        if int(sampled):
            return rows, round(float(average) * rows)
    return rows, int(conn.execute(MEMORY_TOKENS_PG).fetchone()[0])


# PostgreSQL: several terms' capped counts in one statement.
CAPPED_DOC_COUNTS_MANY_PG = {
    "memories_fts": """
SELECT (SELECT COUNT(*) FROM (
    SELECT 1 FROM memories
    WHERE content_tsv @@ websearch_to_tsquery('signet_porter', t.term) LIMIT :cap
) AS capped) AS documents
FROM unnest(CAST(:terms AS text[])) WITH ORDINALITY AS t(term, i)
ORDER BY t.i
""",
    "transcript_turns_fts": """
SELECT (SELECT COUNT(*) FROM (
    SELECT 1 FROM transcript_turns
    WHERE text_tsv @@ websearch_to_tsquery('signet_porter', t.term) LIMIT :cap
) AS capped) AS documents
FROM unnest(CAST(:terms AS text[])) WITH ORDINALITY AS t(term, i)
ORDER BY t.i
""",
}


# PostgreSQL: ANALYZE's most common lexemes of memories.content_tsv and the share of rows
# holding each (the freqs array ends in three summary numbers, which pair with no lexeme).
COMMON_LEXEMES_PG = """
SELECT e.lexeme AS lexeme, e.share AS share
FROM pg_stats s,
     unnest(CAST(CAST(s.most_common_elems AS text) AS text[]), s.most_common_elem_freqs)
         AS e(lexeme, share)
WHERE s.schemaname = current_schema() AND s.tablename = 'memories'
  AND s.attname = 'content_tsv' AND e.lexeme IS NOT NULL
"""
# The one lexeme the lexical statement (`recall.lexical.TS_BM25`) matches each token by.
TOKEN_LEXEMES_PG = """
SELECT t.token AS token,
       (tsvector_to_array(to_tsvector('signet_porter', fts_words(t.token))))[1] AS lexeme
FROM unnest(CAST(:tokens AS text[])) AS t(token)
"""
MAX_LEXEMES = 65_536  # remembered token -> lexeme pairs (the parser's answer never changes)


def one_lexeme(token: str) -> bool:
    """Whether PostgreSQL's parser surely reads `token` as one word (an ASCII letter-and-digit
    run: asciiword, numword or uint), so its first lexeme counts only where its phrase
    matches."""
    return token.isascii() and token.isalnum()


def count_many(
    conn: Connection, terms: Sequence[str], cap: int, table: str = "memories_fts"
) -> list[int]:
    """`count_documents` of each term, in one statement on PostgreSQL."""
    if not terms:
        return []
    if not is_postgres(conn):
        return [count_documents(conn, term, cap, table) for term in terms]
    expressions = [match_expression([term]) or "" for term in terms]
    params = {"terms": expressions, "cap": cap}
    return [int(r[0]) for r in conn.execute(CAPPED_DOC_COUNTS_MANY_PG[table], params).fetchall()]


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
        estimated_from: int = DEFAULT_ESTIMATED_FROM,
        estimate_above_rows: int = EXACT_TOTAL_ROWS,
    ) -> None:
        if table not in CAPPED_DOC_COUNTS:
            raise ValueError(f"no document count for {table!r}")
        self._table = table
        self._estimated_from = max(1, estimated_from)
        self._estimate_above_rows = estimate_above_rows
        self._common: tuple[dict[str, float], float] | None = None
        self._lexemes: dict[str, str | None] = {}
        self._max_age_s = max_age_s
        self._max_entries = max_entries
        self._min_cached = max(1, min_cached)
        self._clock = clock
        self._entries: dict[tuple[str, int], tuple[int, float]] = {}
        self._totals: tuple[tuple[int, int], tuple[int, int], float] | None = None
        self._lock = threading.Lock()

    def totals(self, conn: Connection) -> tuple[int, int]:
        """`corpus_totals` of `memories`, remembered (see the module's docstring)."""
        now = self._clock()
        with self._lock:
            cached = self._totals
        fresh = cached is not None and now - cached[2] < self._max_age_s
        if cached is not None and fresh and cached[0][0] >= self._min_cached:
            return cached[0]
        shape = memory_rows(conn)  # (rows, newest seq): a write since changes it
        if cached is not None and fresh and cached[1] == shape:
            return cached[0]
        value = corpus_totals(conn, shape[0])
        with self._lock:
            self._totals = (value, shape, now)
        return value

    def counts(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """`count` of each term, the uncached ones counted together (`count_many`)."""
        now = self._clock()
        found: dict[str, int] = {}
        with self._lock:
            for term in terms:
                cached = self._entries.get((term, cap))
                if cached is not None and now - cached[1] < self._max_age_s:
                    found[term] = cached[0]
        missing = [term for term in dict.fromkeys(terms) if term not in found]
        if missing and self._table == "memories_fts" and is_postgres(conn):
            found.update(self._estimates(conn, missing, cap))
            missing = [term for term in missing if term not in found]
        for term, value in zip(missing, count_many(conn, missing, cap, self._table), strict=True):
            found[term] = value
            if value >= self._min_cached:
                with self._lock:
                    if len(self._entries) >= self._max_entries:
                        self._evict(now)
                    self._entries[(term, cap)] = (value, now)
        return found

    def count(self, conn: Connection, term: str, cap: int) -> int:
        """One term's `counts`: the cached count when fresh, else the statistics' estimate
        (PostgreSQL, common terms) or a new count (remembered)."""
        return self.counts(conn, [term], cap)[term]

    def _estimates(self, conn: Connection, terms: Sequence[str], cap: int) -> dict[str, int]:
        """PostgreSQL: the statistics' estimate of each term common enough to stand on one
        (the module docstring), capped; none while `memories` is small."""
        rows = self.totals(conn)[0]
        if rows <= self._estimate_above_rows:
            return {}
        common = self._common_lexemes(conn)
        if not common:
            return {}
        estimates = {}
        for term, lexeme in self._lexemes_of(conn, [t for t in terms if one_lexeme(t)]).items():
            share = common.get(lexeme) if lexeme is not None else None
            if share is not None and share * rows >= self._estimated_from:
                estimates[term] = min(cap, round(share * rows))
        return estimates

    def _common_lexemes(self, conn: Connection) -> dict[str, float]:
        """ANALYZE's common lexemes and their row shares, read again after `max_age_s`."""
        now = self._clock()
        with self._lock:
            cached = self._common
        if cached is not None and now - cached[1] < self._max_age_s:
            return cached[0]
        common = {
            str(row["lexeme"]): float(row["share"])
            for row in conn.execute(COMMON_LEXEMES_PG).fetchall()
        }
        with self._lock:
            self._common = (common, now)
        return common

    def _lexemes_of(self, conn: Connection, terms: Sequence[str]) -> dict[str, str | None]:
        """Each term's lexeme as the lexical statement matches it (remembered)."""
        with self._lock:
            known = {t: self._lexemes[t] for t in terms if t in self._lexemes}
        unknown = [t for t in terms if t not in known]
        if unknown:
            rows = conn.execute(TOKEN_LEXEMES_PG, {"tokens": unknown}).fetchall()
            parsed = {str(row["token"]): row["lexeme"] for row in rows}
            with self._lock:
                if len(self._lexemes) + len(parsed) > MAX_LEXEMES:
                    self._lexemes.clear()
                self._lexemes.update(parsed)
            known.update(parsed)
        return known

    def _evict(self, now: float) -> None:
        fresh = {k: v for k, v in self._entries.items() if now - v[1] < self._max_age_s}
        self._entries = fresh if len(fresh) < self._max_entries else {}
