"""The apply seam: every bad input is rejected per operation with its reason, nothing wrongly
written; good operations land through the graph writer with provenance."""

from __future__ import annotations

import json

import pytest

from signet_desktop.dreaming.apply import ApplyCaps, apply_operations, validate_operations
from signet_desktop.storage import attention, dreaming_operations, knowledge_reads, ontology
from signet_desktop.storage.database import Database
from tests.unit.dreaming.test_apply_fixtures import (
    FACT,
    add_memory,
    add_transcript,
    aspect,
    attend,
    cite,
    count,
    entity,
    op,
    pin,
)


@pytest.fixture
def world(db: Database) -> Database:
    add_memory(db, "a", "m1")
    add_memory(db, "b", "mb", "Bob lives in Porto.")
    add_transcript(db, "a", "done", "User: we deploy with Kamal on Fridays", complete=True)
    add_transcript(db, "a", "open", "User: the database is Postgres 16", complete=False)
    add_transcript(db, "b", "theirs", "User: Bob uses Rust at work", complete=True)
    return db


def apply(db: Database, ops: list[object], **kw: object) -> dict[int, tuple[str, str | None, str]]:
    report = apply_operations(
        db, agent_id="a", pass_id=kw.pop("pass_id", "p1"), operations=ops, actor="dreaming:p1",
        **kw,  # type: ignore[arg-type]
    )  # fmt: skip
    return {r.index: (r.status, r.code, r.reason or "") for r in report.results}


def test_a_cited_create_entity_is_applied_with_provenance(world: Database) -> None:
    out = apply(world, [op("create_entity", {"name": "Alice", "type": "person"},
                           evidence=cite("Alice moved to Lisbon"))])  # fmt: skip
    assert out[0][0] == "applied"
    found = knowledge_reads.live_entity_named(world.reader(), "a", "Alice")
    assert found is not None and found.created_by == "dreaming:p1"
    log = knowledge_reads.mutations_of_pass(world.reader(), "a", "p1")
    assert [m.operation for m in log] == ["create_entity"]
    assert log[0].evidence[0].quote == "Alice moved to Lisbon"
    rows = dreaming_operations.for_pass(world.reader(), "a", "p1")
    assert [(r.operation, r.status) for r in rows] == [("create_entity", "applied")]
    assert rows[0].result and rows[0].result["created"] == [found.id]


@pytest.mark.parametrize(
    ("evidence", "code", "words"),
    [
        (cite("Alice moved to Paris"), "quote_not_found", "quote not found in memory:m1"),
        (cite("Bob lives in Porto", "memory:mb"), "scope_mismatch", "scope mismatch"),
        (cite("Bob uses Rust", "transcript:theirs"), "scope_mismatch", "scope mismatch"),
        (cite("Postgres 16", "transcript:open"), "source_in_progress", "in progress"),
        (cite("Kamal", "transcript:nowhere"), "source_not_found", "does not exist"),
        (cite("Kamal", "webpage:x"), "operation_malformed", ""),
        ([], "evidence_required", "at least one exact quote"),
    ],
)
def test_bad_evidence_is_rejected_and_nothing_written(
    world: Database, evidence: list[dict[str, str]], code: str, words: str
) -> None:
    raw = op("create_entity", {"name": "Alice", "type": "person"})
    if evidence or code == "evidence_required":
        raw["evidence"] = evidence
    if code == "operation_malformed":
        raw["evidence"] = [{"quote": "Kamal", "source_ref": "ab"}]  # too short to be kind:id
    status, got, reason = apply(world, [raw])[0]
    assert (status, got) == ("skipped", code) and words in reason
    assert count(world, "entities") == 0 and count(world, "graph_mutations") == 0
    rows = dreaming_operations.for_pass(world.reader(), "a", "p1")
    assert [(r.status, r.code) for r in rows] == [("skipped", code)]


def test_a_quote_from_a_completed_transcript_counts(world: Database) -> None:
    out = apply(world, [op("create_entity", {"name": "Kamal", "type": "tool"},
                           evidence=cite("we deploy with Kamal", "transcript:done"))])  # fmt: skip
    assert out[0][0] == "applied"


