"""The lexical channel: BM25 over memories_fts, scoped and filtered, normalised per batch."""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.domain.recall import ChannelEvidence, RecallFilters
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.sanitize import fts_match_expression
from signet_desktop.storage.connect import Connection

LEXICAL_TOP_K = 50

BM25_SEARCH = """
SELECT m.id AS id, bm25(memories_fts) AS bm25
FROM memories_fts
JOIN memories m ON m.seq = memories_fts.rowid
WHERE memories_fts MATCH :match AND {filters}
ORDER BY bm25
LIMIT :k
"""


@dataclass(frozen=True, slots=True)
class LexicalHit:
    """A memory id with its lexical evidence."""

    memory_id: str
    evidence: ChannelEvidence


def lexical_search(
    conn: Connection, text: str, agent_id: str, filters: RecallFilters, k: int = LEXICAL_TOP_K
) -> list[LexicalHit]:
    """Top-k memories by BM25; scores normalised by the batch's best |bm25| into (0, 1]."""
    match = fts_match_expression(text)
    if match is None:
        return []
    where, params = filter_sql(agent_id, filters)
    rows = conn.execute(
        BM25_SEARCH.format(filters=where), {**params, "match": match, "k": k}
    ).fetchall()
    if not rows:
        return []
    best = max(abs(float(r["bm25"])) for r in rows) or 1.0
    return [
        LexicalHit(
            str(r["id"]),
            ChannelEvidence(score=abs(float(r["bm25"])) / best, rank=i + 1, raw=float(r["bm25"])),
        )
        for i, r in enumerate(rows)
    ]
