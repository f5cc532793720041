"""memory_content_safety: the derived, agent-scoped ledger of content-safety decisions.

One row per (agent, source kind, source id) with the status, prompt eligibility, reasons,
the policy version that decided and the hash of the exact text it read. The evidence itself
(memories, transcripts, artifacts, summaries) is never changed here; the `pending_*` reads
find what has no decision of the current version, or changed since it was scanned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres, postgres_twin
from signet_desktop.storage.rows import from_row, scalar_int

SOURCE_KINDS = ("memory", "artifact", "transcript", "summary", "source_chunk")
STATUSES = ("clean", "tainted", "blocked")
ID_CHUNK = 500  # bound on the ids in one IN (...) lookup


@dataclass(frozen=True, slots=True)
class SafetyDecision:
    """One ledger row."""

    agent_id: str
    source_kind: str
    source_id: str
    status: str
    context_eligible: bool
    reasons: tuple[str, ...]
    policy_version: str
    content_hash: str | None
    scanned_at: str


@dataclass(frozen=True, slots=True)
class ScanItem:
    """Something that needs a decision: whose, what kind, which, and its text."""

    agent_id: str
    source_kind: str
    source_id: str
    text: str


UPSERT_DECISION = """
INSERT INTO memory_content_safety (
    agent_id, source_kind, source_id, status, context_eligible, reasons_json,
    policy_version, content_hash, scanned_at
) VALUES (
    :agent_id, :source_kind, :source_id, :status, :context_eligible, :reasons_json,
    :policy_version, :content_hash, :scanned_at
)
ON CONFLICT (agent_id, source_kind, source_id) DO UPDATE SET
    status = excluded.status,
    context_eligible = excluded.context_eligible,
    reasons_json = excluded.reasons_json,
    policy_version = excluded.policy_version,
    content_hash = excluded.content_hash,
    scanned_at = excluded.scanned_at
"""

GET_DECISIONS = """
SELECT agent_id, source_kind, source_id, status, context_eligible, reasons_json,
       policy_version, content_hash, scanned_at
