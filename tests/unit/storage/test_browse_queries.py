"""The inspector's browse queries: order, filters, positions, and plans that stay on the index."""

from __future__ import annotations

import uuid

import pytest

from signet_desktop.domain.browse import BROWSE_SORTS, BrowseQuery
from signet_desktop.domain.memory import NewMemory
from signet_desktop.storage import memories, memory_browse
from signet_desktop.storage.database import Database


def add(
    db: Database, content: str, agent: str = "a", second: int | None = None, **fields: object
) -> str:
    memory_id = str(uuid.uuid4())
    created = f"2026-01-01T00:00:{len(content) if second is None else second:02d}.000Z"
    new = NewMemory(agent, content, created_at=created, **fields)  # type: ignore[arg-type]
    with db.write() as conn:
        memories.insert_memory(conn, memory_id, new, actor="t", embedding_model=None)
    return memory_id


def contents(db: Database, query: BrowseQuery, agent: str = "a") -> list[str]:
    rows = memory_browse.browse_memories(db.reader(), agent, query, limit=100, offset=0)
    return [m.content for m in rows]


def plan(db: Database, query: BrowseQuery) -> list[str]:
    where, params = memory_browse._browse_sql(query, "a")
    sql = memory_browse.BROWSE_PAGE.format(
        columns="seq", where=where, order=memory_browse._browse_order(query)
    )
    rows = db.reader().execute(f"EXPLAIN QUERY PLAN {sql}", {**params, "limit": 1, "offset": 0})
    return [str(row[3]) for row in rows]


def test_every_domain_sort_has_sql() -> None:
    assert set(BROWSE_SORTS) == set(memory_browse.BROWSE_SORTS)


def test_default_order_is_newest_first_and_scoped(db: Database) -> None:
    add(db, "x")
    add(db, "xxx")
    add(db, "xx")
    add(db, "xxxx", agent="b")
    assert contents(db, BrowseQuery()) == ["xxx", "xx", "x"]
    assert contents(db, BrowseQuery(descending=False)) == ["x", "xx", "xxx"]
    assert memory_browse.browse_count(db.reader(), "a", BrowseQuery()) == 3


def test_paging_by_offset_walks_the_same_order(db: Database) -> None:
    for n in range(1, 8):
        add(db, "m" * n)
    pages = [
        [m.content for m in memory_browse.browse_memories(db.reader(), "a", BrowseQuery(), 3, off)]
        for off in (0, 3, 6)
    ]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [c for page in pages for c in page] == ["m" * n for n in range(7, 0, -1)]


def test_filters_combine_and_like_wildcards_are_literal(db: Database) -> None:
    add(db, "100% sure", tags=("db", "ops"), who="ana", pinned=True)
    add(db, "1000 rows", tags=("db",), who="bo")
    add(db, "pg_dump nightly", type="decision", project="billing")
    assert contents(db, BrowseQuery(text="0%")) == ["100% sure"]
    assert contents(db, BrowseQuery(text="G_D")) == ["pg_dump nightly"]
    assert contents(db, BrowseQuery(text="g%d")) == []
    assert sorted(contents(db, BrowseQuery(tag="db"))) == ["100% sure", "1000 rows"]
    assert contents(db, BrowseQuery(tag="db", who="bo")) == ["1000 rows"]
    assert contents(db, BrowseQuery(pinned=True)) == ["100% sure"]
    assert contents(db, BrowseQuery(pinned=False, type="decision")) == ["pg_dump nightly"]
    assert contents(db, BrowseQuery(project="billing")) == ["pg_dump nightly"]
    assert memory_browse.browse_count(db.reader(), "a", BrowseQuery(tag="db")) == 2


def test_deleted_rows_are_their_own_browse(db: Database) -> None:
    gone = add(db, "gone")
    add(db, "kept")
    with db.write() as conn:
        memory = memories.get_memory(conn, "a", gone)
        assert memory is not None
        memories.set_deleted(conn, memory, deleted=True, reason="r", actor="t")
    assert contents(db, BrowseQuery()) == ["kept"]
    assert contents(db, BrowseQuery(deleted=True)) == ["gone"]


@pytest.mark.parametrize("sort", ["created", "importance", "who", "content"])
@pytest.mark.parametrize("descending", [True, False])
def test_position_matches_the_page_order(db: Database, sort: str, descending: bool) -> None:
    ids = [
        add(db, f"p{n % 4} {n}", second=n % 4, importance=0.1 * (n % 3), who=None if n % 2 else "w")
        for n in range(12)
    ]  # ties on every key but content: seq breaks them
    query = BrowseQuery(sort=sort, descending=descending)
    order = [m.id for m in memory_browse.browse_memories(db.reader(), "a", query, 100, 0)]
    for memory_id in ids:
        assert memory_browse.browse_position(db.reader(), "a", query, memory_id) == order.index(
            memory_id
        )


def test_position_outside_the_browse_is_none(db: Database) -> None:
    other = add(db, "theirs", agent="b")
    mine = add(db, "mine", who="ana")
    assert memory_browse.browse_position(db.reader(), "a", BrowseQuery(), other) is None
    assert memory_browse.browse_position(db.reader(), "a", BrowseQuery(who="bo"), mine) is None
    assert memory_browse.browse_position(db.reader(), "a", BrowseQuery(), "nope") is None


def test_default_browse_reads_only_the_created_index(db: Database) -> None:
    steps = plan(db, BrowseQuery())
    inner = [s for s in steps if "idx_memories_agent_created" in s]
    assert inner == [
        "SEARCH memories USING COVERING INDEX idx_memories_agent_created "
        "(agent_id=? AND is_deleted=?)"
    ]
    assert not any("TEMP B-TREE" in s for s in steps[:-1]), steps


def test_default_position_counts_an_index_range(db: Database) -> None:
    where, params = memory_browse._browse_sql(BrowseQuery(), "a")
    sql = memory_browse.BROWSE_BEFORE.format(where=where, key="created_at", cmp=">")
    rows = db.reader().execute(f"EXPLAIN QUERY PLAN {sql}", {**params, "key": "k", "seq": 1})
    assert [str(r[3]) for r in rows] == [
        "SEARCH memories USING COVERING INDEX idx_memories_agent_created "
        "(agent_id=? AND is_deleted=? AND created_at>?)"
    ]
