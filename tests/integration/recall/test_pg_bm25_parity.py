"""The lexical channel scores alike on both backends: the same corpus remembered in SQLite
and in PostgreSQL, the same queries, the same hits in the same order with the same BM25.

The corpus keeps to words both Porter stemmers and both tokenisers treat alike (FTS5's
'porter unicode61', PostgreSQL's `signet_porter`), and no two matches of a query tie. Both
backends compute FTS5's formula in double precision from the same integers (term
frequencies, row lengths, document counts, rows, tokens), so the scores may differ by the
order of floating-point operations only: 1e-9 relative is far tighter than any ranking
difference and far looser than that rounding.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.backends import Backend, open_backend

from signet_desktop.domain.memory import NewMemory
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.recall import lexical, term_counts
from signet_desktop.recall.lexical import LexicalHit, lexical_search
from signet_desktop.recall.term_counts import TermCounts
from signet_desktop.storage import memories

pytestmark = pytest.mark.postgres

A, B = "agent-a", "agent-b"
TOLERANCE = 1e-9
# A long row (3,000 tokens, no word repeated: a PostgreSQL tsvector keeps 256 positions of a
# word at most, so a word said more often counts less there than in FTS5).
LONG = " ".join(f"filler{i}" for i in range(3000)) + " the replication slot again"
CORPUS = {
    "m01": (A, "postgres replication needs a standby and a replication slot"),
    "m02": (A, "we tuned postgres memory settings last week"),
    "m03": (A, "replication replication replication: the standby fell behind"),
    "m04": (A, "the cat sat on the mat"),
    "m05": (A, "Ana prefers tea in the morning and coffee after lunch"),
    "m06": (A, "coffee"),
    "m07": (A, "a very long note about the deployment: " + "the release train " * 30),
    "m08": (B, "postgres replication for agent b only"),
    "m09": (A, "deployment deployments deployed: the rollout of the standby cluster"),
    "m10": (A, LONG),
    "m11": (A, "tea and coffee and more coffee, said Ana"),
    "m12": (A, "the standby cluster was promoted during the deployment"),
}
QUERIES = (
    "postgres replication?",
    "standby cluster deployment",
    "coffee",
    "Ana tea coffee",
    "replication slot",
    "what did the cat do",
    "release train deployment",
    "deployed deployments",  # two query terms, one stem: both count, as two FTS5 phrases
    "coffee ½ ²",  # tokens PostgreSQL may parse into no lexeme: counted absent on both
    "nothing matches zebra",
)


@pytest.fixture
def both(tmp_path: Path, pg_url: str) -> Iterator[tuple[Backend, Backend]]:
    sqlite, postgres = open_backend("sqlite", tmp_path / "m.db", None), None
    try:
        postgres = open_backend("postgres", tmp_path / "unused.db", pg_url)
        for backend in (sqlite, postgres):
            for memory_id, (agent, text) in CORPUS.items():
                with backend.write() as conn:
                    who = "ana" if "Ana" in text else None
                    new = NewMemory(agent_id=agent, content=text, who=who)
                    memories.insert_memory(conn, memory_id, new, actor="t", embedding_model=None)
        yield sqlite, postgres
    finally:
        sqlite.conn.close()
        if postgres is not None:
            postgres.conn.close()


def assert_alike(lite: list[LexicalHit], pg: list[LexicalHit], query: str) -> None:
    assert [h.memory_id for h in pg] == [h.memory_id for h in lite], query
    for a, b in zip(lite, pg, strict=True):
        assert b.evidence.rank == a.evidence.rank
        assert b.evidence.raw == pytest.approx(a.evidence.raw, rel=TOLERANCE), (query, a)
        assert b.evidence.score == pytest.approx(a.evidence.score, rel=TOLERANCE), (query, a)


@pytest.mark.parametrize("query", QUERIES)
def test_the_same_hits_in_the_same_order_with_the_same_bm25(
    both: tuple[Backend, Backend], query: str
) -> None:
    sqlite, postgres = both
    lite = lexical_search(sqlite.conn, query, A, RecallFilters())
    pg = lexical_search(postgres.conn, query, A, RecallFilters())
    assert_alike(lite, pg, query)
    if query != "nothing matches zebra":
        assert lite, query  # each query but the last matches something: the test compares


def test_term_frequency_and_length_count_on_postgres(both: tuple[Backend, Backend]) -> None:
    _, postgres = both
    hits = lexical_search(postgres.conn, "replication", A, RecallFilters())
    # m03 holds the word three times in a short row; m10 once in a very long one.
    assert [h.memory_id for h in hits] == ["m03", "m01", "m10"]
    assert hits[0].evidence.raw < hits[1].evidence.raw < hits[2].evidence.raw < 0


def test_the_postings_budget_drops_the_same_terms(
    both: tuple[Backend, Backend], monkeypatch: pytest.MonkeyPatch
) -> None:
    sqlite, postgres = both
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 4)  # "standby" (4 rows) or less only
    for query in ("standby cluster deployment coffee", "the replication", "coffee tea Ana"):
        lite = lexical_search(sqlite.conn, query, A, RecallFilters())
        assert_alike(lite, lexical_search(postgres.conn, query, A, RecallFilters()), query)


def test_filters_scope_and_cached_totals_keep_the_parity(both: tuple[Backend, Backend]) -> None:
    sqlite, postgres = both
    counts = TermCounts(min_cached=1)  # totals and counts remembered from the first query on
    for query in ("postgres replication", "standby deployment"):
        for agent in (A, B):
            lite = lexical_search(sqlite.conn, query, agent, RecallFilters(), k=2)
            pg = lexical_search(postgres.conn, query, agent, RecallFilters(), k=2)
            assert_alike(lite, pg, query)
            cached = lexical_search(postgres.conn, query, agent, RecallFilters(), 2, counts)
            assert_alike(lite, cached, query)
    ana = RecallFilters(who="ana")
    lite = lexical_search(sqlite.conn, "coffee tea", A, ana)
    assert [h.memory_id for h in lite] == ["m11", "m05"]
    assert_alike(lite, lexical_search(postgres.conn, "coffee tea", A, ana), "who")


def test_remembered_totals_follow_a_new_memory(both: tuple[Backend, Backend]) -> None:
    sqlite, postgres = both
    counts = TermCounts()  # the engine's: totals of a small table kept until it changes
    first = lexical_search(postgres.conn, "coffee", A, RecallFilters(), 10, counts)
    for backend in (sqlite, postgres):
        with backend.write() as conn:
            new = NewMemory(agent_id=A, content="coffee, coffee, coffee!")
            memories.insert_memory(conn, "m13", new, actor="t", embedding_model=None)
    lite = lexical_search(sqlite.conn, "coffee", A, RecallFilters())
    assert lite[0].memory_id == "m13" and len(lite) == len(first) + 1
    assert_alike(lite, lexical_search(postgres.conn, "coffee", A, RecallFilters(), 10, counts), "")


def test_sampled_totals_of_a_large_table_stay_close(
    both: tuple[Backend, Backend], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, postgres = both
    exact = term_counts.corpus_totals(postgres.conn)
    monkeypatch.setattr(term_counts, "EXACT_TOTAL_ROWS", 5)  # sample (100% of a small table)
    assert term_counts.corpus_totals(postgres.conn) == exact


def test_an_edited_memory_is_scored_by_its_new_text(both: tuple[Backend, Backend]) -> None:
    """The term frequencies and length PostgreSQL's BM25 reads (generated columns, 0018)
    follow a content edit as FTS5's index does."""
    sqlite, postgres = both
    text = "coffee coffee coffee and the standby cluster"
    for backend in (sqlite, postgres):
        with backend.write() as conn:
            memory = memories.get_memory(conn, A, "m04")
            assert memory is not None
            memories.update_memory_fields(conn, memory, {"content": text}, actor="t")
    for query in ("coffee", "the cat", "standby cluster coffee"):
        lite = lexical_search(sqlite.conn, query, A, RecallFilters())
        assert_alike(lite, lexical_search(postgres.conn, query, A, RecallFilters()), query)
    row = postgres.conn.execute(
        "SELECT content_terms ->> 'coffe' AS coffee, content_terms ->> 'cat' AS cat, "
        "content_tokens FROM memories WHERE id = 'm04'"
    ).fetchone()
    assert (row["coffee"], row["cat"], row["content_tokens"]) == ("3", None, 7)


def test_the_stored_counts_are_the_tsvector_positions(both: tuple[Backend, Backend]) -> None:
    _, postgres = both
    with postgres.write() as conn:  # past the 256 positions a tsvector keeps of a word
        new = NewMemory(agent_id=A, content="coffee " * 300 + "Ünïcode straße ½")
        memories.insert_memory(conn, "m13", new, actor="t", embedding_model=None)
    mismatched = postgres.conn.execute(
        "SELECT id FROM memories m WHERE content_tokens <> ("
        "  SELECT COALESCE(SUM(cardinality(u.positions)), 0) FROM unnest(m.content_tsv) AS u)"
        " OR content_terms <> ("
        "  SELECT COALESCE(jsonb_object_agg(u.lexeme, cardinality(u.positions)), '{}')"
        "  FROM unnest(m.content_tsv) AS u)"
    ).fetchall()
    assert mismatched == []
    assert postgres.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == len(CORPUS) + 1
