"""storage/errors.py: psycopg's errors leave the adapter as neutral classes, SQLite's stay
sqlean's, and the pair is caught the same way."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
import sqlean

from signet_desktop.storage import errors
from signet_desktop.storage.postgres.connect import translate_error

OPEN = SimpleNamespace(closed=False, broken=False)  # a connection still usable
LOST = SimpleNamespace(closed=False, broken=True)


def translated(exc: psycopg.Error, raw: Any = OPEN) -> errors.DatabaseError:
    return translate_error(exc, raw)


def test_constraint_errors_become_integrity_errors_with_their_sqlstate() -> None:
    unique = translated(psycopg.errors.UniqueViolation("duplicate key"))
    assert type(unique) is errors.UniqueViolation and unique.sqlstate == "23505"
    foreign = translated(psycopg.errors.ForeignKeyViolation("no parent"))
    assert type(foreign) is errors.IntegrityError and foreign.sqlstate == "23503"
    assert errors.is_unique_violation(unique) and not errors.is_unique_violation(foreign)


def test_a_lost_or_refused_connection_is_unavailable() -> None:
    assert type(translated(psycopg.OperationalError("refused"), None)) is (
        errors.DatabaseUnavailable
    )
    assert type(translated(psycopg.OperationalError("eof"), LOST)) is errors.DatabaseUnavailable
    shutdown = translated(psycopg.errors.AdminShutdown("terminating connection"))
    assert type(shutdown) is errors.DatabaseUnavailable and shutdown.sqlstate == "57P01"


def test_other_errors_are_plain_database_errors() -> None:
    wrong = translated(psycopg.errors.SyntaxError("syntax error at or near"))
    assert type(wrong) is errors.DatabaseError and wrong.sqlstate == "42601"
    assert str(wrong) == "syntax error at or near"


def test_sqlite_errors_are_sqleans_own_and_caught_by_the_same_tuples() -> None:
    conn = sqlean.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
    conn.execute("INSERT INTO t VALUES (1, 'a')")
    with pytest.raises(errors.INTEGRITY_ERRORS) as unique:
        conn.execute("INSERT INTO t VALUES (1, 'b')")
    assert type(unique.value) is sqlean.IntegrityError and errors.is_unique_violation(unique.value)
    with pytest.raises(errors.INTEGRITY_ERRORS) as missing:
        conn.execute("INSERT INTO t (id) VALUES (2)")
    assert not errors.is_unique_violation(missing.value)
    with pytest.raises(errors.DATABASE_ERRORS):
        conn.execute("SELECT nothing FROM nowhere")
    conn.close()


def test_the_errors_module_and_the_factory_import_no_driver() -> None:
    code = (
        "import sys, signet_desktop.storage.errors, signet_desktop.storage.store; "
        "print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
