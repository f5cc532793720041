"""storage/dreaming_passes.py: pass rows, one running per agent, ordered tool calls, state."""

from __future__ import annotations

import pytest

from signet_desktop.domain.dreaming import DreamingState, MutationCounts, PassUsage
from signet_desktop.storage import dreaming_passes as passes
from signet_desktop.storage.database import Database


def begin(db: Database, agent: str = "a") -> str:
    with db.write() as conn:
        return passes.create_pass(conn, agent_id=agent, mode="incremental", trigger_reason="manual")


def test_one_running_pass_per_agent(db: Database) -> None:
    first = begin(db, "a")
    with pytest.raises(passes.PassAlreadyRunning) as caught:
        begin(db, "a")
    assert caught.value.pass_id == first
    other = begin(db, "b")  # another agent is not blocked
    with db.write() as conn:
        assert passes.finish_pass(conn, first, status="completed", summary="ok")
        assert not passes.finish_pass(conn, first, status="failed")  # already ended
    second = begin(db, "a")
    assert second not in (first, other)


def test_usage_mutations_and_context_accumulate(db: Database) -> None:
    pass_id = begin(db)
    with db.write() as conn:
        passes.add_usage(conn, pass_id, PassUsage(100, 20, 5, 0, None))
        passes.add_usage(conn, pass_id, PassUsage(50, 10, 0, 0, 0.25))
        passes.add_mutations(conn, pass_id, MutationCounts(2, 1, 3))
        passes.set_context(conn, pass_id, evidence_window={"items": []}, runbook={"mode": "x"})
    row = passes.get_pass(db.reader(), "a", pass_id)
    assert row is not None
    assert (row.usage.input_tokens, row.usage.output_tokens, row.usage.cost_usd) == (150, 30, 0.25)
    assert row.mutations == MutationCounts(2, 1, 3)
    assert row.evidence_window == {"items": []} and row.runbook == {"mode": "x"}
    assert passes.get_pass(db.reader(), "b", pass_id) is None  # scoped


def test_tool_calls_are_recorded_in_order(db: Database) -> None:
    pass_id = begin(db)
    with db.write() as conn:
        for n, name in enumerate(("search_evidence", "apply_ontology_ops", "runbook_write")):
            seq = passes.record_tool_call(
                conn,
                agent_id="a",
                pass_id=pass_id,
                tool_call_id=f"c{n}",
                tool_name=name,
                input_value={"n": n},
                output_value={"ok": True} if n != 1 else None,
                status="ok" if n != 1 else "error",
                error=None if n != 1 else "bad",
                duration_ms=n,
            )
            assert seq == n
    calls = passes.tool_calls(db.reader(), "a", pass_id)
    names = [c.tool_name for c in calls]
    assert names == ["search_evidence", "apply_ontology_ops", "runbook_write"]
    assert calls[1].status == "error" and calls[1].output is None and calls[1].input == {"n": 1}
    assert passes.tool_calls(db.reader(), "b", pass_id) == []


def test_huge_tool_payload_is_stored_truncated(db: Database) -> None:
    pass_id = begin(db)
    with db.write() as conn:
        passes.record_tool_call(
            conn,
            agent_id="a",
            pass_id=pass_id,
            tool_call_id=None,
            tool_name="get_evidence",
            input_value={},
            output_value={"text": "x" * 100_000},
            status="ok",
            error=None,
            duration_ms=1,
        )
    (call,) = passes.tool_calls(db.reader(), "a", pass_id)
    assert call.output["truncated"] is True and call.output["chars"] > 100_000


def test_interrupt_running_marks_failed(db: Database) -> None:
    running = begin(db, "a")
    done = begin(db, "b")
    with db.write() as conn:
        passes.finish_pass(conn, done, status="completed")
        interrupted = passes.interrupt_running(conn, "interrupted")
    assert [p.id for p in interrupted] == [running]
    row = passes.get_pass(db.reader(), "a", running)
    assert row is not None and row.status == "failed" and row.error == "interrupted"
    assert row.completed_at is not None


def test_list_filters_by_status_newest_first(db: Database) -> None:
    ids = []
    for _ in range(3):
        pass_id = begin(db)
        with db.write() as conn:
            passes.finish_pass(conn, pass_id, status="completed")
        ids.append(pass_id)
    failed = begin(db)
    with db.write() as conn:
        passes.finish_pass(conn, failed, status="failed", error="x")
    assert [p.id for p in passes.list_passes(db.reader(), "a", status="completed")] == ids[::-1]
    assert [p.id for p in passes.list_passes(db.reader(), "a", limit=1)] == [failed]
    assert passes.list_passes(db.reader(), "b") == []


def test_state_round_trip_and_exclusions(db: Database) -> None:
    assert passes.get_state(db.reader(), "a") == DreamingState("a")
    pass_id = begin(db)
    state = DreamingState("a", consecutive_failures=2, last_error="e", next_attempt_at="t")
    with db.write() as conn:
        passes.put_state(conn, state)
        passes.record_exclusions(conn, "a", pass_id, [("memory", "m1", "withheld")])
        passes.record_exclusions(conn, "a", pass_id, [("memory", "m1", "withheld again")])
    assert passes.get_state(db.reader(), "a") == state
    (excluded,) = passes.exclusions_of_pass(db.reader(), "a", pass_id)
    assert excluded.reason == "withheld again" and excluded.attempts == 2
    assert passes.exclusions_of_pass(db.reader(), "b", pass_id) == []
