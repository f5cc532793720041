"""SQL WHERE fragments for recall filters, shared by every channel (alias `m` = memories)."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.recall import RecallFilters

MAX_TAG_FILTERS = 10  # each is an EXISTS over json_each; more are refused, never dropped


# A tag filter: SQLite's JSON text array, PostgreSQL's jsonb containment.
TAG_CLAUSE = "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = :{name})"
TAG_CLAUSE_PG = "m.tags @> jsonb_build_array(CAST(:{name} AS text))"


def filter_sql(
    agent_id: str, filters: RecallFilters, *, postgres: bool = False
) -> tuple[str, dict[str, Any]]:
    """`AND ...` clauses and their parameters: agent scope, liveness and every filter
    (`postgres`: in PostgreSQL's dialect; the clauses differ for tags only)."""
    clauses = ["m.agent_id = :agent_id", "m.is_deleted = 0"]
    params: dict[str, Any] = {"agent_id": agent_id}
    if filters.scope is None:
        clauses.append("m.scope IS NULL")  # unscoped recall excludes scoped rows
    else:
        clauses.append("m.scope = :scope")
        params["scope"] = filters.scope
    simple = {
        "type": "m.type = :type",
        "who": "m.who = :who",
        "project": "m.project = :project",
        "since": "m.created_at >= :since",
        "until": "m.created_at <= :until",
        "importance_min": "m.importance >= :importance_min",
    }
    for name, clause in simple.items():
        value = getattr(filters, name)
        if value is not None:
            clauses.append(clause)
            params[name] = value
    if filters.pinned is not None:
        clauses.append("m.pinned = :pinned")
        params["pinned"] = int(filters.pinned)
    if len(filters.tags) > MAX_TAG_FILTERS:
        raise InvalidInput(
            f"at most {MAX_TAG_FILTERS} tag filters per recall, got {len(filters.tags)}",
            code="tags_invalid",
        )
    tag_clause = TAG_CLAUSE_PG if postgres else TAG_CLAUSE
    for index, tag in enumerate(filters.tags):
        clauses.append(tag_clause.format(name=f"tag_{index}"))
        params[f"tag_{index}"] = tag
    return " AND ".join(clauses), params
