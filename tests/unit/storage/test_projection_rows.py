"""umap_cache through its owner: one row per (agent, model, dimensions), exact-key reads."""

from __future__ import annotations

import pytest
import sqlean

from signet_desktop.storage import projections
from signet_desktop.storage.database import Database


def store(db: Database, agent: str = "a", count: int = 3, dims: int = 2, model: str = "m@8") -> str:
    with db.write() as conn:
        return projections.store_projection(
            conn, agent_id=agent, model=model, dimensions=dims, embedding_count=count,
            payload='{"version": 1}',
        ).id  # fmt: skip


def rows(db: Database) -> int:
    return int(db.reader().execute("SELECT COUNT(*) FROM umap_cache").fetchone()[0])


def test_a_new_projection_replaces_the_older_one_of_its_key(db: Database) -> None:
    store(db, count=3)
    newest = store(db, count=4)
    store(db, agent="b", count=3)
    store(db, dims=3, count=3)
    assert rows(db) == 3
    conn = db.reader()
    found = projections.find_projection(
        conn, agent_id="a", model="m@8", dimensions=2, embedding_count=4
    )
    assert found is not None and found.id == newest and found.payload == '{"version": 1}'
    assert (
        projections.find_projection(
            conn, agent_id="a", model="m@8", dimensions=2, embedding_count=3
        )
        is None
    )


def test_delete_drops_one_row(db: Database) -> None:
    row_id = store(db)
    with db.write() as conn:
        assert projections.delete_projection(conn, row_id)
        assert not projections.delete_projection(conn, row_id)
    assert rows(db) == 0


def test_the_schema_refuses_a_payload_that_is_not_json(db: Database) -> None:
    with pytest.raises(sqlean.IntegrityError), db.write() as conn:
        projections.store_projection(
            conn, agent_id="a", model="m", dimensions=2, embedding_count=1, payload="{"
        )
    assert rows(db) == 0