def test_hygiene_needs_matching_pending_attention(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    other = entity(world, "a", "Zed")
    dup = entity(world, "a", "ALICE", "unknown")
    elsewhere = attend(world, "a", f"entity:{other}")
    foreign = attend(world, "b", f"entity:{alice}")
    archive = {"target": alice, "reason": "duplicate"}
    out = apply(
        world,
        [
            op("archive_entity", archive),
            op("archive_entity", archive, provenance=f"attention:{elsewhere}"),
            op("archive_entity", archive, provenance=f"attention:{foreign}"),
            op("archive_entity", archive, provenance="attention:missing"),
            op("archive_entity", archive, provenance="memory:m1"),
            op("merge_entities", {"targets": [alice, dup], "survivor": alice}),
        ],
    )
    assert out[0][1] == "attention_required"
    assert out[1][1] == "attention_target_mismatch" and f"entity:{other}" in out[1][2]
    assert out[2][1] == "attention_not_found"
    assert out[3][1] == "attention_not_found"
    assert out[4][1] == "provenance_invalid"
    assert out[5][1] == "attention_required"
    assert all(status == "skipped" for status, _, _ in out.values())
    found = knowledge_reads.entity(world.reader(), "a", alice)
    assert found is not None and found.status == "active"


def test_archive_with_attention_applies_and_resolves_it(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    ticket = attend(world, "a", f"entity:{alice}")
    out = apply(world, [op("archive_entity", {"target": alice, "reason": "stale"},
                           provenance=f"attention:{ticket}")])  # fmt: skip
    assert out[0][0] == "applied"
    found = knowledge_reads.entity(world.reader(), "a", alice)
    assert found is not None and found.status == "archived"
    row = attention.get_attention(world.reader(), "a", ticket)
    assert row is not None and row.status == "resolved"
    log = knowledge_reads.mutations_of_pass(world.reader(), "a", "p1")
    assert log[-1].proposal_id == f"attention:{ticket}"


def test_merge_needs_one_duplicate_group_and_spares_pinned(world: Database) -> None:
    one = entity(world, "a", "Alice", "person")
    two = entity(world, "a", "alice", "unknown")
    three = entity(world, "a", "Alicia")
    ticket = attend(world, "a", f"entity:{two}")
    merge = {"targets": [one, two], "survivor": one}
    bad = {"targets": [one, three], "survivor": one}
    out = apply(world, [op("merge_entities", bad, provenance=f"attention:{ticket}")])
    assert out[0][1] in ("merge_not_duplicates", "attention_target_mismatch")
    pin(world, "a", two)
    out = apply(world, [op("merge_entities", merge, provenance=f"attention:{ticket}")])
    assert out[0][1] == "merge_pinned"
    with world.write() as conn:
        from signet_desktop.domain.knowledge import Provenance
        from signet_desktop.storage import graph

        graph.set_pinned(conn, Provenance(actor="t", agent_id="a"), two, False)
    out = apply(world, [op("merge_entities", merge, provenance=f"attention:{ticket}")])
    assert out[0][0] == "applied"
    merged = knowledge_reads.entity(world.reader(), "a", two)
    assert merged is not None and merged.status == "merged" and merged.merged_into == one


def test_unknown_and_malformed_operations_are_per_operation(world: Database) -> None:
    good = op("create_entity", {"name": "Alice", "type": "person"}, evidence=cite("Alice"))
    out = apply(
        world,
        [
            op("drop_everything", {}),
            "{not json",
            op("create_entity", {"name": 5}),
            op("create_entity", {"name": "X", "type": "spaceship"}, evidence=cite("Alice")),
            good,
        ],
    )
    assert out[0][1] == "unknown_operation"
    assert out[1][1] == "operation_malformed"
    assert out[2][1] == "payload_malformed"
    assert out[3][1] == "payload_malformed" and "spaceship" in out[3][2]
    assert out[4][0] == "applied"
    rows = dreaming_operations.for_pass(world.reader(), "a", "p1")
    assert [r.seq for r in rows] == [0, 1, 2, 3, 4]
    assert rows[1].payload == {"raw": None}


def test_a_request_over_the_cap_is_rejected_whole(world: Database) -> None:
    ops = [op("create_entity", {"name": f"E{i}"}, evidence=cite("Alice")) for i in range(101)]
    report = apply_operations(
        world, agent_id="a", pass_id="p1", operations=ops, actor="t", caps=ApplyCaps()
    )
    assert report.code == "request_cap_exceeded" and "cap of 100" in (report.reason or "")
    assert {r.status for r in report.results} == {"skipped"}
    assert count(world, "entities") == 0 and count(world, "graph_mutations") == 0
    assert count(world, "dreaming_operations", "code = 'request_cap_exceeded'") == 101


def test_the_per_pass_cap(world: Database) -> None:
    caps = ApplyCaps(max_per_pass=2)
    ops = [op("create_entity", {"name": f"E{i}"}, evidence=cite("Alice")) for i in range(3)]
    out = apply(world, ops, caps=caps)
    assert [out[i][0] for i in range(3)] == ["applied", "applied", "skipped"]
    assert out[2][1] == "pass_cap_exceeded"
    out = apply(world, ops[:1], caps=caps)
    assert out[0][1] == "pass_cap_exceeded"


def test_one_failing_operation_does_not_block_the_rest(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    bob = entity(world, "a", "Bob")
    ops = [
        op("create_entity", {"name": "Carol"}, evidence=cite("Alice")),
        # validates (Bob is active) but fails in its savepoint: the name is taken
        op("rename_entity", {"entityId": bob, "newName": "Alice"}, evidence=cite("Alice")),
        op("create_entity", {"name": "Dave"}, evidence=cite("Alice")),
    ]
    caps = ApplyCaps(batch_size=10)
    out = apply(world, ops, caps=caps)
    assert [out[i][0] for i in range(3)] == ["applied", "failed", "applied"]
    assert out[1][1] == "entity_name_taken"
    names = {e.name for e in knowledge_reads.list_entities(world.reader(), "a").items}
    assert names == {"Alice", "Bob", "Carol", "Dave"}
    assert alice


def test_review_only_operations_become_deduplicated_proposals(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    pin(world, "a", alice)
    rename = op("rename_entity", {"entityId": alice, "newName": "Alicia"}, evidence=cite("Alice"))
    risky = op("create_entity", {"name": "Acme", "type": "organization"},
               evidence=cite("works at Acme"), risk="high")  # fmt: skip
    first = apply(world, [rename, risky])
    assert [first[i][:2] for i in range(2)] == [("proposed", "review_only")] * 2
    again = apply(world, [rename, risky], pass_id="p2")
    assert again[0][1] == "duplicate_proposal"
    pending = ontology.list_proposals(world.reader(), "a")
    assert len(pending) == 2 and {p.operation for p in pending} == {
        "rename_entity",
        "create_entity",
    }
    found = knowledge_reads.entity(world.reader(), "a", alice)
    assert found is not None and found.name == "Alice"
    assert knowledge_reads.live_entity_named(world.reader(), "a", "Acme") is None


def test_a_conflicting_claim_value_records_a_contradiction(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    home = aspect(world, "a", alice, "home")
    first = op("add_claim_value", {"entityId": alice, "aspectId": home, "claimKey": "city",
                                   "value": "Lisbon"}, evidence=cite("Lisbon"))  # fmt: skip
    second = op("add_claim_value", {"entityId": alice, "aspectId": home, "claimKey": "city",
                                    "value": "Porto"}, evidence=cite("Alice moved"))  # fmt: skip
    out = apply(world, [first, second])
    assert out[0][0] == out[1][0] == "applied"
    found = ontology.list_contradictions(world.reader(), "a")
    assert len(found) == 1 and {found[0].left_content, found[0].right_content} == {
        "Lisbon",
        "Porto",
    }
    assert count(world, "entity_attributes", "status = 'active'") == 2  # neither replaced
    assert ontology.list_contradictions(world.reader(), "b") == []


def test_set_claim_value_supersedes_and_records_no_contradiction(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    home = aspect(world, "a", alice, "home")
    payload = {"entityId": alice, "aspectId": home, "claimKey": "city", "value": "Porto"}
    apply(world, [op("set_claim_value", payload, evidence=cite("Lisbon"))])
    out = apply(
        world, [op("set_claim_value", payload | {"value": "Lisbon"}, evidence=cite("Lisbon"))]
    )
    assert out[0][0] == "applied"
    assert count(world, "entity_attributes", "status = 'active'") == 1
    assert count(world, "entity_attributes", "status = 'superseded'") == 1
    assert ontology.list_contradictions(world.reader(), "a") == []


def test_flag_and_decline_attention(world: Database) -> None:
    out = apply(world, [op("flag", {"subjectRef": "entity:x", "details": "check", "priority": 70})])
    assert out[0][0] == "applied"
    (row,) = attention.list_attention(world.reader(), "a")
    assert row.subject_ref == "entity:x" and row.priority == 70
    foreign = attend(world, "b", "entity:y")
    out = apply(
        world,
        [
            op("decline_attention", {"attentionId": foreign}),
            op("decline_attention", {"attentionId": row.id}),
            op("decline_attention", {"attentionId": row.id}),
        ],
    )
    assert out[0][1] == "attention_not_found"
    assert out[1][0] == "applied"
    assert out[2][0] == "failed" and out[2][1] == "attention_not_pending"
    other = attention.get_attention(world.reader(), "b", foreign)
    assert other is not None and other.status == "pending"


def test_agent_b_cannot_touch_agent_a_rows(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    ticket = attend(world, "b", f"entity:{alice}")
    report = apply_operations(
        world,
        agent_id="b",
        pass_id="pb",
        operations=[
            op(
                "rename_entity",
                {"entityId": alice, "newName": "Mallory"},
                evidence=cite("Bob lives", "memory:mb"),
            ),
            op(
                "archive_entity", {"target": alice, "reason": "x"}, provenance=f"attention:{ticket}"
            ),
        ],
        actor="t",
    )
    assert [r.code for r in report.results] == ["target_not_found", "target_not_found"]
    assert "not found in this agent's scope" in (report.results[0].reason or "")
    found = knowledge_reads.entity(world.reader(), "a", alice)
    assert found is not None and found.name == "Alice" and found.status == "active"


def test_validate_is_a_pure_read_and_dry_run_writes_nothing(world: Database) -> None:
    ops = [op("create_entity", {"name": "Alice"}, evidence=cite("Alice")), op("nope", {})]
    verdicts = validate_operations(world.reader(), agent_id="a", pass_id="p1", operations=ops)
    assert [v.status for v in verdicts] == ["valid", "rejected"]
    report = apply_operations(
        world, agent_id="a", pass_id="p1", operations=ops, actor="t", dry_run=True
    )
    assert [r.status for r in report.results] == ["valid", "skipped"]
    assert count(world, "entities") == 0 and count(world, "dreaming_operations") == 0


def test_records_keep_the_cited_evidence(world: Database) -> None:
    apply(world, [op("create_entity", {"name": "Alice"}, evidence=cite("Alice moved"))])
    (row,) = dreaming_operations.for_pass(world.reader(), "a", "p1")
    assert row.evidence == ({"quote": "Alice moved", "source_ref": "memory:m1"},)
    assert json.loads(json.dumps(row.payload)) == {"name": "Alice", "type": "unknown"}
    assert FACT.startswith("Alice")


def test_operations_that_are_not_a_list(world: Database) -> None:
    report = apply_operations(
        world,
        agent_id="a",
        pass_id="p1",
        operations={"operation": "flag"},
        actor="t",  # type: ignore[arg-type]
    )
    assert report.code == "operations_invalid" and report.results == ()
    assert count(world, "dreaming_operations") == 0


def test_references_to_rows_made_earlier_in_the_request(world: Database) -> None:
    acme = entity(world, "a", "Acme", "organization")
    ev = cite("Alice moved to Lisbon")
    report = apply_operations(
        world,
        agent_id="a",
        pass_id="p1",
        actor="t",
        operations=[
            op("create_entity", {"name": "Alice", "type": "person"}, evidence=ev),
            op("create_aspect", {"entityId": "$0", "name": "home"}, evidence=ev),
            op("add_claim_value", {"entityId": "$0", "aspectId": "$1", "claimKey": "city",
                                   "value": "Lisbon"}, evidence=ev),
            op("create_link", {"fromEntityId": "$0", "toEntityId": acme, "linkType": "works_at"},
               evidence=cite("works at Acme")),
            op("create_entity", {"name": "Alice", "type": "person"}, evidence=ev),  # no_change
            op("create_aspect", {"entityId": "$4", "name": "work"}, evidence=ev),
        ],
    )  # fmt: skip
    statuses = [(r.status, r.code) for r in report.results]
    assert statuses == [("applied", None)] * 4 + [("skipped", "no_change"), ("applied", None)]
    alice = report.results[0].created[0]
    assert report.results[4].target_id == alice
    aspects = knowledge_reads.aspects_of(world.reader(), "a", alice)
    assert {a.name for a in aspects} == {"home", "work"}
    (claim,) = knowledge_reads.claims_of_aspects(
        world.reader(), "a", [report.results[1].created[0]]
    )[report.results[1].created[0]]
    assert claim.content == "Lisbon"
    rows = dreaming_operations.for_pass(world.reader(), "a", "p1")
    assert rows[1].payload["entityId"] == alice  # recorded resolved


def test_bad_references(world: Database) -> None:
    ev = cite("Alice")
    out = apply(
        world,
        [
            op("create_aspect", {"entityId": "$3", "name": "home"}, evidence=ev),
            op("create_entity", {"name": "X", "type": "spaceship"}, evidence=ev),
            op("create_aspect", {"entityId": "$1", "name": "home"}, evidence=ev),
            op("create_entity", {"name": "Bob"}, evidence=ev),
            op("create_aspect", {"entityId": "$3", "name": "home"}, evidence=ev),
            op("add_claim_value", {"entityId": "$0", "aspectId": "$4", "claimKey": "k",
                                   "value": "v"}, evidence=ev),
            op("add_claim_value", {"entityId": "$3", "aspectId": "$3", "claimKey": "k",
                                   "value": "v"}, evidence=ev),
        ],
    )  # fmt: skip
    assert out[0][1] == "reference_invalid" and "earlier" in out[0][2]
    assert out[2][1] == "reference_invalid" and "will not be applied" in out[2][2]
    assert out[3][0] == out[4][0] == "applied"
    assert out[5][1] == "reference_invalid"  # $0 was rejected
    assert out[6][1] == "reference_invalid" and "not a create_aspect" in out[6][2]


def test_a_reference_to_an_operation_that_failed_fails(world: Database) -> None:
    bob = entity(world, "a", "Bob")
    ticket = attend(world, "a", f"entity:{bob}")
    ev = cite("Alice")
    out = apply(
        world,
        [
            op("archive_entity", {"target": bob, "reason": "x"}, provenance=f"attention:{ticket}"),
            # validated while Bob was active; fails at write time, so $1 makes no row
            op("create_aspect", {"entityId": bob, "name": "home"}, evidence=ev),
            op("add_claim_value", {"entityId": bob, "aspectId": "$1", "claimKey": "k",
                                   "value": "v"}, evidence=ev),
        ],
    )  # fmt: skip
    assert out[0][0] == "applied"
    assert out[1][:2] == ("failed", "entity_not_active")
    assert out[2][:2] == ("failed", "reference_failed") and "made no row" in out[2][2]


def test_claim_times_are_stored_and_a_bad_date_fails_only_its_operation(world: Database) -> None:
    alice = entity(world, "a", "Alice")
    home = aspect(world, "a", alice, "home")
    timed = {"entityId": alice, "aspectId": home, "claimKey": "city", "value": "Lisbon",
             "occurredAt": "2023-05-08", "validFrom": "2023-05-08T13:56:00Z",
             "timePrecision": "day", "reviewAfter": "2024-05-08"}  # fmt: skip
    bad = timed | {"claimKey": "moved", "value": "Porto", "occurredAt": "last spring"}
    out = apply(
        world,
        [op("add_claim_value", timed, evidence=cite("Lisbon")),
         op("add_claim_value", bad, evidence=cite("Alice moved"))],
    )  # fmt: skip
    assert out[0][0] == "applied"
    assert out[1][0] == "failed" and "occurred_at must be an ISO-8601" in out[1][2]
    [claim] = knowledge_reads.claims_of_aspects(world.reader(), "a", [home])[home]
    assert (claim.times.occurred_at, claim.times.valid_from) == (
        "2023-05-08", "2023-05-08T13:56:00Z"
    )  # fmt: skip
    assert (claim.times.time_precision, claim.times.review_after) == ("day", "2024-05-08")
    assert claim.times.valid_until is None and claim.times.occurred_until is None
