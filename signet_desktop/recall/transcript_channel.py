"""The transcript channel: BM25 over retained conversation turns, scoped by agent and project.

Turns are evidence beside memories, not memories: this channel ranks `transcript_turns_fts`
(migration 0014) and returns turn hits the recall service places after the memories
(`service/transcripts/recall.py`). Scores are calibrated like the lexical channel's (|bm25| over
the query's IDF ceiling, capped at 1; `recall/lexical.py`), so one threshold means the same
on both. Cost is bounded the same way: terms admitted rarest first within a postings budget,
a ranked pool taken from the index alone before the scope join, and the newest
SATURATED_WINDOW turns only when even the rarest term is that common.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.recall import ChannelEvidence
from signet_desktop.recall.lexical import (
    MIN_IDF,
    admit_rarest,
    fts_rows,
    held_scores,
    query_ceiling,
)
from signet_desktop.recall.sanitize import match_expression, query_tokens
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres

NAME = "transcript"
TRANSCRIPT_TOP_K = 20
OVERFETCH = 8  # pool rows per wanted hit before the scope join (other agents share the index)
# Postings scored per query: turns outnumber memories, and the channel runs after them, so it
# admits fewer common-term postings than the lexical channel's POSTINGS_BUDGET.
TURN_POSTINGS_BUDGET = 4_000
TURN_FTS = "transcript_turns_fts"
FTS_AVERAGES = "SELECT block FROM transcript_turns_fts_data WHERE id = 1"
NEWEST_TURN_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM transcript_turns"

# Scope fragments (fixed text; values are parameters): any of the agent's projects, exactly
# one project (recall's project filter), or one project plus sessions without one (hooks,
# the way `service/hooks/injection.py: in_scope` treats memories).
PROJECT_SCOPES = {
    "any": "1 = 1",
    "exact": "s.project = :project",
    "scoped": "(s.project IS NULL OR s.project = :project)",
}

RANKED_POOL = """
WITH pool AS MATERIALIZED (
    SELECT rowid AS seq, bm25(transcript_turns_fts) AS bm25
    FROM transcript_turns_fts WHERE transcript_turns_fts MATCH :match AND rowid >= :min_seq
    ORDER BY bm25 LIMIT :pool
)
SELECT {columns}, pool.bm25 AS bm25, (SELECT COUNT(*) FROM pool) AS pool_size
FROM pool
JOIN transcript_turns t ON t.seq = pool.seq
JOIN session_transcripts s ON s.seq = t.session_seq
WHERE {where}
ORDER BY pool.bm25
LIMIT :k
"""

FILTERED = """
SELECT {columns}, bm25(transcript_turns_fts) AS bm25
FROM transcript_turns_fts
JOIN transcript_turns t ON t.seq = transcript_turns_fts.rowid
JOIN session_transcripts s ON s.seq = t.session_seq
WHERE transcript_turns_fts MATCH :match AND transcript_turns_fts.rowid >= :min_seq AND {where}
ORDER BY bm25
LIMIT :k
"""

# PostgreSQL: the generated `text_tsv` (GIN, `signet_porter`) in place of the FTS5 table, every
# query token OR-combined and ranked by ts_rank normalised into (0, 1) (as
# `recall/lexical.py: ts_search`); `bm25` is its negation, lower is better as bm25(). Scored
# as that channel scores: the IDF of the query terms a turn holds over the query's ceiling.
TS_RANKED = """
SELECT {columns}, -ts_rank(t.text_tsv, query, 32) AS bm25,
       ARRAY(SELECT q.i FROM unnest(CAST(:tokens AS text[])) WITH ORDINALITY AS q(token, i)
             WHERE t.text_tsv @@ phraseto_tsquery('signet_porter', q.token)) AS held
