"""The turn index (migration 0014): written with its session row, backfilled, purged with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.domain.sessions import Turn
from signet_desktop.evidence.canonical import CanonicalFile, CanonicalTurn
from signet_desktop.recall.transcript_channel import TurnScope, search_turns
from signet_desktop.service.transcripts.service import TranscriptService, content_turns
from signet_desktop.storage import transcript_turns as turn_rows
from signet_desktop.storage.database import Database, open_database
from signet_desktop.storage.transcript_turns import MAX_TURN_CHARS


def turns(*texts: str) -> list[Turn]:
    roles = ("user", "assistant")
    return [
        Turn(f"t{i}", roles[i % 2], text, f"2026-11-30T10:0{i % 10}:00Z")
        for i, text in enumerate(texts)
    ]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "ws" / "memory" / "memories.db")
    yield database
    database.close()


@pytest.fixture
def service(db: Database, tmp_path: Path) -> TranscriptService:
    return TranscriptService(db, tmp_path / "ws")


def indexed(
    db: Database, session_key: str, agent_id: str = "default"
) -> list[tuple[int, str, str]]:
    rows = turn_rows.neighbours(db.reader(), agent_id, session_key, 0, 10_000)
    return [(r.ordinal, r.role, r.text) for r in rows]


def found(db: Database, query: str, agent_id: str = "default") -> list[tuple[str, int]]:
    hits = search_turns(db.reader(), query, TurnScope(agent_id))
    return [(h.session_key, h.ordinal) for h in hits]


def test_a_capture_indexes_every_turn_with_its_role_and_time(
    service: TranscriptService, db: Database
) -> None:
    service.capture("default", "s1", "claude-code", turns("billing uses Postgres", "noted"))
    assert indexed(db, "s1") == [(0, "user", "billing uses Postgres"), (1, "assistant", "noted")]
    (row,) = turn_rows.neighbours(db.reader(), "default", "s1", 0, 0)
    assert row.timestamp == "2026-11-30T10:00:00Z"
    assert found(db, "postgres") == [("s1", 0)]


def test_a_live_session_grows_turn_by_turn_and_a_shorter_reread_drops_nothing(
    service: TranscriptService, db: Database
) -> None:
    service.capture("default", "live", "codex", turns("first question"))
    assert found(db, "question") == [("live", 0)]  # recallable before the session ends
    service.capture("default", "live", "codex", turns("first question", "the answer is 42"))
    assert [o for o, _, _ in indexed(db, "live")] == [0, 1]
    service.capture("default", "live", "codex", turns("first question"))
    assert [o for o, _, _ in indexed(db, "live")] == [0, 1]


def test_a_huge_turn_is_indexed_bounded(service: TranscriptService, db: Database) -> None:
    big = "needle " + "hay " * 3_000_000  # 12 MB in one turn
    service.capture("default", "big", "claude-code", turns(big, "short reply"))
    (first, _) = indexed(db, "big")
    assert len(first[2]) == MAX_TURN_CHARS
    assert found(db, "needle") == [("big", 0)]


def test_turns_are_scoped_by_agent_and_project(service: TranscriptService, db: Database) -> None:
    service.capture("a", "k", "codex", turns("deploy with helm"), project="alpha")
    service.capture("b", "k", "codex", turns("deploy with helm"), project="alpha")
    service.capture("a", "k2", "codex", turns("deploy with helm"), project="beta")
    reader = db.reader()
    alpha = search_turns(reader, "helm", TurnScope("a", "alpha", "exact"))
    assert [(h.session_key, h.project) for h in alpha] == [("k", "alpha")]
    assert {h.session_key for h in search_turns(reader, "helm", TurnScope("a"))} == {"k", "k2"}
    assert [h.session_key for h in search_turns(reader, "helm", TurnScope("b"))] == ["k"]
    unscoped = TurnScope("a", "alpha", "scoped", exclude_session="k")
    assert search_turns(reader, "helm", unscoped) == []


def test_deleting_the_session_row_removes_its_turns_from_the_index(
    service: TranscriptService, db: Database
) -> None:
    service.capture("default", "gone", "codex", turns("kafka retention is seven days"))
    assert found(db, "kafka")
    with db.write() as conn:
        conn.execute("DELETE FROM session_transcripts WHERE session_key = 'gone'")
    assert found(db, "kafka") == []
    count = db.reader().execute("SELECT COUNT(*) FROM transcript_turns").fetchone()[0]
    assert count == 0


def _forget_turns(db: Database, session_key: str) -> None:
    """Put a session back in the state migration 0014 found it: retained, not indexed."""
    with db.write() as conn:
        seq = turn_rows.session_seq(conn, "default", session_key)
        conn.execute("DELETE FROM transcript_turns WHERE session_seq = :s", {"s": seq})
        conn.execute("INSERT INTO transcript_turn_backfill (session_seq) VALUES (:s)", {"s": seq})


def test_recovery_backfills_sessions_from_their_canonical_lines(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    service.capture("default", "old", "claude-code", turns("redis cache sizing", "2 GB"))
    _forget_turns(db, "old")
    assert found(db, "redis") == []
    TranscriptService(db, tmp_path / "ws").recover()
    assert indexed(db, "old") == [(0, "user", "redis cache sizing"), (1, "assistant", "2 GB")]
    (row, _) = turn_rows.neighbours(db.reader(), "default", "old", 0, 1)
    assert row.timestamp == "2026-11-30T10:00:00Z"  # from the canonical line
    assert turn_rows.pending_backfill(db.reader(), 10) == []


def test_backfill_without_canonical_lines_splits_the_rendered_content(
    db: Database, tmp_path: Path
) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO session_transcripts (session_key, agent_id, content, harness, "
            "created_at, updated_at) VALUES ('sig', 'default', :c, 'signet', 'x', 'x')",
            {"c": "User: where are the backups?\n\nAssistant: in the S3 bucket nightly"},
        )
        conn.execute(
            "INSERT INTO transcript_turn_backfill (session_seq) SELECT seq FROM "
            "session_transcripts WHERE session_key = 'sig'"
        )
    TranscriptService(db, tmp_path / "ws").recover()
    assert indexed(db, "sig") == [
        (0, "user", "where are the backups?"),
        (1, "assistant", "in the S3 bucket nightly"),
    ]


def test_a_capture_of_a_session_awaiting_backfill_indexes_it_whole(
    service: TranscriptService, db: Database
) -> None:
    service.capture("default", "s", "codex", turns("alpha one"))
    _forget_turns(db, "s")
    service.capture("default", "s", "codex", turns("alpha one", "beta two"))
    assert [o for o, _, _ in indexed(db, "s")] == [0, 1]
    assert turn_rows.pending_backfill(db.reader(), 10) == []


def test_adopted_lines_are_indexed(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    """kill -9 after the append, before the commit: adoption indexes the adopted turns."""
    service.capture("default", "s1", "claude-code", turns("a"))
    canonical = CanonicalFile(tmp_path / "ws", "claude-code")
    late = Turn("t1", "assistant", "grafana dashboards moved", None)
    canonical.append([CanonicalTurn("default", "s1", "claude-code", None, 1, late)])
    TranscriptService(db, tmp_path / "ws").recover()
    assert found(db, "grafana") == [("s1", 1)]


def test_content_turns_reads_the_role_labels() -> None:
    rows = content_turns("User: hi\n\nAssistant: hello\n\nSystem: note")
    assert [(r.ordinal, r.role, r.text) for r in rows] == [
        (0, "user", "hi"),
        (1, "assistant", "hello"),
        (2, "user", "System: note"),
    ]


def test_a_database_from_before_migration_0014_is_backfilled_at_the_next_start(
    tmp_path: Path,
) -> None:
    """The real upgrade: sessions retained under 0013 become recallable turn by turn."""
    from signet_desktop.storage.connect import connect
    from signet_desktop.storage.migrate import apply_migrations, load_migrations

    root = tmp_path / "ws"
    path = root / "memory" / "memories.db"
    path.parent.mkdir(parents=True)
    before = [m for m in load_migrations() if m.version < 14]
    conn, _ = connect(path, with_vec=False)
    apply_migrations(conn, before)
    conn.execute(
        "INSERT INTO session_transcripts (session_key, agent_id, content, harness, created_at, "
        "updated_at, completed_at, turn_count) VALUES ('old', 'default', :c, 'codex', 'x', 'x', "
        "'x', 2)",
        {"c": "User: which port does staging use?\n\nAssistant: staging listens on 5433"},
    )
    conn.commit()
    conn.close()
    db = open_database(path)  # applies 0014
    try:
        assert [p.session_key for p in turn_rows.pending_backfill(db.reader(), 10)] == ["old"]
        assert found(db, "staging") == []
        TranscriptService(db, root).recover()
        assert found(db, "staging") == [("old", 1), ("old", 0)]
        assert turn_rows.pending_backfill(db.reader(), 10) == []
    finally:
        db.close()


def test_live_captures_of_one_session_are_spaced_out(
    service: TranscriptService, db: Database, tmp_path: Path
) -> None:
    import json

    path = tmp_path / "home" / "s.jsonl"
    path.parent.mkdir(parents=True)
    message = {"role": "user", "content": "the vault unseal keys are split five ways"}
    path.write_text(json.dumps({"type": "user", "uuid": "u1", "message": message}) + "\n")
    live = TranscriptService(db, tmp_path / "ws", allowed_roots=[tmp_path / "home"])
    try:
        assert live.capture_later("default", "s", "claude-code", str(path))
        assert not live.capture_later("default", "s", "claude-code", str(path))  # too soon
        assert live.capture_later("default", "other", "claude-code", str(path))
        live.wait_live()
        assert found(db, "unseal") in ([("s", 0), ("other", 0)], [("other", 0), ("s", 0)])
    finally:
        live.close()
