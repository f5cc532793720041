"""Wire shapes of the search telemetry ledger (GET /api/telemetry/memory-search)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from signet_desktop.domain.telemetry import SearchRecord


def search_record_json(record: SearchRecord) -> dict[str, Any]:
    """One recorded recall: the query, how it ran, and the ranked ids with scores."""
    return {
        "id": record.id,
        "agentId": record.agent_id,
        "project": record.project,
        "query": record.query,
        "keywordQuery": record.keyword_query,
        "method": record.method,
        "resultCount": record.result_count,
        "totalMs": round(record.total_ms, 3),
        "results": [
            {"id": e.memory_id, "score": round(e.score, 4), "source": e.source}
            for e in record.results
        ],
        "createdAt": record.created_at,
    }


def search_history_json(records: Sequence[SearchRecord], *, enabled: bool) -> dict[str, Any]:
    """The ledger page, saying whether recording is on (`search.telemetry.enabled`)."""
    return {
        "enabled": enabled,
        "records": [search_record_json(r) for r in records],
        "count": len(records),
    }