FROM memory_content_safety
WHERE agent_id = :agent_id AND source_kind = :source_kind AND source_id IN ({ids})
"""

# Reports count decisions about what still exists: a forgotten memory's row stays (it may be
# recovered) but is not counted.
_SHOWN = (
    "s.agent_id = :agent_id AND NOT EXISTS (SELECT 1 FROM memories m WHERE "
    "s.source_kind = 'memory' AND m.id = s.source_id AND m.is_deleted = 1)"
)
STATUS_COUNTS = f"""
SELECT s.status, COUNT(*) AS n FROM memory_content_safety s
WHERE {_SHOWN} AND s.policy_version = :version
GROUP BY s.status
"""
REASON_COUNTS = f"""
SELECT r.value AS reason, COUNT(*) AS n
FROM memory_content_safety s, json_each(s.reasons_json) r
WHERE {_SHOWN} AND s.policy_version = :version
GROUP BY r.value ORDER BY r.value
"""
REASON_COUNTS_PG = postgres_twin(REASON_COUNTS)
STALE_COUNT = f"""
SELECT COUNT(*) FROM memory_content_safety s
WHERE {_SHOWN} AND s.policy_version != :version
"""

# "Needs a decision": no row, a row of another policy version, or the evidence changed after
# the scan. One fixed body per source table; the agent filter is one of two fragments.
_NEEDS = "(s.source_id IS NULL OR s.policy_version != :version OR s.scanned_at < {changed})"


@dataclass(frozen=True, slots=True)
class _Source:
    columns: str
    body: str
    alias: str
    # The sweep's cursor: `seq` (the rowid itself on SQLite, an identity on PostgreSQL);
    # session_summaries has none but SQLite's rowid: on PostgreSQL its sweep takes the
    # oldest pending rows each time (a recorded decision takes a row out of the pending set).
    cursor: str = "seq"


_SOURCES = {
    "memory": _Source(
        "m.agent_id, m.id AS source_id, m.content AS text",
        "memories m LEFT JOIN memory_content_safety s ON s.agent_id = m.agent_id "
        "AND s.source_kind = 'memory' AND s.source_id = m.id "
        "WHERE m.is_deleted = 0 AND {agent} AND " + _NEEDS.format(changed="m.updated_at"),
        "m",
    ),
    "transcript": _Source(
        "t.agent_id, t.session_key AS source_id, t.content AS text",
        "session_transcripts t LEFT JOIN memory_content_safety s ON s.agent_id = t.agent_id "
        "AND s.source_kind = 'transcript' AND s.source_id = t.session_key "
        "WHERE {agent} AND " + _NEEDS.format(changed="t.updated_at"),
        "t",
    ),
    "artifact": _Source(
        "a.agent_id, a.source_path AS source_id, a.content AS text",
        "memory_artifacts a LEFT JOIN memory_content_safety s ON s.agent_id = a.agent_id "
        "AND s.source_kind = 'artifact' AND s.source_id = a.source_path "
        "WHERE a.removed_at IS NULL AND {agent} AND " + _NEEDS.format(changed="a.updated_at"),
        "a",
    ),
    "summary": _Source(
        "u.agent_id, u.id AS source_id, u.content AS text",
        "session_summaries u LEFT JOIN memory_content_safety s ON s.agent_id = u.agent_id "
        "AND s.source_kind = 'summary' AND s.source_id = u.id "
        "WHERE {agent} AND " + _NEEDS.format(changed="u.created_at"),
        "u",
        "rowid",
    ),
}
PENDING_KINDS = ("memory", "transcript", "artifact", "summary")  # memories first


def _decision(row: Any) -> SafetyDecision:
    return from_row(
        SafetyDecision,
        row,
        context_eligible=bool(row["context_eligible"]),
        reasons=tuple(json.loads(row["reasons_json"])),
    )


def record_decisions(conn: Connection, decisions: Iterable[SafetyDecision]) -> int:
    """Insert or replace the decisions (inside the caller's write transaction)."""
    rows = [
        {
            "agent_id": d.agent_id,
            "source_kind": d.source_kind,
            "source_id": d.source_id,
            "status": d.status,
            "context_eligible": 1 if d.context_eligible else 0,
            "reasons_json": json.dumps(list(d.reasons)),
            "policy_version": d.policy_version,
            "content_hash": d.content_hash,
            "scanned_at": d.scanned_at,
        }
        for d in decisions
    ]
    if rows:
        conn.executemany(UPSERT_DECISION, rows)
    return len(rows)


def get_decisions(
    conn: Connection, agent_id: str, source_kind: str, source_ids: Sequence[str]
) -> dict[str, SafetyDecision]:
    """The agent's decisions for these ids of one kind, by source id."""
    found: dict[str, SafetyDecision] = {}
    unique = list(dict.fromkeys(source_ids))
    for start in range(0, len(unique), ID_CHUNK):
        chunk = unique[start : start + ID_CHUNK]
        params: dict[str, Any] = {"agent_id": agent_id, "source_kind": source_kind}
        params.update({f"id{i}": source_id for i, source_id in enumerate(chunk)})
        names = ", ".join(f":id{i}" for i in range(len(chunk)))
        for row in conn.execute(GET_DECISIONS.format(ids=names), params):
            found[row["source_id"]] = _decision(row)
    return found


def status_counts(conn: Connection, agent_id: str, version: str) -> Mapping[str, int]:
    """Decisions of `version` per status (every status present, zero when none)."""
    counts = dict.fromkeys(STATUSES, 0)
    for row in conn.execute(STATUS_COUNTS, {"agent_id": agent_id, "version": version}):
        counts[row["status"]] = int(row["n"])
    return counts


def reason_counts(conn: Connection, agent_id: str, version: str) -> Mapping[str, int]:
    """Decisions of `version` per reason (a decision with two reasons counts under both)."""
    sql = REASON_COUNTS_PG if is_postgres(conn) else REASON_COUNTS
    rows = conn.execute(sql, {"agent_id": agent_id, "version": version})
    return {row["reason"]: int(row["n"]) for row in rows}


def stale_count(conn: Connection, agent_id: str, version: str) -> int:
    """Decisions made by another policy version (they wait for the rescan)."""
    return scalar_int(conn, STALE_COUNT, {"agent_id": agent_id, "version": version})


def _body(kind: str, agent_id: str | None) -> str:
    source = _SOURCES[kind]
    agent = "1 = 1" if agent_id is None else f"{source.alias}.agent_id = :agent_id"
    return source.body.format(agent=agent)


def pending_items(
    conn: Connection, kind: str, agent_id: str | None, version: str, limit: int, after: int = 0
) -> tuple[list[ScanItem], int]:
    """Up to `limit` items of `kind` past rowid `after` that need a decision, oldest first,
    and the rowid of the last one (a sweep's cursor: the next batch starts there instead of
    walking the decided rows again)."""
    source = _SOURCES[kind]
    cursor = f"{source.alias}.{source.cursor}"
    if source.cursor == "rowid" and is_postgres(conn):
        sql = (
            f"SELECT 0 AS scan_rowid, {source.columns} FROM {_body(kind, agent_id)} "
            f"ORDER BY {source.alias}.created_at, {source.alias}.id LIMIT :limit"
        )
    else:
        sql = (
            f"SELECT {cursor} AS scan_rowid, {source.columns} "
            f"FROM {_body(kind, agent_id)} AND {cursor} > :after "
            f"ORDER BY {cursor} LIMIT :limit"
        )
    params = {"agent_id": agent_id, "version": version, "limit": limit, "after": after}
    rows = conn.execute(sql, params).fetchall()
    items = [ScanItem(row["agent_id"], kind, row["source_id"], row["text"]) for row in rows]
    return items, int(rows[-1]["scan_rowid"]) if rows else after


def pending_count(conn: Connection, kind: str, agent_id: str, version: str) -> int:
    """How many items of `kind` of the agent need a decision."""
    sql = f"SELECT COUNT(*) FROM {_body(kind, agent_id)}"
    return scalar_int(conn, sql, {"agent_id": agent_id, "version": version})


# -- retention (service/retention.py): the decisions of purged memories -------------------

DELETE_DECISIONS = """
DELETE FROM memory_content_safety
WHERE agent_id = :agent_id AND source_kind = :kind
  AND source_id IN (SELECT value FROM json_each(:ids))
"""
DELETE_DECISIONS_PG = postgres_twin(DELETE_DECISIONS)


def delete_decisions(conn: Connection, agent_id: str, kind: str, ids: Sequence[str]) -> int:
    """Drop the decisions about evidence that was purged for good; how many."""
    if not ids:
        return 0
    params = {"agent_id": agent_id, "kind": kind, "ids": json.dumps(list(ids))}
    sql = DELETE_DECISIONS_PG if is_postgres(conn) else DELETE_DECISIONS
    return int(conn.execute(sql, params).rowcount)
