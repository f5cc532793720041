"""storage/ontology.py, storage/attention.py, storage/dreaming_operations.py: the seam's rows."""

from __future__ import annotations

from signet_desktop.storage import attention, dreaming_operations, ontology
from signet_desktop.storage.database import Database
from signet_desktop.storage.dreaming_operations import NewOperationRecord


def test_proposals_dedupe_on_payload_and_evidence(db: Database) -> None:
    args = dict(
        operation="rename_entity",
        payload={"entityId": "e1", "newName": "Bob"},
        evidence=[{"quote": "Bob", "source_ref": "memory:m1"}],
        confidence=0.9,
        rationale="renamed",
        provenance=None,
        risk="high",
        pass_id=None,
        created_by="t",
    )
    with db.write() as conn:
        first, created = ontology.propose(conn, agent_id="a", **args)  # type: ignore[arg-type]
        again, created_again = ontology.propose(conn, agent_id="a", **args)  # type: ignore[arg-type]
        other, created_other = ontology.propose(conn, agent_id="b", **args)  # type: ignore[arg-type]
        changed = dict(args, evidence=[{"quote": "Bobby", "source_ref": "memory:m1"}])
        third, created_third = ontology.propose(conn, agent_id="a", **changed)  # type: ignore[arg-type]
    assert created and not created_again and first.id == again.id
    assert created_other and other.id != first.id
    assert created_third and third.id != first.id
    conn = db.reader()
    assert [p.id for p in ontology.list_proposals(conn, "b")] == [other.id]
    assert ontology.get_proposal(conn, "b", first.id) is None
    with db.write() as conn:
        assert ontology.mark_rejected(conn, "a", first.id, actor="me", reason="no")
        assert not ontology.mark_rejected(conn, "a", first.id, actor="me", reason="twice")
        assert not ontology.mark_applied(conn, "b", third.id, actor="b", result={})
        # a rejected proposal no longer blocks a new identical one
        fresh, created_fresh = ontology.propose(conn, agent_id="a", **args)  # type: ignore[arg-type]
    assert created_fresh and fresh.id != first.id
    rejected = ontology.get_proposal(db.reader(), "a", first.id)
    assert rejected is not None and rejected.status == "rejected" and rejected.error == "no"


def test_attention_lifecycle(db: Database) -> None:
    with db.write() as conn:
        row = attention.create_attention(
            conn, agent_id="a", kind="hygiene", subject_ref="entity:e1", details={"why": "dupe"}
        )
        same = attention.create_attention(
            conn, agent_id="a", kind="hygiene", subject_ref="entity:e1", details={}, priority=90
        )
    assert same.id == row.id and same.priority == 90 and same.status == "pending"
    conn = db.reader()
    assert [x.id for x in attention.list_attention(conn, "a")] == [row.id]
    assert attention.list_attention(conn, "b") == []
    assert attention.get_attention(conn, "b", row.id) is None
    with db.write() as conn:
        assert not attention.resolve_attention(conn, "b", row.id, pass_id=None, resolution="x")
        assert attention.resolve_attention(conn, "a", row.id, pass_id="nope", resolution="done")
        assert not attention.decline_attention(conn, "a", row.id, pass_id=None, resolution="x")
    done = attention.get_attention(db.reader(), "a", row.id)
    assert done is not None and done.status == "resolved" and done.resolved_by_pass_id is None
    with db.write() as conn:
        assert attention.reopen_attention(conn, "a", row.id)
    assert attention.count_pending(db.reader(), "a") == 1


def test_operation_records_are_ordered_per_pass(db: Database) -> None:
    record = NewOperationRecord("flag", {"subjectRef": "x"}, [], None, "applied", None, None, {})
    skipped = NewOperationRecord("boom", {}, [], None, "skipped", "unknown_operation", "no", None)
    with db.write() as conn:
        dreaming_operations.append(
            conn, agent_id="a", pass_id="p1", request_id="r1", actor="t", records=[record, skipped]
        )
        dreaming_operations.append(
            conn, agent_id="a", pass_id="p1", request_id="r2", actor="t", records=[record]
        )
    rows = dreaming_operations.for_pass(db.reader(), "a", "p1")
    assert [r.seq for r in rows] == [0, 1, 2]
    assert [r.status for r in rows] == ["applied", "skipped", "applied"]
    assert rows[1].code == "unknown_operation" and rows[1].reason == "no"
    assert dreaming_operations.written_in_pass(db.reader(), "a", "p1") == 2
    assert dreaming_operations.for_pass(db.reader(), "b", "p1") == []
