"""Hot queries keyed by id lists must use the id index, never walk a whole agent or generation.

Not a timing test: EXPLAIN QUERY PLAN is deterministic. A regression here once cost 40 ms per
recall at 100k memories.
"""

from __future__ import annotations

import re

import pytest

from signet_desktop.domain.recall import RecallFilters
from signet_desktop.embedding.vectors import CANONICAL_ROWS
from signet_desktop.recall.filters import filter_sql
from signet_desktop.recall.rerank import PASSAGE_ROWS, PASSAGE_VECTORS
from signet_desktop.recall.vector import CANDIDATE_ROWS
from signet_desktop.storage.database import Database
from signet_desktop.storage.memories import GET_LIVE_BY_IDS
from signet_desktop.storage.recall_context import CANDIDATE_CONTEXT, session_rings_sql


def plan(db: Database, sql: str) -> list[str]:
    params: dict[str, object] = {name: 1 for name in re.findall(r":(\w+)", sql)}
    params["ids"] = "[]"
    return [str(row[3]) for row in db.reader().execute(f"EXPLAIN QUERY PLAN {sql}", params)]


WHERE, _ = filter_sql("agent", RecallFilters())


@pytest.mark.parametrize(
    ("sql", "first_step"),
    [
        (GET_LIVE_BY_IDS, "SEARCH memories USING INDEX sqlite_autoindex_memories_1 (id=?)"),
        (CANDIDATE_CONTEXT, "SEARCH c USING INDEX sqlite_autoindex_memories_1 (id=?)"),
        (session_rings_sql(2), "SEARCH c USING INDEX sqlite_autoindex_memories_1 (id=?)"),
        (CANONICAL_ROWS, "SEARCH embeddings USING INTEGER PRIMARY KEY (rowid=?)"),
        (CANDIDATE_ROWS.format(filters=WHERE), "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)"),
        (PASSAGE_ROWS, "SEARCH memories USING INDEX sqlite_autoindex_memories_1 (id=?)"),
        (
            PASSAGE_VECTORS,
            "SEARCH e USING INDEX idx_embeddings_source (source_type=? AND source_id=?)",
        ),
    ],
    ids=[
        "hydrate",
        "context-candidates",
        "passage-windows",
        "canonical-rows",
        "rescore-candidates",
        "rerank-passages",
        "rerank-passage-vectors",
    ],
)
def test_id_list_queries_seek_by_id(db: Database, sql: str, first_step: str) -> None:
    assert plan(db, sql)[0] == first_step


def test_passage_windows_seek_the_session_order_index_per_step_and_side(db: Database) -> None:
    steps = [s for s in plan(db, session_rings_sql(2)) if s.startswith("SEARCH w")]
    before = (
        "SEARCH w USING INDEX idx_memories_session_order (agent_id=? AND session_id=? AND seq<?)"
    )
    after = (
        "SEARCH w USING INDEX idx_memories_session_order (agent_id=? AND session_id=? AND seq>?)"
    )
    assert steps == [before, after, before, after]


def test_session_neighbours_seek_the_session_order_index(db: Database) -> None:
    steps = [s for s in plan(db, CANDIDATE_CONTEXT) if s.startswith(("SEARCH p", "SEARCH n"))]
    assert steps == [
        "SEARCH p USING INDEX idx_memories_session_order (agent_id=? AND session_id=? AND seq<?)",
        "SEARCH n USING INDEX idx_memories_session_order (agent_id=? AND session_id=? AND seq>?)",
    ]
