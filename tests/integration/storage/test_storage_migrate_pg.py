"""`signet storage migrate` on a real PostgreSQL: a workspace built through the service goes
there and back, verified, resumable after a kill, the source untouched, refusals writing
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean
from support.postgres_server import RunningPostgres

from signet_desktop.cli.main import main
from signet_desktop.daemon.pidfile import WorkspaceLock
from signet_desktop.embedding import vectors
from signet_desktop.embedding.generations import list_generations
from signet_desktop.service.storage_transfer import (
    Location,
    MoveRefused,
    migrate_storage,
    parse_location,
)
from signet_desktop.storage import counters
from signet_desktop.storage.connect import connect_read_only
from signet_desktop.storage.database import open_database
from signet_desktop.storage.postgres.connect import PgConnection, connect_postgres
from signet_desktop.storage.postgres.database import PgDatabase
from signet_desktop.storage.transfer.plan import build_plan
from signet_desktop.storage.transfer.verify import table_digest
from tests.integration.storage.transfer_workspace import (
    build_workspace,
    file_digest,
    memory_listing,
)
from tests.support.postgres import drop_database, new_database

pytestmark = pytest.mark.postgres

PUBLIC_TABLES = (
    "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()"
)


class Killed(BaseException):
    """Stands for the process dying inside a batch (not an Exception: nothing catches it)."""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One realistic workspace (read-only for every test: each checks it stays so)."""
    root = tmp_path_factory.mktemp("ws")
    build_workspace(root, extra=40)
    return root


def db_path(root: Path) -> Path:
    return root / "memory" / "memories.db"


def run_cli(*argv: str, workspace: Path) -> int:
    return main(["storage", "migrate", *argv], env={"SIGNET_WORKSPACE": str(workspace)})


def table_count(conn: PgConnection) -> int:
    return int(conn.execute(PUBLIC_TABLES).fetchone()[0])


def digests(pg_url: str, source: Path) -> dict[str, tuple[int, str]]:
    """Every copied table's (rows, hash) in the PostgreSQL database."""
    pg = connect_postgres(pg_url)
    sqlite = connect_read_only(source)
    try:
        return {p.name: table_digest(pg, p) for p in build_plan(sqlite, pg)}
    finally:
        pg.close()
        sqlite.close()


