"""A sessions-list row: titled by the first prompt, dated by the session's own start."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from signet_desktop.domain.sessions import SessionTranscript
from signet_desktop.ui.transcript_format import one_line, session_date, session_row

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
IMPORTED = SessionTranscript(
    agent_id="default",
    session_key="9f0c2a44-6b1e-4c55-8d7e-0a1b2c3d4e5f",
    harness="claude-code",
    project="/home/me/src/billing",
    content="",
    turn_count=42,
    created_at="2026-12-06T11:59:30Z",  # the import, a moment ago
    updated_at="2026-12-06T11:59:30Z",
    completed_at="2026-12-06T11:59:30Z",
    content_hash=None,
    source_id="src-1",
    first_prompt="  Why does the billing replica\n\n lag after the nightly vacuum?  ",
    started_at="2025-10-02T09:14:00Z",
)


def test_an_imported_session_reads_as_its_first_prompt_on_its_own_date() -> None:
    row = session_row(IMPORTED, NOW)
    assert row.title == "Why does the billing replica lag after the nightly vacuum?"
    assert row.when == "2 Oct 2025"  # not "just now": the import's time says nothing
    assert row.meta == "/home/me/src/billing · claude-code · 42 turns"
    assert row.status == "imported"
    assert IMPORTED.session_key in row.tooltip and "started 2025-10-02" in row.tooltip


def test_without_a_prompt_the_project_titles_the_row_once() -> None:
    row = session_row(replace(IMPORTED, first_prompt=None, started_at=None), NOW)
    assert row.title == "/home/me/src/billing"
    assert row.meta == "claude-code · 42 turns"  # the project is not said twice
    assert row.when == "today " + datetime(
        2026, 12, 6, 11, 59, 30, tzinfo=UTC
    ).astimezone().strftime("%H:%M")
    bare = session_row(replace(IMPORTED, first_prompt="   ", project=None, harness=None), NOW)
    assert (bare.title, bare.meta) == ("no project", "unknown harness · 42 turns")


def test_a_long_prompt_is_cut_on_one_line() -> None:
    long = one_line("word " * 100, 40)
    assert len(long) == 40 and long.endswith("…") and "\n" not in long
    assert one_line("short\nprompt", 40) == "short prompt"


def test_session_dates_read_by_distance() -> None:
    local_noon = datetime(2026, 12, 6, 12, 0, tzinfo=UTC).astimezone()
    assert session_date("2026-12-06T12:00:00Z", NOW) == f"today {local_noon:%H:%M}"
    yesterday = datetime(2026, 12, 5, 12, 0, tzinfo=UTC).astimezone()
    assert session_date("2026-12-05T12:00:00Z", NOW) == f"yesterday {yesterday:%H:%M}"
    assert session_date("2026-03-04T12:00:00Z", NOW) == "4 Mar"
    assert session_date("2024-03-04T12:00:00Z", NOW) == "4 Mar 2024"
    assert session_date("not a time", NOW) == "not a time"
