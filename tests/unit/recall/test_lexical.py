"""Lexical recall: sanitised FTS queries, BM25 normalisation, filters and scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlean
from hypothesis import given, settings
from hypothesis import strategies as st

from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters
from signet_desktop.recall.lexical import lexical_search
from signet_desktop.recall.sanitize import fts_match_expression, query_tokens
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.storage.database import Database


@pytest.fixture
def seeded(db: Database) -> Database:
    service = MemoryService(db)
    rows = [
        RememberRequest(content="Postgres runs the billing service", who="ana", tags=("db",)),
        RememberRequest(content="Redis caches billing sessions", who="bo", project="web"),
        RememberRequest(content="The cat is named Billing", agent_id="other"),
        RememberRequest(content="Scoped billing note", scope="team-x"),
        RememberRequest(content="Pinned billing rule", pinned=True, importance=0.9),
    ]
    for row in rows:
        service.remember(row, Actor())
    return db


def contents(db: Database, text: str, agent: str = "default", **filters: object) -> list[str]:
    hits = lexical_search(db.reader(), text, agent, RecallFilters(**filters))  # type: ignore[arg-type]
    ids = [h.memory_id for h in hits]
    rows = (
        db.reader()
        .execute(
            "SELECT id, content FROM memories WHERE id IN (SELECT value FROM json_each(:ids))",
            {"ids": json.dumps(ids)},
        )
        .fetchall()
    )
    by_id = {r[0]: r[1] for r in rows}
    return [by_id[i] for i in ids]


def test_tokens_drop_stop_words_and_syntax() -> None:
    assert query_tokens('What "database" does billing use? NEAR( AND OR *') == [
        "database",
        "billing",
        "use",
        "near",  # a word like any other once quoted: FTS syntax never passes through
    ]
    assert fts_match_expression("the of and ?!") is None
    assert fts_match_expression("billing db") == '"billing" OR "db"'


def test_scores_are_calibrated_and_ranked(seeded: Database) -> None:
    hits = lexical_search(seeded.reader(), "billing postgres", "default", RecallFilters())
    assert hits[0].evidence.rank == 1 and hits[0].evidence.raw < 0  # raw: FTS5's bm25
    assert all(0 < h.evidence.score <= 1 for h in hits)
    assert [h.evidence.rank for h in hits] == list(range(1, len(hits) + 1))
    # A memory holding only "billing" covers a small share of the query, not 1.0 because it
    # happens to be the best of its batch.
    [only] = lexical_search(seeded.reader(), "billing zebra", "default", RecallFilters(), k=1)
    assert only.evidence.score < 0.5


def test_the_score_is_what_the_query_could_score(db: Database) -> None:
    """|bm25| over the sum of the query terms' IDF, FTS5's own numbers, capped at 1."""
    from signet_desktop.recall import lexical

    service = MemoryService(db)
    for text in ("alpha beta", "gamma delta", "alpha delta", "epsilon zeta"):
        service.remember(RememberRequest(content=text), Actor())
    conn = db.reader()
    assert lexical.fts_rows(conn) == 4
    # "alpha beta" has the average length and holds each term once: BM25 = the sum of IDFs.
    [best, *_] = lexical_search(conn, "alpha beta", "default", RecallFilters())
    ceiling = lexical.idf(2, 4) + lexical.idf(1, 4)
    assert -best.evidence.raw == pytest.approx(ceiling, rel=1e-6)
    assert best.evidence.score == pytest.approx(1.0)
    # A term no memory holds still counts: the query asked for it.
    [half, *_] = lexical_search(conn, "beta omega", "default", RecallFilters())
    assert half.evidence.score == pytest.approx(
        lexical.idf(1, 4) / (lexical.idf(1, 4) + lexical.idf(0, 4)), rel=1e-6
    )


def test_a_memory_scores_the_same_whatever_else_matches(db: Database) -> None:
    """Scores are not relative to the batch: a better match elsewhere changes nothing."""
    service = MemoryService(db)
    service.remember(RememberRequest(content="billing runs on Postgres 16"), Actor())
    for i in range(3):
        service.remember(RememberRequest(content=f"unrelated filler note {i}"), Actor())

    def score_of(content: str) -> float:
        hits = lexical_search(db.reader(), "billing postgres", "default", RecallFilters())
        rows = dict(db.reader().execute("SELECT id, content FROM memories").fetchall())
        return next(h.evidence.score for h in hits if rows[h.memory_id] == content)

    alone = score_of("billing runs on Postgres 16")
    service.remember(RememberRequest(content="Billing: Postgres, Postgres, billing"), Actor())
    assert score_of("billing runs on Postgres 16") == pytest.approx(alone, rel=0.2)
    assert alone < 1.0


def test_scope_and_agent_isolation(seeded: Database) -> None:
    found = contents(seeded, "billing")
    assert "The cat is named Billing" not in found  # other agent
    assert "Scoped billing note" not in found  # unscoped recall excludes scoped rows
    assert contents(seeded, "billing", scope="team-x") == ["Scoped billing note"]
    assert contents(seeded, "billing", agent="other") == ["The cat is named Billing"]


def test_filters(seeded: Database) -> None:
    assert contents(seeded, "billing", who="bo") == ["Redis caches billing sessions"]
    assert contents(seeded, "billing", project="web") == ["Redis caches billing sessions"]
    assert contents(seeded, "billing", tags=("db",)) == ["Postgres runs the billing service"]
    assert contents(seeded, "billing", pinned=True) == ["Pinned billing rule"]
    assert contents(seeded, "billing", importance_min=0.8) == ["Pinned billing rule"]
    assert contents(seeded, "billing", since="2999-01-01") == []


def test_deleted_memories_are_not_recalled(seeded: Database) -> None:
    with seeded.write() as conn:
        conn.execute("UPDATE memories SET is_deleted = 1 WHERE content LIKE 'Redis%'")
    assert "Redis caches billing sessions" not in contents(seeded, "billing")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_valid_query(text: str) -> None:
    """Whatever a user types, the match expression never raises an FTS5 syntax error."""
    conn = sqlean.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(c)")
    conn.execute("INSERT INTO f VALUES ('hello world')")
    match = fts_match_expression(text)
    if match is not None:
        conn.execute("SELECT * FROM f WHERE f MATCH ?", (match,)).fetchall()


def test_postings_budget_drops_the_most_common_terms(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signet_desktop.recall import lexical

    service = MemoryService(db)
    for i in range(30):
        service.remember(RememberRequest(content=f"common filler entry {i}"), Actor())
    service.remember(RememberRequest(content="common rareword entry"), Actor())
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 10)
    plan = lexical.plan_terms(db.reader(), ["common", "rareword", "missing"])
    assert plan.matched == ("rareword",)
    assert plan.dropped == ("common",)
    assert plan.min_seq == 0
    hits = lexical_search(db.reader(), "common rareword", "default", RecallFilters())
    assert len(hits) == 1


def test_saturated_rarest_term_searches_the_newest_window(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signet_desktop.recall import lexical

    service = MemoryService(db)
    for i in range(20):
        service.remember(RememberRequest(content=f"everywhere item {i}"), Actor())
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 5)
    monkeypatch.setattr(lexical, "SATURATED_WINDOW", 8)
    plan = lexical.plan_terms(db.reader(), ["everywhere"])
    assert plan.matched == ("everywhere",) and plan.min_seq == 13
    hits = lexical_search(db.reader(), "everywhere", "default", RecallFilters(), k=50)
    assert len(hits) == 8  # only the newest window is searched


def test_filtered_out_pool_falls_back_to_exact_search(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When scope filters reject the whole ranked pool, the exact path still finds matches."""
    from signet_desktop.recall import lexical

    service = MemoryService(db)
    for i in range(12):
        service.remember(RememberRequest(content=f"shared term {i}", agent_id="noisy"), Actor())
    service.remember(RememberRequest(content="shared term mine"), Actor())
    monkeypatch.setattr(lexical, "OVERFETCH", 1)
    hits = lexical_search(db.reader(), "shared term", "default", RecallFilters(), k=2)
    assert len(hits) == 1


def test_stemming_matches_other_word_forms(db: Database) -> None:
    MemoryService(db).remember(
        RememberRequest(content="Caroline researched adoption agencies"), Actor()
    )
    assert contents(db, "what did caroline research about agency?") == [
        "Caroline researched adoption agencies"
    ]


def test_upgrading_to_the_stemmed_index_keeps_existing_memories(tmp_path: Path) -> None:
    """A database made before migration 0006 finds its memories after the rebuild."""
    from signet_desktop.storage.connect import connect
    from signet_desktop.storage.migrate import apply_migrations, load_migrations

    conn, _ = connect(tmp_path / "old.db")
    apply_migrations(conn, [m for m in load_migrations() if m.version < 6])
    conn.execute(
        "INSERT INTO memories (id, content, normalized_content, content_hash, created_at, "
        "updated_at) VALUES ('m1', 'deployments failed twice', 'x', 'h', 'now', 'now')"
    )
    apply_migrations(conn)
    rows = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'deployment'"
    ).fetchall()
    assert len(rows) == 1
