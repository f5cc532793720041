"""Events said in words, and the Overview cards' sentences (plain values, no window)."""

from __future__ import annotations

from datetime import UTC, datetime

from signet_desktop.domain.events import (
    DocumentFinished,
    JobDead,
    JobLeased,
    MemoryCreated,
    StatusChanged,
    TranscriptCaptured,
)
from signet_desktop.queue.repair import QueueRepaired
from signet_desktop.service.verdict import Verdict
from signet_desktop.ui.activity_words import Detail, describe
from signet_desktop.ui.overview_format import agents_card, daemon_card, duration, since
from signet_desktop.ui.overview_report import AgentFact

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
CREATED = MemoryCreated(memory_id="m1", memory_type="fact", embedded=False)


def text(event: object, detail: Detail | None = None) -> str | None:
    line = describe(event, detail)  # type: ignore[arg-type]
    return None if line is None else line.text


def test_memory_events_name_who_and_what() -> None:
    detail = Detail(who="claude-code", text="billing runs on Postgres 16 " + "x" * 80)
    line = describe(CREATED, detail)
    assert line is not None
    assert line.text.startswith("Claude Code remembered “billing runs on Postgres 16 x")
    assert line.text.endswith("…”") and len(line.text) < 90
    assert (line.pane, line.reveal) == ("memories", {"memory_id": "m1"})
    assert text(CREATED) == "A memory was stored"
    assert text(CREATED, Detail(who="user", text="hi")) == "You remembered “hi”"
    chunk = Detail(who="document-ingest", text="# Runbook")
    assert text(CREATED, chunk) == "A document chunk was stored: “# Runbook”"


def test_failures_documents_sessions_and_repairs_read_as_sentences() -> None:
    dead = JobDead(job_id="j", job_type="embedding_backfill", worker=None, error="timeout")
    assert text(dead) == "An embedding backfill job failed for good: timeout"
    assert describe(dead).level == "warn"  # type: ignore[union-attr]
    done = DocumentFinished(document_id="d", status="done", chunk_count=12)
    assert (
        text(done, Detail(text="Billing runbook")) == "“Billing runbook” is searchable (12 chunks)"
    )
    failed = DocumentFinished(document_id="d", status="failed", error="404")
    assert text(failed) == "A document failed: 404"
    session = TranscriptCaptured(
        session_key="s", harness="codex", turns=4, appended=1, completed=False
    )
    assert text(session) == "Codex kept 1 more turn of a session"
    assert text(QueueRepaired(action="requeue", affected=1)) == (
        "The queue was repaired: 1 job retried"
    )


def test_bookkeeping_says_nothing() -> None:
    assert describe(StatusChanged(key="workers")) is None
    assert describe(JobLeased(job_id="j", job_type="x", worker="w", attempt=1)) is None


def test_card_sentences() -> None:
    assert since("2026-12-06T11:55:00Z", NOW) == "5 min ago"
    assert since("2026-12-05T11:00:00Z", NOW) == "yesterday"
    assert since(None, NOW) == "never"
    assert duration(2 * 3600 + 5 * 60) == "2 h 5 min"
    runtime = {"url": "http://127.0.0.1:3850", "startedAt": "2026-12-06T09:30:00Z"}
    ready = Verdict("healthy", "ready")
    card = daemon_card(runtime, "", NOW, ready)
    assert (card.value, card.detail) == ("Running", "127.0.0.1:3850 · up 2 h 30 min")
    down = daemon_card(runtime, "", NOW, Verdict("error", "the database does not answer"))
    assert (down.value, down.detail) == ("Needs attention", "the database does not answer")
    agents = agents_card(
        (
            AgentFact("claude-code", "Claude Code", True, True, "2026-12-06T09:00:00Z"),
            AgentFact("codex", "Codex", True, False, None),
        ),
        NOW,
    )
    assert agents.value == "1 of 2 connected"
    assert agents.detail.splitlines() == [
        "● Claude Code: connected · last session 3 h ago",
        "○ Codex: installed, not connected",
    ]