FROM transcript_turns t
JOIN session_transcripts s ON s.seq = t.session_seq
CROSS JOIN websearch_to_tsquery('signet_porter', :query) AS query
WHERE t.text_tsv @@ query AND {where}
ORDER BY bm25, t.seq DESC
LIMIT :k
"""

COLUMNS = (
    "t.ordinal AS ordinal, t.role AS role, t.text AS text, t.timestamp AS timestamp, "
    "s.session_key AS session_key, s.harness AS harness, s.project AS project, "
    "s.turn_count AS turn_count, s.created_at AS created_at, s.source_id AS source_id"
)


@dataclass(frozen=True, slots=True)
class TurnScope:
    """Whose turns may be returned: the agent's, in which projects, since/until, and which
    session to leave out (the asking session's own turns are already in its context)."""

    agent_id: str
    project: str | None = None
    mode: str = "any"  # a key of PROJECT_SCOPES
    since: str | None = None
    until: str | None = None
    exclude_session: str | None = None


@dataclass(frozen=True, slots=True)
class TurnMatch:
    """A turn the channel ranked, with its session's facts and its evidence."""

    session_key: str
    ordinal: int
    role: str
    text: str
    timestamp: str | None
    harness: str | None
    project: str | None
    turn_count: int
    source_id: str | None
    evidence: ChannelEvidence


def scope_sql(scope: TurnScope) -> tuple[str, dict[str, Any]]:
    """The WHERE fragment (alias `s` = session_transcripts, `t` = transcript_turns)."""
    if scope.mode not in PROJECT_SCOPES:
        raise ValueError(f"unknown project scope {scope.mode!r}")
    clauses = ["s.agent_id = :agent_id", PROJECT_SCOPES[scope.mode]]
    params: dict[str, Any] = {"agent_id": scope.agent_id, "project": scope.project}
    if scope.since is not None:
        clauses.append("COALESCE(t.timestamp, s.created_at) >= :since")
        params["since"] = scope.since
    if scope.until is not None:
        clauses.append("COALESCE(t.timestamp, s.created_at) <= :until")
        params["until"] = scope.until
    if scope.exclude_session is not None:
        clauses.append("s.session_key <> :exclude_session")
        params["exclude_session"] = scope.exclude_session
    return " AND ".join(clauses), params


def search_turns(
    conn: Connection,
    text: str,
    scope: TurnScope,
    k: int = TRANSCRIPT_TOP_K,
    term_counts: TermCounts | None = None,
) -> list[TurnMatch]:
    """Top-k turns in scope by BM25, scored against the query's ceiling into (0, 1]; on
    PostgreSQL by ts_rank (`TS_RANKED`)."""
    if is_postgres(conn):
        return _ts_search_turns(conn, text, scope, k)
    counts = term_counts or TermCounts(table=TURN_FTS)
    tokens = query_tokens(text)
    cap = TURN_POSTINGS_BUDGET + 1
    documents = {token: counts.count(conn, token, cap) for token in tokens}
    matched, min_seq = _plan(conn, documents)
    match = match_expression(matched)
    if match is None:
        return []
    where, params = scope_sql(scope)
    params = {**params, "match": match, "k": k, "min_seq": min_seq, "pool": k * OVERFETCH}
    rows = conn.execute(RANKED_POOL.format(columns=COLUMNS, where=where), params).fetchall()
    if len(rows) < k and _pool_full(rows, conn, params):
        rows = conn.execute(FILTERED.format(columns=COLUMNS, where=where), params).fetchall()
    return _calibrate(list(rows), query_ceiling(documents, fts_rows(conn, FTS_AVERAGES)))


def _ts_search_turns(conn: Connection, text: str, scope: TurnScope, k: int) -> list[TurnMatch]:
    tokens = query_tokens(text)
    if not tokens:
        return []
    where, params = scope_sql(scope)
    query = " or ".join(f'"{token}"' for token in tokens)  # tokens are word characters
    sql = TS_RANKED.format(columns=COLUMNS, where=where)
    rows = conn.execute(sql, {**params, "query": query, "tokens": tokens, "k": k}).fetchall()
    if not rows:
        return []
    scored = held_scores(conn, rows, tokens, table=TURN_FTS, averages=FTS_AVERAGES)
    return [_turn(r, score, i) for i, (score, r) in enumerate(scored)]


def _plan(conn: Connection, documents: dict[str, int]) -> tuple[list[str], int]:
    """Terms admitted rarest first within the postings budget, and the rowid floor."""
    present = sorted((t for t, n in documents.items() if n > 0), key=lambda t: documents[t])
    return admit_rarest(conn, present, documents, TURN_POSTINGS_BUDGET, NEWEST_TURN_SEQ)


def _pool_full(rows: list[Any], conn: Connection, params: dict[str, Any]) -> bool:
    """Did the ranked pool stop at its size (so scope may have hidden better matches)?"""
    if rows:
        return int(rows[0]["pool_size"]) >= int(params["pool"])
    found = conn.execute(
        "SELECT COUNT(*) FROM (SELECT rowid FROM transcript_turns_fts WHERE "
        "transcript_turns_fts MATCH :match AND rowid >= :min_seq LIMIT :pool)",
        {"match": params["match"], "min_seq": params["min_seq"], "pool": params["pool"]},
    ).fetchone()
    return int(found[0]) >= int(params["pool"])


def _calibrate(rows: list[Any], ceiling: float) -> list[TurnMatch]:
    if not rows:
        return []
    ceiling = ceiling or max(abs(float(r["bm25"])) for r in rows) or 1.0
    return [
        _turn(r, min(1.0, max(MIN_IDF, abs(float(r["bm25"]))) / ceiling), i)
        for i, r in enumerate(rows)
    ]


def _turn(r: Any, score: float, i: int) -> TurnMatch:
    return TurnMatch(
        session_key=str(r["session_key"]),
        ordinal=int(r["ordinal"]),
        role=str(r["role"]),
        text=str(r["text"]),
        timestamp=r["timestamp"] or r["created_at"],
        harness=r["harness"],
        project=r["project"],
        turn_count=int(r["turn_count"]),
        source_id=r["source_id"],
        evidence=ChannelEvidence(score=score, rank=i + 1, raw=float(r["bm25"])),
    )
