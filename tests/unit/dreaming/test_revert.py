"""Reverting a pass: created rows archived, updates undone, merges split, refused when a later
pass built on it, a dry run changes nothing, a second revert says already reverted."""

from __future__ import annotations

import pytest

from signet_desktop.domain.errors import Conflict
from signet_desktop.dreaming.apply import apply_operations
from signet_desktop.dreaming.revert import plan_revert, revert_pass
from signet_desktop.storage import attention, knowledge_reads, ontology
from signet_desktop.storage.database import Database
from tests.unit.dreaming.test_apply_fixtures import add_memory, attend, cite, count, entity, op


@pytest.fixture
def world(db: Database) -> Database:
    add_memory(db, "a", "m1")
    add_memory(db, "b", "mb", "Bob lives in Porto.")
    return db


def run(db: Database, pass_id: str, ops: list[object], agent: str = "a") -> list[str]:
    report = apply_operations(
        db, agent_id=agent, pass_id=pass_id, operations=ops, actor=f"dreaming:{pass_id}"
    )
    assert all(r.status in ("applied", "proposed") for r in report.results), report.results
    return [i for r in report.results for i in r.created]


def status(db: Database, entity_id: str) -> str:
    found = knowledge_reads.entity(db.reader(), "a", entity_id)
    assert found is not None
    return found.status


def test_created_rows_are_archived_and_a_second_revert_is_a_no_op(world: Database) -> None:
    (alice,) = run(world, "p1", [op("create_entity", {"name": "Alice"}, evidence=cite("Alice"))])
    (home,) = run(world, "p1", [op("create_aspect", {"entityId": alice, "name": "home"},
                                   evidence=cite("Lisbon"))])  # fmt: skip
    before = count(world, "graph_mutations")
    dry = revert_pass(world, "a", "p1", "me", dry_run=True)
    assert dry.dry_run and not dry.reverted and not dry.blockers
    assert [(c.action, c.target_table) for c in dry.changes] == [
        ("archive", "entity_aspects"),
        ("archive", "entities"),
    ]
    assert count(world, "graph_mutations") == before and status(world, alice) == "active"
    done = revert_pass(world, "a", "p1", "me")
    assert done.reverted
    assert status(world, alice) == "archived"
    aspect = knowledge_reads.aspect(world.reader(), "a", home)
    assert aspect is not None and aspect.status == "archived"
    log = knowledge_reads.recent_mutations(world.reader(), "a", 2)
    assert {m.actor for m in log} == {"revert:p1"}
    again = revert_pass(world, "a", "p1", "me")
    assert again.already_reverted and not again.reverted and not again.changes
    assert plan_revert(world.reader(), "a", "p1").already_reverted


