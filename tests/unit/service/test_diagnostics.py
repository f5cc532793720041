"""The shared health checks judge the /api/status wire shape (as doctor and the Health pane)."""

from __future__ import annotations

from signet_desktop.service.diagnostics import (
    Level,
    completeness_check,
    render,
    schema_check,
    worker_checks,
)


def test_schema_check_names_the_sqlite_version_and_migrations() -> None:
    check = schema_check(
        {"database": {"path": "/w/db", "sqliteVersion": "3.50.4", "migrations": 7}}
    )
    assert check is not None and check.level is Level.OK
    assert check.text == "database /w/db open (SQLite 3.50.4, 7 migrations applied)"
    empty = schema_check({"database": {"path": "/w/db", "sqliteVersion": "3", "migrations": 0}})
    assert empty is not None and empty.level is Level.WARN
    assert schema_check({}) is None


def test_completeness_says_what_recall_will_report() -> None:
    complete = completeness_check({"embedding": {"vectorSearch": "complete"}})
    window = completeness_check({"embedding": {"vectorSearch": "recent-window"}})
    assert complete is not None and complete.level is Level.OK
    assert window is not None and window.level is Level.WARN
    assert "newest vectors" in window.text
    assert completeness_check({"embedding": {}}) is None


def test_worker_checks_grade_each_state() -> None:
    checks = worker_checks(
        {
            "workers": {
                "embedding": {"state": "running", "error": None},
                "ingest": {"state": "crashed", "error": "boom"},
                "hints": {"state": "paused", "error": None},
            }
        }
    )
    assert render(checks) == [
        "✓ worker embedding running",
        "! worker hints paused",
        "✗ worker ingest crashed: boom",
    ]
    assert worker_checks({}) == []
