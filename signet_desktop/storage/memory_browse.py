"""The inspector's browse of the memories table: filtered, sorted pages, their count and a
row's position in them."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.memory import Memory
from signet_desktop.storage import counters
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.memory_rows import MEMORY_COLUMNS, row_to_memory
from signet_desktop.storage.rows import like_contains

# The inspector's browse: one page of an agent's memories (live, or the deleted ones) in a
# chosen order with optional filters. Sort keys and filters are fixed fragments; only the
# active filters join the WHERE, so the unfiltered default (created_at, seq) reads the
# (agent_id, is_deleted, created_at) index alone, page offsets included.
BROWSE_SORTS = {
    "created": "created_at",
    "updated": "updated_at",
    "importance": "importance",
    "type": "type",
    "who": "COALESCE(who, '')",
    "project": "COALESCE(project, '')",
    "pinned": "pinned",
    "content": "content",
    "tags": "tags",
}
BROWSE_FILTERS = {
    "type": "type = :type",
    "text": "content LIKE :text ESCAPE '\\'",
    "tag": "EXISTS (SELECT 1 FROM json_each(memories.tags) AS t WHERE t.value = :tag)",
    "who": "who = :who",
    "project": "project = :project",
    "pinned": "pinned = :pinned",
}
BROWSE_SCOPE = "agent_id = :agent_id AND is_deleted = :deleted"

# A page's rows are chosen on the index (seq is the rowid, the index's last column) and only
# then read in full: the offset never reads the rows it skips.
BROWSE_PAGE = """
SELECT {columns} FROM memories WHERE seq IN (
    SELECT seq FROM memories WHERE {where} ORDER BY {order} LIMIT :limit OFFSET :offset
) ORDER BY {order}
"""
BROWSE_COUNT = "SELECT COUNT(*) FROM memories WHERE {where}"
BROWSE_KEY = "SELECT {key} AS sort_key, seq FROM memories WHERE {where} AND id = :id"
# Rows before a given row in the order: a row-value comparison, so the default sort is an
# index range.
BROWSE_BEFORE = "SELECT COUNT(*) FROM memories WHERE {where} AND ({key}, seq) {cmp} (:key, :seq)"


def _browse_sql(query: BrowseQuery, agent_id: str) -> tuple[str, dict[str, Any]]:
    """The WHERE of a browse (fixed fragments for the set filters) and its parameters."""
    params: dict[str, Any] = {"agent_id": agent_id, "deleted": int(query.deleted)}
    fragments = [BROWSE_SCOPE]
    values: dict[str, Any] = {
        "type": query.type,
        "text": None if query.text is None else like_contains(query.text),
        "tag": query.tag,
        "who": query.who,
        "project": query.project,
        "pinned": None if query.pinned is None else int(query.pinned),
    }
    for name, value in values.items():
        if value is not None:
            fragments.append(BROWSE_FILTERS[name])
            params[name] = value
    return " AND ".join(fragments), params


def _browse_order(query: BrowseQuery) -> str:
    direction = "DESC" if query.descending else "ASC"
    return f"{BROWSE_SORTS[query.sort]} {direction}, seq {direction}"


def browse_memories(
    conn: Connection, agent_id: str, query: BrowseQuery, limit: int, offset: int
) -> list[Memory]:
    """One page of the browse, in its order (`query.sort` must be a BROWSE_SORTS key)."""
    where, params = _browse_sql(query, agent_id)
    sql = BROWSE_PAGE.format(columns=MEMORY_COLUMNS, where=where, order=_browse_order(query))
    rows = conn.execute(sql, {**params, "limit": limit, "offset": offset}).fetchall()
    return [row_to_memory(r) for r in rows]


def browse_count(conn: Connection, agent_id: str, query: BrowseQuery) -> int:
    """How many rows the browse has (an unfiltered browse reads the maintained counters)."""
    where, params = _browse_sql(query, agent_id)
    if where == BROWSE_SCOPE:
        kept = counters.agent_counts(conn, agent_id)
        return kept.deleted if query.deleted else kept.live
    return int(conn.execute(BROWSE_COUNT.format(where=where), params).fetchone()[0])


def browse_position(
    conn: Connection, agent_id: str, query: BrowseQuery, memory_id: str
) -> int | None:
    """The 0-based row of `memory_id` in the browse; None when the browse does not hold it."""
    where, params = _browse_sql(query, agent_id)
    key = BROWSE_SORTS[query.sort]
    row = conn.execute(BROWSE_KEY.format(key=key, where=where), {**params, "id": memory_id})
    found = row.fetchone()
    if found is None:
        return None
    sql = BROWSE_BEFORE.format(where=where, key=key, cmp=">" if query.descending else "<")
    before = conn.execute(sql, {**params, "key": found["sort_key"], "seq": found["seq"]})
    return int(before.fetchone()[0])
