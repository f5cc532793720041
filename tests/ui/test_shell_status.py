"""What the status bar and the tray say, from real status facts (pure functions, then the bar)."""

from __future__ import annotations

import dataclasses

import pytest
from pytestqt.qtbot import QtBot

from signet_desktop.domain.events import MemoryCreated, StatusChanged
from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.service.verdict import FailedItem, StateFacts, vectors_text
from signet_desktop.ui.status_bar import StatusBar
from signet_desktop.ui.status_view import (
    StatusView,
    WorkerFact,
    ago,
    read_status,
    tray_state,
    workers_text,
)

pytestmark = pytest.mark.gui

READY_FACTS = StateFacts(
    database_ok=True,
    warming_up=(),
    embedder="native",
    embedded=12431,
    embeddable=12431,
    vector_search="complete",
    workers=(WorkerFact("embedding", "running"), WorkerFact("documents", "running")),
)
READY = StatusView(memory_count=12431, vector="sqlite-vec v0.1.9", facts=READY_FACTS)


def with_(**changes: object) -> StatusView:
    facts = dataclasses.replace(READY_FACTS, **changes)  # type: ignore[arg-type]
    return dataclasses.replace(READY, facts=facts)


def test_read_status_over_the_real_facade(service: SignetService) -> None:
    service.memories.remember(RememberRequest(content="billing runs on Postgres 16"), Actor())
    view = read_status(service)
    assert view.memory_count == 1
    assert view.facts.database_ok and view.facts.embedder == "none"
    assert view.vector.startswith("sqlite-vec v")
    # The transcript TTL sweep and the content-safety worker are always declared; nothing
    # hosts them in this test.
    assert not view.facts.paused
    assert {
        WorkerFact("transcript-ttl", "pending"),
        WorkerFact("content-safety", "pending"),
    } <= set(view.facts.workers)
    service.pipeline.pause()
    assert read_status(service).facts.paused


def test_the_status_line_reads_like_the_sketch() -> None:
    assert READY.verdict.headline == "Ready"
    assert vectors_text(READY.facts) == "vectors complete"
    assert workers_text(READY) == "2 workers idle"
    assert tray_state(READY).state == "healthy"
    assert tray_state(READY).reason == "Ready · 12,431 memories"
    assert with_(embedded=40, embeddable=120).verdict.headline == "Embedding 40 of 120…"
    assert with_(paused=True).verdict.headline == "Paused"


def test_a_failed_item_is_a_notice_not_a_degraded_app() -> None:
    item = FailedItem("j1", "document_ingest", "404", "2026-12-06T10:00:00Z", "d1", "spec.pdf")
    view = with_(failed=1, failed_items=(item,))
    assert view.verdict.state == "healthy" and view.verdict.notices == (item,)
    assert tray_state(view).reason == "Ready · 12,431 memories · 1 failed item"
    assert item.label == "the document “spec.pdf”"


def test_vectors_say_how_far_the_backfill_is() -> None:
    def text(**changes: object) -> str:
        return vectors_text(with_(**changes).facts)

    assert text(embedded=9000) == "vectors 72% (3,431 to go)"
    assert text(embedder="none") == "keyword only (no embedder)"
    assert text(vector_search="unavailable") == "vector search unavailable"
    assert text(vector_search="recent-window") == "vectors complete (recent-window)"


def test_workers_text_covers_each_situation() -> None:
    assert workers_text(with_(workers=())) == "no workers"
    assert workers_text(with_(paused=True)) == "workers paused"
    assert workers_text(with_(jobs_active=3)) == "2 workers working (3 queued)"
    crashed = (WorkerFact("embedding", "crashed", "boom"), WorkerFact("documents", "running"))
    assert workers_text(with_(workers=crashed)) == "1 of 2 workers crashed"
    assert workers_text(with_(workers=(WorkerFact("e", "pending"),))) == "1 worker pending"


@pytest.mark.parametrize(
    ("changes", "state", "reason"),
    [
        ({"database_ok": False}, "error", "the database does not answer"),
        (
            {"workers": (WorkerFact("embedding", "crashed", "model missing"),), "paused": True},
            "error",
            "worker embedding crashed: model missing",
        ),
        ({"paused": True, "embedded": 10}, "paused", "workers paused"),
        ({"health": "degraded", "embedded": 10}, "degraded", None),
        ({"failed": 2}, "healthy", "ready"),
        ({"warming_up": ("embedder",)}, "working", "warming up (embedder)"),
        ({"embedded": 9000}, "working", "embedding 9,000 of 12,431"),
        ({"jobs_active": 5}, "working", "5 jobs queued"),
    ],
)
def test_the_worst_fact_decides_the_tray_state(
    changes: dict[str, object], state: str, reason: str | None
) -> None:
    result = with_(**changes).verdict
    assert result.state == state
    if reason is not None:
        assert result.reason == reason


def test_ago_wording() -> None:
    assert [ago(s) for s in (0.2, 3.9, 59, 61, 7200)] == [
        "just now",
        "3 s ago",
        "59 s ago",
        "1 min ago",
        "2 h ago",
    ]


def test_the_bar_ages_the_last_event_from_stored_time(qtbot: QtBot) -> None:
    now = [100.0]
    bar = StatusBar(clock=lambda: now[0])
    qtbot.addWidget(bar)
    assert bar.last_text() == ""
    bar.note_event(MemoryCreated(memory_id="m", memory_type="fact", embedded=False))
    assert bar.last_label.full_text() == "· A memory was stored just now"
    bar.note_event(StatusChanged(key="workers"))  # bookkeeping: not shown as "last"
    now[0] += 3
    qtbot.wait(1200)  # the 1 s ticker re-renders; it reads nothing
    assert bar.last_label.full_text() == "· A memory was stored 3 s ago"
    bar.show_view(with_(workers=(WorkerFact("embedding", "crashed"),)))
    assert bar.dot_label.property("state") == "error"
    assert bar.dot_label.toolTip() == "worker embedding crashed"
    assert bar.state_label.text() == "Needs attention: worker embedding crashed"
    bar.show_view(READY)
    assert bar.dot_label.property("state") == "ok"
    assert bar.state_label.text() == "Ready"
    assert bar.memories_label.text() == "· 12,431 memories"
    assert bar.failed_label.isHidden()
    bar.stop()
