"""The shared health checks judge the service's values (as doctor and the Health pane)."""

from __future__ import annotations

from pathlib import Path

from signet_desktop.service.diagnostics import (
    Level,
    completeness_check,
    render,
    schema_check,
    worker_checks,
)
from signet_desktop.service.embeddings.service import EmbeddingStatus
from signet_desktop.service.facade import DatabaseInfo


def test_schema_check_names_the_sqlite_version_and_migrations() -> None:
    check = schema_check(DatabaseInfo(Path("/w/db"), "3.50.4", 7))
    assert check.level is Level.OK
    assert check.text == "database /w/db open (SQLite 3.50.4, 7 migrations applied)"
    assert schema_check(DatabaseInfo(Path("/w/db"), "3", 0)).level is Level.WARN


def _embedding(vector_search: str) -> EmbeddingStatus:
    return EmbeddingStatus("hash", "hash-64", 64, None, vector_search)


def test_completeness_says_what_recall_will_report() -> None:
    complete = completeness_check(_embedding("complete"))
    window = completeness_check(_embedding("recent-window"))
    assert complete.level is Level.OK
    assert window.level is Level.WARN
    assert "newest vectors" in window.text


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