def test_a_workspace_moves_to_postgres_verified_with_its_counters_and_vectors(
    workspace: Path, pg_empty_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_digest(db_path(workspace))
    assert run_cli("--to", pg_empty_url, "--batch-size", "7", workspace=workspace) == 0
    out, err = capsys.readouterr()
    assert "copied and verified" in out
    assert "✓ memories " in out and "✗" not in out
    assert "memories: 46/46 rows" in err  # 6 facts + 40 generated, progress per table
    assert file_digest(db_path(workspace)) == before  # the source was only read

    sqlite = connect_read_only(db_path(workspace))
    pg = connect_postgres(pg_url := pg_empty_url)
    try:
        # Counters: the same rows as the source's, and what a recount finds.
        for sql in (counters.STORED_COUNTS, counters.STORED_VECTOR_COUNTS):
            assert sorted(map(tuple, pg.execute(sql).fetchall())) == sorted(
                map(tuple, sqlite.execute(sql).fetchall())
            )
        assert counters.recount(pg, repair=False).drifted == ()
        mentions = "SELECT id, mentions FROM entities ORDER BY id"
        assert [tuple(r) for r in pg.execute(mentions).fetchall()] == [
            tuple(r) for r in sqlite.execute(mentions).fetchall()
        ]
        assert pg.execute("SELECT MAX(mentions) FROM entities").fetchone()[0] >= 1
        # Each generation's HNSW index exists; the progress record is gone.
        index = "SELECT 1 FROM pg_indexes WHERE indexname = 'vec_embeddings_g1'"
        assert pg.execute(index).fetchone() is not None
        record = "SELECT to_regclass('storage_transfer_progress') IS NULL"
        assert pg.execute(record).fetchone()[0] is True
        # Identities continue past the copied ids.
        for table, column in (("memories", "seq"), ("embeddings", "id")):
            highest = pg.execute(f"SELECT MAX({column}) FROM {table}").fetchone()[0]
            sequence = f"SELECT nextval(pg_get_serial_sequence('{table}', '{column}'))"
            assert pg.execute(sequence).fetchone()[0] > highest
    finally:
        pg.close()
        sqlite.close()
    # The target opens as an ordinary Signet database (nothing left to migrate).
    opened = PgDatabase(pg_url)
    assert opened.applied_migrations == []
    opened.close()


def test_a_killed_copy_resumes_to_the_same_result_without_duplicates(
    workspace: Path, pg_url: str, postgres_server: RunningPostgres, pg_template: str
) -> None:
    source = Location.sqlite(db_path(workspace))
    target = parse_location(pg_url)
    # entities (copied parents first: z-ledger before a-ledger-old, which merged into it),
    # then memories, then memory_history: each run dies inside a batch.
    kills = iter([("entities", 2), ("memories", 3), ("memory_history", 2)])
    next_kill = ("", 0)

    def die(table: str, batch: int) -> None:
        if (table, batch) == next_kill:
            raise Killed(table)

    committed = {"entities": 2, "memories": 4, "memory_history": 2}
    for _ in range(3):
        next_kill = next(kills)
        with pytest.raises(Killed):
            migrate_storage(source, target, batch_size=2, batch_hook=die)
        table = next_kill[0]
        pg = connect_postgres(pg_url)
        try:  # the batches before committed, the one in flight rolled back with its progress
            assert pg.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == committed[table]
            done = "SELECT rows_done FROM storage_transfer_progress WHERE table_name = :t"
            assert pg.execute(done, {"t": table}).fetchone()[0] == committed[table]
        finally:
            pg.close()
    resumed = migrate_storage(source, target, batch_size=3)
    assert resumed.resumed and resumed.ok, resumed.mismatched

    # The same tables, row for row, as one uninterrupted copy into another database.
    clean = new_database(postgres_server, pg_template)
    try:
        clean_url = postgres_server.url(clean)
        assert migrate_storage(source, parse_location(clean_url), batch_size=1000).ok
        assert digests(pg_url, db_path(workspace)) == digests(clean_url, db_path(workspace))
    finally:
        drop_database(postgres_server, clean)
    pg = connect_postgres(pg_url)
    try:
        unique = "SELECT COUNT(*) = COUNT(DISTINCT id) FROM memories"
        assert pg.execute(unique).fetchone()[0] is True
    finally:
        pg.close()


def test_back_to_sqlite_the_daemon_reads_the_same_memories(
    workspace: Path, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--to", pg_url, workspace=workspace) == 0
    back = tmp_path / "back" / "memory" / "memories.db"
    code = run_cli(
        "--from", pg_url, "--to", f"sqlite:{back}", "--batch-size", "5", workspace=workspace
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "vec0 mirror rebuilt" in out
    assert memory_listing(back) == memory_listing(db_path(workspace))

    db = open_database(back)
    try:
        conn = db.reader()
        (generation,) = list_generations(conn)
        canonical = {int(r[0]) for r in conn.execute("SELECT id FROM embeddings")}
        assert canonical and vectors.mirror_ids(conn, generation) == canonical
        hits = conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'ledger'")
        assert hits.fetchone()[0] >= 2  # the FTS5 index was filled by its triggers
        turns = (
            "SELECT COUNT(*) FROM transcript_turns_fts WHERE transcript_turns_fts MATCH 'bucket'"
        )
        assert conn.execute(turns).fetchone()[0] == 1
        assert counters.recount(conn, repair=False).drifted == ()
        assert (
            conn.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'storage_transfer_progress'"
            ).fetchone()[0]
            == 0
        )
    finally:
        db.close()


def test_a_running_daemon_refuses_the_copy_and_nothing_is_written(
    workspace: Path, pg_empty_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    daemon_dir = workspace / ".daemon"
    daemon_dir.mkdir(exist_ok=True)
    held = WorkspaceLock(daemon_dir, daemon_dir / "pid")  # as the daemon holds it
    held.acquire()
    try:
        assert run_cli("--to", pg_empty_url, workspace=workspace) == 1
    finally:
        held.release()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the daemon is running on" in err[0] and "stop it first" in err[0]
    pg = connect_postgres(pg_empty_url)
    try:
        assert table_count(pg) == 0
    finally:
        pg.close()


def test_a_target_holding_other_data_is_refused_untouched(
    workspace: Path, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    build_workspace(other)
    assert run_cli("--to", pg_url, workspace=other) == 0
    before = digests(pg_url, db_path(workspace))
    capsys.readouterr()
    assert run_cli("--to", pg_url, workspace=workspace) == 1
    err = capsys.readouterr().err
    assert "already holds data (table" in err
    assert digests(pg_url, db_path(workspace)) == before

    # Nor is another source's unfinished copy taken over.
    with pytest.raises(MoveRefused, match="already holds data"):
        migrate_storage(Location.sqlite(db_path(workspace)), parse_location(pg_url))


def test_another_sources_unfinished_copy_is_not_taken_over(
    workspace: Path, pg_empty_url: str, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    build_workspace(other)

    def die(table: str, batch: int) -> None:
        if table == "memories":
            raise Killed(table)

    with pytest.raises(Killed):
        migrate_storage(
            Location.sqlite(db_path(other)), parse_location(pg_empty_url), batch_hook=die
        )
    with pytest.raises(MoveRefused, match="unfinished copy of sqlite:"):
        migrate_storage(Location.sqlite(db_path(workspace)), parse_location(pg_empty_url))


@pytest.mark.parametrize(
    "target",
    [
        "mysql://localhost/signet",
        "postgresql://me:secret@localhost/signet",
        "sqlite:",
        "postgresql://localhost/",
    ],
)
def test_a_bad_url_is_refused_before_anything_is_opened(
    workspace: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_digest(db_path(workspace))
    assert run_cli("--to", target, workspace=workspace) == 2
    assert capsys.readouterr().err.startswith("signet: ")
    assert file_digest(db_path(workspace)) == before


def test_sqlite_to_sqlite_is_refused_and_no_file_is_made(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "copy.db"
    assert run_cli("--to", f"sqlite:{target}", workspace=workspace) == 1
    assert "one end must be PostgreSQL" in capsys.readouterr().err
    assert not target.exists()


def tamper(path: Path, *statements: str) -> None:
    """Write the source behind Signet's back (a drifted counter, a daemon that ran)."""
    conn = sqlean.connect(str(path), isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def test_drifted_counters_are_copied_as_the_source_holds_them_and_reported(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "drift"
    build_workspace(root)
    tamper(
        db_path(root),
        "UPDATE entities SET mentions = 9 WHERE id = 'm-billing'",
        "UPDATE memory_counts SET live = live + 1 WHERE agent_id = 'b'",
    )
    assert run_cli("--to", pg_url, workspace=root) == 0
    out, err = capsys.readouterr()
    assert "copied and verified" in out
    assert "warning: counters differ from a recount (memory_counts:b)" in err
    pg = connect_postgres(pg_url)
    try:
        mentions = "SELECT mentions FROM entities WHERE id = 'm-billing'"
        assert pg.execute(mentions).fetchone()[0] == 9
    finally:
        pg.close()


def test_a_source_changed_between_a_kill_and_the_resume_fails_verification_naming_the_table(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "changed"
    build_workspace(root)

    def die(table: str, batch: int) -> None:
        if table == "memory_history":
            raise Killed(table)

    with pytest.raises(Killed):
        migrate_storage(Location.sqlite(db_path(root)), parse_location(pg_url), batch_hook=die)
    tamper(db_path(root), "UPDATE memories SET importance = 0.99 WHERE seq = 1")
    assert run_cli("--to", pg_url, workspace=root) == 1
    out, err = capsys.readouterr()
    assert "✗ memories " in out and "✓ memory_history " in out
    assert "the copy differs from the source in memories" in err
    pg = connect_postgres(pg_url)
    try:  # the record stays: the target is not handed over as a finished copy
        record = "SELECT to_regclass('storage_transfer_progress') IS NOT NULL"
        assert pg.execute(record).fetchone()[0] is True
    finally:
        pg.close()


def test_a_database_of_another_program_is_refused_untouched(
    workspace: Path, pg_empty_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pg = connect_postgres(pg_empty_url)
    try:
        pg.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        pg.execute("INSERT INTO invoices VALUES (1, 9.5)")
        assert run_cli("--to", pg_empty_url, workspace=workspace) == 1
        assert "not created by Signet Desktop" in capsys.readouterr().err
        assert table_count(pg) == 1
        assert pg.execute("SELECT total FROM invoices").fetchone()[0] == 9.5
    finally:
        pg.close()
