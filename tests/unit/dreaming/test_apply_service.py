"""service/knowledge/ontology.py: proposals apply/reject through the seam, events after commit, and
one agent never seeing or changing another's proposals, attention or passes."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.events import Event
from signet_desktop.domain.ontology import OntologyChanged, PassReverted
from signet_desktop.dreaming.apply import apply_operations
from signet_desktop.service.knowledge.ontology import OntologyService
from signet_desktop.storage import knowledge_reads
from signet_desktop.storage.database import Database
from tests.unit.dreaming.test_apply_fixtures import add_memory, attend, cite, count, entity, op


class Sink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def service(db: Database, sink: Sink) -> OntologyService:
    add_memory(db, "a", "m1")
    add_memory(db, "b", "mb", "Bob lives in Porto.")
    return OntologyService(db, events=sink)


def propose(db: Database, name: str = "Acme") -> str:
    report = apply_operations(
        db, agent_id="a", pass_id="p1", actor="dreaming:p1",
        operations=[op("create_entity", {"name": name}, evidence=cite("Alice"), risk="high")],
    )  # fmt: skip
    proposal_id = report.results[0].proposal_id
    assert proposal_id is not None
    return proposal_id


def test_apply_a_proposal(db: Database, service: OntologyService, sink: Sink) -> None:
    proposal_id = propose(db)
    assert [p.id for p in service.proposals("a")] == [proposal_id]
    outcome = service.apply_proposal("a", proposal_id, actor="me")
    assert outcome.proposal.status == "applied" and outcome.proposal.applied_by == "me"
    assert outcome.report is not None and outcome.report.results[0].status == "applied"
    created = knowledge_reads.live_entity_named(db.reader(), "a", "Acme")
    assert created is not None and created.proposal_id == proposal_id
    assert any(isinstance(e, OntologyChanged) and e.applied == 1 for e in sink.events)
    with pytest.raises(Conflict):
        service.apply_proposal("a", proposal_id, actor="me")


def test_a_proposal_that_no_longer_validates_fails(db: Database, service: OntologyService) -> None:
    alice = entity(db, "a", "Alice")
    report = apply_operations(
        db, agent_id="a", pass_id="p1", actor="t",
        operations=[op("rename_entity", {"entityId": alice, "newName": "Alicia"},
                       evidence=cite("Alice"), risk="high")],
    )  # fmt: skip
    proposal_id = report.results[0].proposal_id
    assert proposal_id is not None
    ticket = attend(db, "a", f"entity:{alice}")
    service.apply(
        "a",
        [op("archive_entity", {"target": alice, "reason": "x"}, provenance=f"attention:{ticket}")],
        actor="me",
    )
    outcome = service.apply_proposal("a", proposal_id, actor="me")
    assert outcome.proposal.status == "failed" and "archived" in (outcome.proposal.error or "")


def test_reject_needs_a_reason(db: Database, service: OntologyService, sink: Sink) -> None:
    proposal_id = propose(db)
    with pytest.raises(InvalidInput):
        service.reject_proposal("a", proposal_id, actor="me", reason=" ")
    outcome = service.reject_proposal("a", proposal_id, actor="me", reason="not a company")
    assert outcome.proposal.status == "rejected" and outcome.proposal.error == "not a company"
    assert service.proposals("a") == []
    assert [p.id for p in service.proposals("a", status="rejected")] == [proposal_id]
    assert knowledge_reads.live_entity_named(db.reader(), "a", "Acme") is None
    assert any(isinstance(e, OntologyChanged) and e.rejected == 1 for e in sink.events)


def test_bulk(db: Database, service: OntologyService) -> None:
    ids = [propose(db, "Acme"), propose(db, "Initech")]
    results = service.bulk("a", [*ids, "missing"], action="apply", actor="me")
    assert [getattr(r, "proposal", None) and r.proposal.status for r in results[:2]] == [  # type: ignore[union-attr]
        "applied",
        "applied",
    ]
    assert isinstance(results[2], NotFound)
    with pytest.raises(InvalidInput):
        service.bulk("a", ids, action="reject", actor="me")


def test_manual_apply_and_dry_run(db: Database, service: OntologyService) -> None:
    raw = [op("create_entity", {"name": "Alice"}, evidence=cite("Alice"))]
    dry = service.apply("a", raw, actor="me", dry_run=True)
    assert dry.results[0].status == "valid" and count(db, "entities") == 0
    done = service.apply("a", raw, actor="me")
    assert done.results[0].status == "applied" and done.pass_id is None
    with pytest.raises(InvalidInput):
        service.apply("a", [], actor="me")


def test_revert_through_the_service(db: Database, service: OntologyService, sink: Sink) -> None:
    apply_operations(
        db, agent_id="a", pass_id="p1", actor="dreaming:p1",
        operations=[op("create_entity", {"name": "Alice"}, evidence=cite("Alice"))],
    )  # fmt: skip
    assert service.revert_pass("a", "p1", actor="me", dry_run=True).changes
    assert service.revert_pass("a", "p1", actor="me").reverted
    assert any(isinstance(e, PassReverted) and e.pass_id == "p1" for e in sink.events)
    assert service.revert_pass("a", "p1", actor="me").already_reverted
    with pytest.raises(NotFound):
        service.revert_pass("a", "nope", actor="me")


def test_agent_b_sees_and_changes_nothing_of_agent_a(
    db: Database, service: OntologyService
) -> None:
    proposal_id = propose(db)
    alice = entity(db, "a", "Alice")
    attend(db, "a", f"entity:{alice}")
    apply_operations(
        db, agent_id="a", pass_id="pa", actor="t",
        operations=[op("create_entity", {"name": "Zed"}, evidence=cite("Alice"))],
    )  # fmt: skip
    assert service.proposals("b", status="all") == []
    assert service.attention("b") == []
    assert service.contradictions("b") == []
    assert service.operations("b", "pa") == []
    with pytest.raises(NotFound):
        service.apply_proposal("b", proposal_id, actor="mallory")
    with pytest.raises(NotFound):
        service.reject_proposal("b", proposal_id, actor="mallory", reason="x")
    with pytest.raises(NotFound):
        service.revert_pass("b", "pa", actor="mallory")
    rename = op(
        "rename_entity", {"entityId": alice, "newName": "M"}, evidence=cite("Bob", "memory:mb")
    )
    report = service.apply("b", [rename], actor="mallory")
    assert report.results[0].code == "target_not_found"
    assert service.proposal("a", proposal_id).status == "pending"
    assert knowledge_reads.live_entity_named(db.reader(), "a", "Zed") is not None
