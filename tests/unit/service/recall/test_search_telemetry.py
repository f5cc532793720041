"""Search telemetry: off by default, ids and scores only, agent/project scope, no agents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signet_desktop.domain.errors import Forbidden, InvalidInput
from signet_desktop.domain.memory import Actor
from signet_desktop.domain.recall import RecallFilters, RecallQuery
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.recall.lexical import LexicalChannel
from signet_desktop.service.memories.service import MemoryService, RememberRequest
from signet_desktop.service.recall.service import RecallService
from signet_desktop.service.recall.telemetry import SearchTelemetry
from signet_desktop.storage.database import Database, open_database

TEXTS = (
    "billing runs on Postgres 16", "the frontend is written in Svelte",
    "backups run nightly at two", "billing invoices are PDFs", "kafka retries on spikes",
)  # fmt: skip
PERSON = Actor("ana", "user")
AGENT = Actor("claude-code", "agent")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "t.db")
    memories = MemoryService(database, None)
    for agent in ("alpha", "beta"):
        for text in TEXTS:
            project = "billing" if "billing" in text else None
            memories.remember(RememberRequest(text, agent_id=agent, project=project), Actor())
    yield database
    database.close()


def service(db: Database, telemetry: SearchTelemetry) -> RecallService:
    engine = RecallEngine(db, channels=(LexicalChannel(),), weights={"lexical": 1})
    return RecallService(engine, db, telemetry=telemetry)


def test_off_by_default_records_nothing(db: Database) -> None:
    recall = RecallService(
        RecallEngine(db, channels=(LexicalChannel(),), weights={"lexical": 1}), db
    )
    assert recall.telemetry is not None and not recall.telemetry.enabled
    recall.search(RecallQuery("billing postgres", agent_id="alpha"))
    assert recall.telemetry.history(PERSON, "alpha") == []
    assert db.reader().execute("SELECT COUNT(*) FROM memory_search_telemetry").fetchone()[0] == 0
    recall.close()


def test_enabled_records_ids_scores_and_no_content(db: Database) -> None:
    telemetry = SearchTelemetry(db, enabled=True)
    recall = service(db, telemetry)
    try:
        answer = recall.search(RecallQuery("  billing   postgres ", agent_id="alpha"))
        [record] = telemetry.history(PERSON, "alpha")
        assert record.query == "billing postgres" and record.method == answer.method
        assert [(e.memory_id, e.score, e.source) for e in record.results] == [
            (h.memory.id, pytest.approx(h.score), h.source) for h in answer.hits
        ]
        stored = db.reader().execute("SELECT results_json FROM memory_search_telemetry")
        assert "Postgres 16" not in stored.fetchone()[0]  # ids, never content
        assert telemetry.history(PERSON, "alpha", query="BILLING postgres") == [record]
        assert telemetry.history(PERSON, "alpha", query="svelte") == []
    finally:
        recall.close()


def test_an_unrecorded_search_leaves_no_trace_with_telemetry_on(db: Database) -> None:
    telemetry = SearchTelemetry(db, enabled=True)
    recall = service(db, telemetry)
    try:
        assert recall.search(RecallQuery("billing", agent_id="alpha"), recorded=False).hits
        recall.search(RecallQuery("kafka", agent_id="alpha"))
        assert [r.query for r in telemetry.history(PERSON, "alpha")] == ["kafka"]
    finally:
        recall.close()


def test_reads_stay_in_agent_and_project_scope(db: Database) -> None:
    telemetry = SearchTelemetry(db, enabled=True)
    recall = service(db, telemetry)
    try:
        filtered = RecallFilters(project="billing")
        recall.search(RecallQuery("billing", agent_id="alpha", filters=filtered))
        recall.search(RecallQuery("backups", agent_id="alpha"))
        recall.search(RecallQuery("kafka", agent_id="beta"))
        assert [r.query for r in telemetry.history(PERSON, "alpha")] == ["backups", "billing"]
        assert [r.query for r in telemetry.history(PERSON, "alpha", project="billing")] == [
            "billing"
        ]
        assert [r.query for r in telemetry.history(PERSON, "beta")] == ["kafka"]
        assert telemetry.clear(PERSON, "beta") == 1
        assert len(telemetry.history(PERSON, "alpha")) == 2  # another agent's ledger untouched
    finally:
        recall.close()


def test_agents_have_no_analytics_permission(db: Database) -> None:
    telemetry = SearchTelemetry(db, enabled=True)
    recall = service(db, telemetry)
    try:
        recall.search(RecallQuery("billing", agent_id="alpha"))
        with pytest.raises(Forbidden, match="analytics permission"):
            telemetry.history(AGENT, "alpha")
        with pytest.raises(Forbidden):
            telemetry.clear(AGENT, "alpha")
        assert len(telemetry.history(PERSON, "alpha")) == 1  # the refused clear removed nothing
        with pytest.raises(InvalidInput):
            telemetry.history(PERSON, "alpha", limit=0)
    finally:
        recall.close()


def test_a_full_queue_drops_and_counts_instead_of_blocking(db: Database) -> None:
    telemetry = SearchTelemetry(db, enabled=True)
    telemetry.close()  # no writer: the queue fills
    telemetry.enabled = True
    recall = service(db, telemetry)
    query = RecallQuery("billing", agent_id="alpha")
    for _ in range(1_005):
        recall.search(query)
    assert telemetry.dropped == 5
    recall.close()