def test_rename_and_archive_are_undone_and_attention_reopened(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    ticket = attend(world, "a", f"entity:{alice}")
    with world.write() as conn:  # a real pass row, so attention records which pass resolved it
        conn.execute(
            "INSERT INTO dreaming_passes (id, agent_id, started_at, created_at, updated_at)"
            " VALUES ('p1', 'a', 'x', 'x', 'x')"
        )
    run(
        world,
        "p1",
        [
            op("rename_entity", {"entityId": alice, "newName": "Alicia"}, evidence=cite("Alice")),
            op(
                "archive_entity", {"target": alice, "reason": "r"}, provenance=f"attention:{ticket}"
            ),
        ],
    )
    assert status(world, alice) == "archived"
    done = revert_pass(world, "a", "p1", "me")
    assert done.reverted
    found = knowledge_reads.entity(world.reader(), "a", alice)
    assert found is not None and found.status == "active" and found.name == "Alice"
    row = attention.get_attention(world.reader(), "a", ticket)
    assert row is not None and row.status == "pending"


def test_a_merge_is_split(world: Database) -> None:
    one = entity(world, "a", "Alice", "person")
    two = entity(world, "a", "alice", "unknown")
    ticket = attend(world, "a", f"entity:{two}")
    run(world, "p1", [op("merge_entities", {"targets": [one, two], "survivor": one},
                         provenance=f"attention:{ticket}")])  # fmt: skip
    assert status(world, two) == "merged"
    assert revert_pass(world, "a", "p1", "me").reverted
    assert status(world, two) == "active" and status(world, one) == "active"
    found = knowledge_reads.entity(world.reader(), "a", two)
    assert found is not None and found.merged_into is None


def test_superseded_claims_come_back(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    (home,) = run(world, "p0", [op("create_aspect", {"entityId": alice, "name": "home"},
                                   evidence=cite("Lisbon"))])  # fmt: skip
    payload = {"entityId": alice, "aspectId": home, "claimKey": "city", "value": "Porto"}
    run(world, "p0", [op("set_claim_value", payload, evidence=cite("Lisbon"))])
    run(
        world, "p1", [op("set_claim_value", payload | {"value": "Lisbon"}, evidence=cite("Lisbon"))]
    )
    assert revert_pass(world, "a", "p1", "me").reverted
    claims = knowledge_reads.claims_of_aspects(world.reader(), "a", [home])[home]
    active = [c.content for c in claims if c.status == "active"]
    assert active == ["Porto"]


def test_refused_when_a_later_pass_merged_the_entity(world: Database) -> None:
    (alice,) = run(world, "p1", [op("create_entity", {"name": "Alice", "type": "person"},
                                    evidence=cite("Alice"))])  # fmt: skip
    dup = entity(world, "a", "ALICE", "unknown")
    ticket = attend(world, "a", f"entity:{alice}")
    run(world, "p2", [op("merge_entities", {"targets": [dup, alice], "survivor": dup},
                         provenance=f"attention:{ticket}")])  # fmt: skip
    before = count(world, "graph_mutations")
    outcome = revert_pass(world, "a", "p1", "me")
    assert not outcome.reverted and outcome.blockers
    blocker = outcome.blockers[0]
    assert blocker.by_pass_id == "p2" and "merge_entities by pass p2" in blocker.reason
    assert blocker.target_id == alice
    assert count(world, "graph_mutations") == before and status(world, alice) == "merged"


def test_refused_when_a_later_pass_hangs_work_on_a_created_entity(world: Database) -> None:
    (alice,) = run(world, "p1", [op("create_entity", {"name": "Alice"}, evidence=cite("Alice"))])
    run(world, "p2", [op("create_aspect", {"entityId": alice, "name": "home"},
                         evidence=cite("Lisbon"))])  # fmt: skip
    outcome = revert_pass(world, "a", "p1", "me")
    assert outcome.blockers and outcome.blockers[0].by_pass_id == "p2"
    assert status(world, alice) == "active"


def test_pending_proposals_of_the_pass_are_rejected(world: Database) -> None:
    run(world, "p1", [op("create_entity", {"name": "Acme"}, evidence=cite("Acme"), risk="high")])
    (proposal,) = ontology.list_proposals(world.reader(), "a")
    plan = plan_revert(world.reader(), "a", "p1")
    assert [(c.action, c.target_id) for c in plan.changes] == [("reject", proposal.id)]
    assert revert_pass(world, "a", "p1", "me").reverted
    found = ontology.get_proposal(world.reader(), "a", proposal.id)
    assert found is not None and found.status == "rejected"


def test_another_agent_cannot_revert_the_pass(world: Database) -> None:
    (alice,) = run(world, "p1", [op("create_entity", {"name": "Alice"}, evidence=cite("Alice"))])
    outcome = revert_pass(world, "b", "p1", "mallory")
    assert not outcome.reverted and outcome.changes == ()
    assert status(world, alice) == "active"


def test_a_restore_that_cannot_happen_is_a_conflict(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    ticket = attend(world, "a", f"entity:{alice}")
    run(world, "p1", [op("archive_entity", {"target": alice, "reason": "r"},
                         provenance=f"attention:{ticket}")])  # fmt: skip
    entity(world, "a", "Alice")  # a new active Alice takes the name (no mutation of the row)
    with pytest.raises(Conflict) as caught:
        revert_pass(world, "a", "p1", "me")
    assert caught.value.code == "revert_blocked"
    assert status(world, alice) == "archived"


def test_attention_the_pass_created_is_declined(world: Database) -> None:
    with world.write() as conn:
        conn.execute(
            "INSERT INTO dreaming_passes (id, agent_id, started_at, created_at, updated_at)"
            " VALUES ('p1', 'a', 'x', 'x', 'x')"
        )
    (ticket,) = run(world, "p1", [op("flag", {"subjectRef": "entity:x", "details": "check"})])
    plan = plan_revert(world.reader(), "a", "p1")
    assert [(c.action, c.target_id) for c in plan.changes] == [("decline", ticket)]
    assert revert_pass(world, "a", "p1", "me").reverted
    row = attention.get_attention(world.reader(), "a", ticket)
    assert row is not None and row.status == "declined" and "reverted" in (row.resolution or "")
