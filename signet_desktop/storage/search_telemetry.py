"""memory_search_telemetry: the opt-in recall ledger (migrations/0005). Owner of its writes.

Rows hold ids, scores and the query, never memory content. Every read is agent-scoped (and
project-scoped when asked); `prune` bounds the table by age and by count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.telemetry import SearchRecord, SearchResultEntry
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import insertion_tie
from signet_desktop.storage.rows import from_row, rows_changed

INSERT_RECORD = """
INSERT INTO memory_search_telemetry (id, agent_id, project, session_key, query, keyword_query,
    method, request_json, results_json, result_count, total_ms, timings_json, created_at)
VALUES (:id, :agent_id, :project, NULL, :query, :keyword_query, :method, :request,
    :results, :count, :total_ms, :timings, :created_at)
"""
COLUMNS = (
    "id, agent_id, project, query, keyword_query, method, results_json, result_count, "
    "total_ms, created_at"
)
PRUNE_OLDER = "DELETE FROM memory_search_telemetry WHERE created_at < :cutoff"
PRUNE_BEYOND = """
DELETE FROM memory_search_telemetry WHERE agent_id = :agent AND id NOT IN (
    SELECT id FROM memory_search_telemetry WHERE agent_id = :agent
    ORDER BY created_at DESC LIMIT :keep)
"""


def insert_records(conn: Connection, records: Sequence[SearchRecord]) -> None:
    """Append recorded recalls (one batch, inside the caller's write transaction)."""
    conn.executemany(
        INSERT_RECORD,
        [
            {
                "id": r.id,
                "agent_id": r.agent_id,
                "project": r.project,
                "query": r.query,
                "keyword_query": r.keyword_query,
                "method": r.method,
                "request": "{}",
                "results": json.dumps(
                    [[e.memory_id, round(e.score, 6), e.source] for e in r.results]
                ),
                "count": r.result_count,
                "total_ms": round(r.total_ms, 3),
                "timings": "{}",
                "created_at": r.created_at,
            }
            for r in records
        ],
    )


def prune(conn: Connection, *, cutoff: str, agent_ids: Sequence[str], keep: int) -> int:
    """Delete rows older than `cutoff`, then all but the newest `keep` per agent; rows gone."""
    removed = conn.execute(PRUNE_OLDER, {"cutoff": cutoff}).rowcount
    for agent in agent_ids:
        removed += conn.execute(PRUNE_BEYOND, {"agent": agent, "keep": keep}).rowcount
    return int(removed)


def clear(conn: Connection, agent_id: str) -> int:
    """Forget every recorded recall of one agent; rows gone."""
    return rows_changed(conn, "DELETE FROM memory_search_telemetry WHERE agent_id = ?", (agent_id,))


def _record(row: Any) -> SearchRecord:
    results = tuple(
        SearchResultEntry(str(item[0]), float(item[1]), str(item[2]))
        for item in json.loads(row["results_json"] or "[]")
    )
    return from_row(
        SearchRecord,
        row,
        method=row["method"] or "",
        result_count=int(row["result_count"]),
        total_ms=float(row["total_ms"] or 0.0),
        results=results,
    )


def list_records(
    conn: Connection,
    agent_id: str,
    *,
    project: str | None = None,
    query: str | None = None,
    limit: int = 50,
) -> list[SearchRecord]:
    """One agent's recorded recalls, newest first; only `project`'s and `query`'s when given
    (the query compared case- and space-insensitively)."""
    sql = f"SELECT {COLUMNS} FROM memory_search_telemetry WHERE agent_id = :agent"
    params: dict[str, Any] = {"agent": agent_id, "limit": limit}
    if project is not None:
        sql += " AND project = :project"
        params["project"] = project
    if query is not None:
        sql += " AND lower(trim(query)) = :query"
        params["query"] = " ".join(query.split()).lower()
    tie = insertion_tie(conn)  # same ms: the later insert first
    sql += f" ORDER BY created_at DESC, {tie} DESC LIMIT :limit"
    return [_record(row) for row in conn.execute(sql, params)]
