"""The lexical channel: BM25 over memories_fts, scoped and filtered, scored against the query.

Calibration: a hit's score is its |bm25| divided by the query's *ceiling*, the sum of every
query term's IDF (the BM25 of a memory of average length holding each term once), capped at 1:

    score = min(1, |bm25| / sum(idf(t) for t in query terms))
    idf(t) = max(1e-6, ln((N - n_t + 0.5) / (n_t + 0.5)))      (FTS5's own IDF)

with N the rows of the FTS index (read from its averages record) and n_t each term's document
count. Terms no memory holds count too (n_t = 0): a memory matching one word of a five-word
question covers only that word's share. So the score says how much of what the query asks a
memory holds, independent of the other hits: the same number means the same thing for every
query, and a batch with one weak match no longer scores it 1.0. `raw` keeps FTS5's bm25.

Cost is bounded by a postings budget: query terms are admitted rarest first until their
document counts would pass POSTINGS_BUDGET; the most common remaining terms (lowest IDF) are
neither matched nor scored. When even the rarest term is that common, the search covers the
newest SATURATED_WINDOW memories only. Small corpora never reach either limit.
`LexicalChannel` runs it as the engine's `lexical` channel, on the caller's thread. On
PostgreSQL (`ts_search`) the same plan, formula and calibration run over the GIN-indexed
tsvector, BM25 computed in the statement (`ts_bm25_statement`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.channels import ChannelOutcome, ChannelRequest, Finish, StageClock
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.sanitize import match_expression, query_tokens
from signet_desktop.recall.term_counts import (
    TermCounts,
    corpus_totals,
    count_documents,
    count_many,
    one_lexeme,
)
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.fts_records import leading_varint

LEXICAL_TOP_K = 50
OVERFETCH = 4  # the fast path ranks k * OVERFETCH index rows before scope and filters
POSTINGS_BUDGET = 10_000
SATURATED_WINDOW = 20_000
NEWEST_MEMORY_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM memories"
MIN_IDF = 1e-6  # FTS5's floor for a term in more than half of the rows
FIRST_PASS_POSTINGS = 1_000  # PostgreSQL: the rarest terms' rows scored first (`bm25_top_k`)

# FTS5's averages record (id 1 of the %_data table): varints, the row count first.
FTS_AVERAGES = "SELECT block FROM memories_fts_data WHERE id = 1"
# PostgreSQL has no averages record: the rows of the table each FTS5 index covers, counted.
FTS_ROWS_PG = {
    FTS_AVERAGES: "SELECT COUNT(*) FROM memories",
    "SELECT block FROM transcript_turns_fts_data WHERE id = 1": (
        "SELECT COUNT(*) FROM transcript_turns"
    ),
}

# Fast path: rank inside the FTS index alone, then scope/filter the small ranked pool.
BM25_RANKED_POOL = """
WITH pool AS MATERIALIZED (
    SELECT rowid AS seq, bm25(memories_fts) AS bm25
    FROM memories_fts WHERE memories_fts MATCH :match AND rowid >= :min_seq
    ORDER BY bm25 LIMIT :pool
)
SELECT m.id AS id, pool.bm25 AS bm25, (SELECT COUNT(*) FROM pool) AS pool_size
FROM pool JOIN memories m ON m.seq = pool.seq
WHERE {filters}
ORDER BY pool.bm25
LIMIT :k
"""

# Exact path: filter every match (used when the ranked pool was filtered too thin).
BM25_FILTERED = """
SELECT m.id AS id, bm25(memories_fts) AS bm25
FROM memories_fts
JOIN memories m ON m.seq = memories_fts.rowid
WHERE memories_fts MATCH :match AND memories_fts.rowid >= :min_seq AND {filters}
ORDER BY bm25
LIMIT :k
"""


# PostgreSQL: FTS5's bm25() computed in the statement. The generated tsvector (GIN, parsed
# with the column's own Porter configuration, migrations/postgres/0006) finds the rows holding
# any admitted term; each row's term frequencies and length in tokens are read from its
# generated `content_terms` (lexeme -> positions) and `content_tokens` (migrations/postgres/
# 0018): one key lookup per term, where unnesting the row's tsvector cost about as much again
# as finding the row. The sum is written out term by term (`ts_bm25_statement`), each term's
# lexeme parsed in the statement from its token as the column was (a constant the planner
# folds once); a term PostgreSQL parses into several lexemes (FTS5 keeps a letter-and-digit
# run whole) counts by the first of them, and a term the row lacks adds nothing (NULL).
# `:idf<i>` are FTS5's IDF of each term over the corpus totals (`term_counts.corpus_totals`);
# `bm25` is negated as FTS5 returns it.
K1 = 1.2  # FTS5's bm25() defaults
B = 0.75
TS_CONFIG = "signet_porter"
TS_BM25_TERM = (
    f"COALESCE(CAST(:idf{{i}} AS float8) * {K1 + 1} / (1.0 + {K1} * ({1 - B} + {B} "
    "* CAST(m.content_tokens AS float8) / :avgdl) / CAST(m.content_terms ->> "
    f"(tsvector_to_array(to_tsvector('{TS_CONFIG}', fts_words(CAST(:token{{i}} AS text)))))[1] "
    "AS float8)), 0)"
)
TS_BM25 = f"""
SELECT m.id AS id, -({{score}}) AS bm25
FROM memories m, websearch_to_tsquery('{TS_CONFIG}', :query) AS query
WHERE m.content_tsv @@ query AND m.seq >= :min_seq AND {{filters}}
ORDER BY bm25, m.seq
LIMIT :k
"""


def ts_bm25_statement(terms: int, filters: str) -> str:
    """`TS_BM25` summing `terms` matched terms (`:token0`, `:idf0`, ...), under `filters`.

    Each term adds idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)), written as
    idf * (k1 + 1) / (1 + k1 * (1 - b + b * dl / avgdl) / tf) so that tf is read once.
    """
    score = " + ".join(TS_BM25_TERM.format(i=i) for i in range(terms))
    return TS_BM25.format(score=score, filters=filters)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """A memory id with its lexical evidence."""

    memory_id: str
    evidence: ChannelEvidence


@dataclass(frozen=True, slots=True)
class TermPlan:
    """Which query terms are matched, which were too common to afford, and the rowid floor."""

    matched: tuple[str, ...]
    dropped: tuple[str, ...]
    min_seq: int
    counts: Mapping[str, int]  # every query term's (capped) document count, 0 when absent


def plan_terms(conn: Connection, tokens: list[str], cache: TermCounts | None = None) -> TermPlan:
    """Admit terms rarest first within the postings budget (document counts are capped)."""
    cap = POSTINGS_BUDGET + 1
    if cache is not None:
        counts = cache.counts(conn, tokens, cap)
    else:
        counts = dict(zip(tokens, count_many(conn, tokens, cap), strict=True))
    present = sorted((t for t in tokens if counts[t] > 0), key=lambda t: counts[t])
    matched, min_seq = admit_rarest(conn, present, counts, POSTINGS_BUDGET, NEWEST_MEMORY_SEQ)
    dropped = tuple(t for t in present if t not in matched)
    return TermPlan(tuple(matched), dropped, min_seq, counts)


def admit_rarest(
    conn: Connection,
    present: list[str],
    counts: Mapping[str, int],
    budget: int,
    newest_seq: str,
) -> tuple[list[str], int]:
    """The `present` terms (rarest first) admitted within `budget` postings, and the seq floor.

    The rarest term is always admitted; when even it is counted past `budget` the floor keeps
    the newest SATURATED_WINDOW rows (`newest_seq`: the statement reading the highest seq).
    """
    matched = rarest_prefix(present, counts, budget)
    min_seq = 0
    if matched and counts[matched[0]] >= budget + 1:
        newest = conn.execute(newest_seq).fetchone()[0]
        min_seq = max(0, int(newest) - SATURATED_WINDOW + 1)
    return matched, min_seq


def fts_rows(
    conn: Connection, averages: str = FTS_AVERAGES, term_counts: TermCounts | None = None
) -> int:
    """Rows in the FTS index (every agent's, as FTS5's IDF counts them), from its averages
    (`averages`: the statement reading another index's averages record). PostgreSQL: the
    covered table's rows (`FTS_ROWS_PG`), for memories remembered by `term_counts` when given
    (a COUNT(*) of 100,000 rows took ~15 ms of every recall)."""
    if is_postgres(conn):
        if term_counts is not None and averages == FTS_AVERAGES:
            return term_counts.totals(conn)[0]
        return int(conn.execute(FTS_ROWS_PG[averages]).fetchone()[0])
    row = conn.execute(averages).fetchone()
    if row is None or not row[0]:
        return 0
    return leading_varint(bytes(row[0]))


def idf(documents: int, rows: int) -> float:
    """FTS5's BM25 IDF of a term found in `documents` of `rows`."""
    return max(MIN_IDF, math.log((rows - documents + 0.5) / (documents + 0.5)))


def query_ceiling(counts: Mapping[str, int], rows: int) -> float:
    """What the query could score: the sum of its terms' IDF (matched, dropped or absent)."""
    return sum(idf(n, max(rows, n)) for n in counts.values())


def lexical_search(
    conn: Connection,
    text: str,
    agent_id: str,
    filters: RecallFilters,
    k: int = LEXICAL_TOP_K,
    term_counts: TermCounts | None = None,
    counted: dict[str, int] | None = None,
) -> list[LexicalHit]:
    """Top-k memories by BM25, scored against the query's ceiling into (0, 1].

    `term_counts` remembers the planning counts between calls (the engine keeps one);
    `counted`, when given, receives the counts this plan took (`ChannelRequest.term_counts`).
    On PostgreSQL: `ts_search`.
    """
    if is_postgres(conn):
        return ts_search(conn, text, agent_id, filters, k, term_counts, counted)
    plan = plan_terms(conn, query_tokens(text), term_counts)
    if counted is not None:
        counted.update(plan.counts)
    match = match_expression(plan.matched)
    if match is None:
        return []
    where, params = filter_sql(agent_id, filters)
    params = {**params, "match": match, "k": k, "min_seq": plan.min_seq}
    rows = _ranked_pool(conn, where, params, pool=k * OVERFETCH)
    if rows is None:
        rows = conn.execute(BM25_FILTERED.format(filters=where), params).fetchall()
    return _calibrate(rows, query_ceiling(plan.counts, fts_rows(conn)))


def ts_search(
    conn: Connection,
    text: str,
    agent_id: str,
    filters: RecallFilters,
    k: int,
    term_counts: TermCounts | None = None,
    counted: dict[str, int] | None = None,
) -> list[LexicalHit]:
    """PostgreSQL's lexical search: the terms planned as on SQLite (`plan_terms`), the best k
    by FTS5's BM25 computed in the statement (`ts_bm25_statement`, through `bm25_top_k`), scored
    against the same ceiling."""
    plan = plan_terms(conn, query_tokens(text), term_counts)
    if counted is not None:
        counted.update(plan.counts)
    if not plan.matched:
        return []
    rows, tokens = term_counts.totals(conn) if term_counts else corpus_totals(conn)
    where, params = filter_sql(agent_id, filters, postgres=True)
    idfs = {t: idf(plan.counts[t], max(rows, plan.counts[t])) for t in plan.matched}
    params = {
        **params,
        **{f"token{i}": t for i, t in enumerate(plan.matched)},
        **{f"idf{i}": idfs[t] for i, t in enumerate(plan.matched)},
        "avgdl": tokens / rows if rows and tokens else 1.0,
        "min_seq": plan.min_seq,
        "k": k,
    }
    statement = ts_bm25_statement(len(plan.matched), where)

    def search(terms: Sequence[str]) -> list[Any]:
        query = " or ".join(f'"{token}"' for token in terms)  # word characters
        return list(conn.execute(statement, {**params, "query": query}).fetchall())

    found = bm25_top_k(search, plan.matched, plan.counts, idfs, k)
    return _calibrate(found, query_ceiling(plan.counts, rows))


def bm25_top_k(
    search: Callable[[Sequence[str]], list[Any]],
    matched: Sequence[str],
    counts: Mapping[str, int],
    idfs: Mapping[str, float],
    k: int,
) -> list[Any]:
    """The best k rows by BM25 over every `matched` term (rarest first), exactly, matching
    fewer rows where it can (MaxScore pruning). `search(terms)` returns the best k rows among
    those holding any of `terms`, scored by every matched term.

    The rows of the rarest terms (FIRST_PASS_POSTINGS) are scored first; their k-th score is
    a floor the answer cannot go below. A term adds less than (k1 + 1) * idf to any row, so a
    row holding only the most common terms whose bounds sum to no more than that floor cannot
    enter the best k: those terms match nothing in the second search, which is skipped when
    the first already covered every term left. A token PostgreSQL may parse into several
    lexemes (non-ASCII, `one_lexeme`) can add its first lexeme's score to a row its phrase
    did not match, so its bound always counts.
    """
    first = rarest_prefix(matched, counts, FIRST_PASS_POSTINGS)
    if len(first) == len(matched):
        return search(matched)
    rows = search(first)
    floor = abs(float(rows[-1]["bm25"])) * (1 - 1e-9) if len(rows) >= k else 0.0
    bound = sum((K1 + 1) * idfs[t] for t in matched if not one_lexeme(t))
    skipped: set[str] = set()
    for term in reversed(matched):  # the most common first
        extra = (K1 + 1) * idfs[term] if one_lexeme(term) else 0.0
        if bound + extra > floor:
            break
        bound += extra
        skipped.add(term)
    needed = [t for t in matched if t not in skipped]
    return rows if set(needed) <= set(first) else search(needed)


def rarest_prefix(matched: Sequence[str], counts: Mapping[str, int], postings: int) -> list[str]:
    """The first (rarest) `matched` terms whose document counts sum to at most `postings`,
    at least one."""
    prefix: list[str] = []
    total = 0
    for term in matched:
        if prefix and total + counts[term] > postings:
            break
        prefix.append(term)
        total += counts[term]
    return prefix


def held_scores(
    conn: Connection,
    rows: Sequence[Any],
    tokens: Sequence[str],
    term_counts: TermCounts | None = None,
    *,
    table: str = "memories_fts",
    averages: str = FTS_AVERAGES,
) -> list[tuple[float, Any]]:
    """PostgreSQL rows (each with `held`: the 1-based query terms it holds) scored by the IDF
    of those terms over the query's ceiling, best first (ties keep their order). `table` and
    `averages` name the FTS5 index whose counts stand in (`recall/term_counts.py`)."""
    cap = POSTINGS_BUDGET + 1
    counts = {
        t: term_counts.count(conn, t, cap) if term_counts else count_documents(conn, t, cap, table)
        for t in tokens
    }
    total = fts_rows(conn, averages, term_counts)
    weights = [idf(counts[t], max(total, counts[t])) for t in tokens]
    ceiling = query_ceiling(counts, total) or 1.0
    return sorted(
        ((min(1.0, sum(weights[i - 1] for i in r["held"]) / ceiling), r) for r in rows),
        key=lambda pair: -pair[0],
    )


def _ranked_pool(
    conn: Connection, where: str, params: dict[str, Any], pool: int
) -> list[Any] | None:
    """Rows from the fast path, or None when filters may have hidden better matches."""
    rows = conn.execute(BM25_RANKED_POOL.format(filters=where), {**params, "pool": pool}).fetchall()
    if len(rows) >= params["k"]:
        return list(rows)
    pool_size = int(rows[0]["pool_size"]) if rows else _pool_size(conn, params, pool)
    return list(rows) if pool_size < pool else None  # the pool held every match: exact


def _pool_size(conn: Connection, params: dict[str, Any], pool: int) -> int:
    row = conn.execute(
        "SELECT COUNT(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH :match "
        "AND rowid >= :min_seq LIMIT :pool)",
        {"match": params["match"], "min_seq": params["min_seq"], "pool": pool},
    ).fetchone()
    return int(row[0])


def _calibrate(rows: list[Any], ceiling: float) -> list[LexicalHit]:
    if not rows:
        return []
    ceiling = ceiling or max(abs(float(r["bm25"])) for r in rows) or 1.0
    return [
        LexicalHit(
            str(r["id"]),
            ChannelEvidence(
                score=min(1.0, abs(float(r["bm25"])) / ceiling), rank=i + 1, raw=float(r["bm25"])
            ),
        )
        for i, r in enumerate(rows)
    ]


class LexicalChannel:
    """The `lexical` recall channel: BM25 over the keyword text, timed as stage `lexical`."""

    name = "lexical"

    def __init__(self, term_counts: TermCounts | None = None) -> None:
        self._term_counts = TermCounts() if term_counts is None else term_counts

    def start(self, conn: Connection, request: ChannelRequest, pool: Executor) -> Finish:
        """Nothing to start: BM25 runs in `finish`, on the caller's thread."""

        def finish(clock: StageClock) -> ChannelOutcome:
            with clock.stage(self.name):
                hits = lexical_search(
                    conn,
                    request.keyword_text,
                    request.agent_id,
                    request.filters,
                    k=request.k,
                    term_counts=self._term_counts,
                    counted=request.term_counts,
                )
            return ChannelOutcome(hits)

        return finish
