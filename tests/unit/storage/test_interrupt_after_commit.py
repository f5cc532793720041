"""A signal that lands after COMMIT returned, before its block was left, stays the signal.

A bare ROLLBACK there fails with "no transaction is active", and that database error used to
replace the KeyboardInterrupt: a SIGTERM during start-up's migrations exited 2 ("database
error") instead of a clean 0 (seen in CI).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean

from signet_desktop.storage.database import open_database
from signet_desktop.storage.migrate import apply_migrations, load_migrations


def test_an_interrupt_after_commit_in_a_write_is_the_interrupt(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db")
    try:
        with pytest.raises(KeyboardInterrupt), db.write() as conn:
            conn.execute("CREATE TABLE t (x)")
            conn.execute("COMMIT")  # what the block's own COMMIT does, then the signal
            raise KeyboardInterrupt
        with db.write() as conn:  # the connection is usable and the commit stood
            assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    finally:
        db.close()


def test_an_interrupt_after_a_migration_committed_is_the_interrupt(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db")
    db.close()

    class Interrupting:
        """The real connection, with a signal arriving just after the bookkeeping's COMMIT."""

        def __init__(self, conn: object) -> None:
            self.conn = conn

        def __getattr__(self, name: str) -> object:
            return getattr(self.conn, name)

        def execute(self, sql: str, *args: object) -> object:
            result = self.conn.execute(sql, *args)  # type: ignore[attr-defined]
            if sql == "COMMIT":
                raise KeyboardInterrupt
            return result

    raw = sqlean.connect(str(tmp_path / "t.db"), isolation_level=None)
    try:
        with pytest.raises(KeyboardInterrupt):
            apply_migrations(Interrupting(raw), load_migrations())  # type: ignore[arg-type]
        assert not raw.in_transaction
    finally:
        raw.close()
