"""PostgreSQL's term counts from ANALYZE's statistics (recall/term_counts.py): on a large
`memories` a common term's count is the statistics' estimate (no count statement), a rarer
one is counted exactly, a word ANALYZE has not seen is counted, and a small table is always
counted exactly."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from support.backends import Backend, open_backend

from signet_desktop.domain.memory import NewMemory
from signet_desktop.recall import term_counts
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection

pytestmark = pytest.mark.postgres

CAP = 10_001
ROWS = 800


@pytest.fixture
def postgres(tmp_path: Path, pg_url: str) -> Iterator[Backend]:
    """800 rows: `project` in about half, `glacier` in one in twenty, then ANALYZE."""
    backend = open_backend("postgres", tmp_path / "unused.db", pg_url)
    rng = random.Random(11)
    with backend.write() as conn:
        for i in range(ROWS):
            words = [f"filler{rng.randint(0, 400)}" for _ in range(rng.randint(3, 8))]
            if rng.random() < 0.5:
                words.append("project")
            if i % 20 == 0:
                words.append("glacier")
            new = NewMemory(agent_id="a", content=" ".join(words))
            memories.insert_memory(conn, f"m{i:03}", new, actor="t", embedding_model=None)
    backend.conn.execute("ANALYZE memories")
    yield backend
    backend.conn.close()


def exact(conn: Connection, term: str) -> int:
    return term_counts.count_many(conn, [term], CAP)[0]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The terms a count statement was run for."""
    asked: list[str] = []
    real = term_counts.count_many

    def recording(conn: Connection, terms: Sequence[str], cap: int, table: str = "memories_fts"):  # type: ignore[no-untyped-def]
        asked.extend(terms)
        return real(conn, terms, cap, table)

    monkeypatch.setattr(term_counts, "count_many", recording)
    return asked


def test_a_common_term_takes_the_statistics_estimate_and_a_rarer_one_is_counted(
    postgres: Backend, counted: list[str]
) -> None:
    conn = postgres.conn
    truth = {term: exact(conn, term) for term in ("project", "glacier")}
    counted.clear()
    counts = TermCounts(estimated_from=100, estimate_above_rows=0)
    found = counts.counts(conn, ["project", "glacier", "nowhere"], CAP)
    assert counted == ["glacier", "nowhere"]  # `project` came from the statistics
    assert abs(found["project"] - truth["project"]) <= 0.05 * truth["project"]
    assert found["glacier"] == truth["glacier"] == ROWS // 20
    assert found["nowhere"] == 0


def test_a_word_remembered_after_analyze_is_counted_not_planned_away(
    postgres: Backend, counted: list[str]
) -> None:
    conn = postgres.conn
    with postgres.write() as write:
        for i in range(3):
            new = NewMemory(agent_id="a", content=f"a zeppelin project note {i}")
            memories.insert_memory(write, f"z{i}", new, actor="t", embedding_model=None)
    counts = TermCounts(estimated_from=100, estimate_above_rows=0)
    assert counts.counts(conn, ["zeppelin"], CAP) == {"zeppelin": 3}
    assert counted == ["zeppelin"]


def test_a_small_table_is_counted_exactly_whatever_the_statistics(
    postgres: Backend, counted: list[str]
) -> None:
    conn = postgres.conn
    truth = exact(conn, "project")
    counted.clear()
    found = TermCounts(estimated_from=100).counts(conn, ["project"], CAP)  # 800 <= 5,000 rows
    assert found == {"project": truth}
    assert counted == ["project"]


def test_without_statistics_every_term_is_counted(tmp_path: Path, pg_url: str) -> None:
    backend = open_backend("postgres", tmp_path / "unused.db", pg_url)
    try:
        conn = backend.conn
        assert not conn.execute(term_counts.COMMON_LEXEMES_PG).fetchall()
        counts = TermCounts(estimated_from=1, estimate_above_rows=-1)
        assert counts.counts(conn, ["project"], CAP) == {"project": 0}
    finally:
        backend.conn.close()
