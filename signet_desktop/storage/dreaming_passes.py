"""dreaming_state, dreaming_passes, dreaming_tool_calls, dreaming_evidence_exclusions.

The pass record and its context: one row per pass (window and runbook as JSON), its ordered
tool-call trace, the sources it left out and why, and per-agent scheduler state. The partial
unique index `idx_dreaming_passes_one_running` allows one running pass per agent:
`create_pass` turns its refusal into `PassAlreadyRunning`.

**One pass per agent across daemons (PostgreSQL).** The unique index keeps a second running
row out, but "running" is only a row: a daemon starting up used to fail every running pass as
left by a killed daemon, and with several daemons that row may be another's live pass. So a
pass also holds its agent's session-level advisory lock (`take_pass_lock`, on a connection of
its own, `storage/postgres/advisory.py`) from before its row is inserted until after it is
finished. Who holds the lock runs the pass; a running row whose lock is free belongs to a
dead daemon (its session ended with it) and may be failed — under that lock. On SQLite the
workspace lock makes this process the only runner: `take_pass_lock` is a no-op there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from signet_desktop.domain.dreaming import (
    DreamingPass,
    DreamingState,
    EvidenceExclusion,
    MutationCounts,
    PassMode,
    PassStatus,
    PassUsage,
    ToolCallRecord,
    ToolCallStatus,
    TriggerReason,
)
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.errors import INTEGRITY_ERRORS, recoverable
from signet_desktop.storage.rows import TableRows, from_row

TABLES = (
    "dreaming_state",
    "dreaming_passes",
    "dreaming_tool_calls",
    "dreaming_evidence_exclusions",
)
MAX_TOOL_JSON_CHARS = 64_000  # a recorded argument/result beyond this is stored truncated


class PassAlreadyRunning(Exception):
    """The agent has a running pass; `pass_id` names it (None if it ended meanwhile)."""

    def __init__(self, agent_id: str, pass_id: str | None) -> None:
        super().__init__(f"a Dreaming pass is already running for agent {agent_id!r}")
        self.agent_id = agent_id
        self.pass_id = pass_id


PASS_LOCK_NAMESPACE = "signet.dreaming.pass"


class PassLock(Protocol):
    """The right to run one agent's pass: `intact()` while held, `release()` when done."""

    def intact(self) -> bool: ...

    def release(self) -> None: ...


class _ProcessOnly:
    """SQLite: the workspace lock already makes this process the only runner."""

    def intact(self) -> bool:
        return True

    def release(self) -> None:
        return None


def take_pass_lock(conn: Connection, url: str | None, agent_id: str) -> PassLock | None:
    """The agent's pass lock, or None when another session (daemon, thread) holds it.

    `conn` tells the dialect; on PostgreSQL `url` is the database's (the lock gets a
    connection of its own). Never waits."""
    if not is_postgres(conn):
        return _ProcessOnly()
    if url is None:
        raise ValueError("a PostgreSQL pass lock needs the database URL")
    from signet_desktop.storage.postgres.advisory import SessionLock, lock_key

    return SessionLock.try_acquire(url, lock_key(PASS_LOCK_NAMESPACE, agent_id))


def running_agents(conn: Connection) -> list[str]:
    """Agents with a running pass (here or on another daemon)."""
    rows = conn.execute("SELECT DISTINCT agent_id FROM dreaming_passes WHERE status = 'running'")
    return sorted(str(r[0]) for r in rows)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _pass(row: Any) -> DreamingPass:
    return from_row(
        DreamingPass,
        row,
        usage=PassUsage(
            int(row["tokens_input"]),
            int(row["tokens_output"]),
            int(row["tokens_cache_read"]),
            int(row["tokens_cache_write"]),
            row["cost_usd"],
        ),
        mutations=MutationCounts(
            int(row["mutations_applied"]),
            int(row["mutations_skipped"]),
            int(row["mutations_failed"]),
        ),
        evidence_window=_loads(row["evidence_window_json"]),
        runbook=_loads(row["runbook_json"]),
    )


PASSES = TableRows("dreaming_passes", "*", _pass)


# -- passes ------------------------------------------------------------------------------


def running_pass_id(conn: Connection, agent_id: str) -> str | None:
    row = conn.execute(
        "SELECT id FROM dreaming_passes WHERE agent_id = :a AND status = 'running'", {"a": agent_id}
    ).fetchone()
    return None if row is None else str(row[0])


def create_pass(
    conn: Connection,
    *,
    agent_id: str,
    mode: PassMode,
    trigger_reason: TriggerReason | None,
    provider: str | None = None,
    model: str | None = None,
    pass_id: str | None = None,
    now: str | None = None,
) -> str:
    """Insert a running pass; PassAlreadyRunning when the agent already has one."""
    pass_id = pass_id or str(uuid.uuid4())
    now = now or utc_now()
    try:
        with recoverable(conn):  # the transaction goes on to read the running pass
            conn.execute(
                "INSERT INTO dreaming_passes (id, agent_id, mode, status, trigger_reason,"
                " provider, model, started_at, created_at, updated_at)"
                " VALUES (:id, :agent, :mode, 'running', :reason, :provider, :model, :now, :now,"
                " :now)",
                {
                    "id": pass_id,
                    "agent": agent_id,
                    "mode": mode,
                    "reason": trigger_reason,
                    "provider": provider,
                    "model": model,
                    "now": now,
                },
            )
    except INTEGRITY_ERRORS as exc:
        running = running_pass_id(conn, agent_id)
        if running is None:
            raise
        raise PassAlreadyRunning(agent_id, running) from exc
    return pass_id


def set_context(
    conn: Connection,
    pass_id: str,
    *,
    evidence_window: Mapping[str, Any] | None = None,
    runbook: Mapping[str, Any] | None = None,
) -> None:
    """Store the pass's evidence window and/or runbook (JSON)."""
    if evidence_window is not None:
        conn.execute(
            "UPDATE dreaming_passes SET evidence_window_json = :v, updated_at = :now"
            " WHERE id = :id",
            {"v": json.dumps(evidence_window), "now": utc_now(), "id": pass_id},
        )
    if runbook is not None:
        conn.execute(
            "UPDATE dreaming_passes SET runbook_json = :v, updated_at = :now WHERE id = :id",
            {"v": json.dumps(runbook), "now": utc_now(), "id": pass_id},
        )


def set_model(conn: Connection, pass_id: str, model: str) -> None:
    """The model the pass really ran (a harness reports it once it starts)."""
    conn.execute(
        "UPDATE dreaming_passes SET model = :model, updated_at = :now WHERE id = :id",
        {"model": model, "now": utc_now(), "id": pass_id},
    )


def add_usage(conn: Connection, pass_id: str, usage: PassUsage) -> None:
    """Add one provider call's usage to the running pass (recorded as each call returns)."""
    conn.execute(
        "UPDATE dreaming_passes SET tokens_input = tokens_input + :i,"
        " tokens_output = tokens_output + :o, tokens_cache_read = tokens_cache_read + :cr,"
        " tokens_cache_write = tokens_cache_write + :cw,"
        " tokens_consumed = tokens_consumed + :i + :o,"
        " cost_usd = CASE WHEN :cost IS NULL THEN cost_usd ELSE COALESCE(cost_usd, 0) + :cost END,"
        " updated_at = :now WHERE id = :id",
        {
            "i": usage.input_tokens,
            "o": usage.output_tokens,
            "cr": usage.cache_read,
            "cw": usage.cache_write,
            "cost": usage.cost_usd,
            "now": utc_now(),
            "id": pass_id,
        },
    )


def add_mutations(conn: Connection, pass_id: str, counts: MutationCounts) -> None:
    """Add an apply report's counts (in the transaction that follows the apply)."""
    conn.execute(
        "UPDATE dreaming_passes SET mutations_applied = mutations_applied + :applied,"
        " mutations_skipped = mutations_skipped + :skipped,"
        " mutations_failed = mutations_failed + :failed, updated_at = :now WHERE id = :id",
        _counts(counts, pass_id),
    )


def finish_pass(
    conn: Connection,
    pass_id: str,
    *,
    status: PassStatus,
    summary: str | None = None,
    error: str | None = None,
    now: str | None = None,
) -> bool:
    """End a running pass; False when it was not running (already finished)."""
    if status == "running":
        raise ValueError("finish_pass needs a terminal status")
    now = now or utc_now()
    cur = conn.execute(
        "UPDATE dreaming_passes SET status = :status, summary = :summary, error = :error,"
        " completed_at = :now, updated_at = :now WHERE id = :id AND status = 'running'",
        {"status": status, "summary": summary, "error": error, "now": now, "id": pass_id},
    )
    return cur.rowcount == 1


def interrupt_running(
    conn: Connection, error: str, now: str | None = None, *, agent_id: str | None = None
) -> list[DreamingPass]:
    """Mark every running pass (of one agent, or of all) failed with `error` (start-up: the
    daemon was killed). On PostgreSQL call it only while holding the agent's pass lock
    (`take_pass_lock`): a running pass whose lock another daemon holds is alive."""
    rows = conn.execute(
        "SELECT * FROM dreaming_passes WHERE status = 'running' AND (:a IS NULL OR agent_id = :a)",
        {"a": agent_id},
    ).fetchall()
    for row in rows:
        finish_pass(conn, row["id"], status="failed", error=error, now=now)
    return [_pass(row) for row in rows]


def get_pass(conn: Connection, agent_id: str, pass_id: str) -> DreamingPass | None:
    return PASSES.one(conn, "id = :id AND agent_id = :a", {"id": pass_id, "a": agent_id})


def list_passes(
    conn: Connection, agent_id: str, *, status: PassStatus | None = None, limit: int = 50
) -> list[DreamingPass]:
    """Newest first."""
    tie = "id" if is_postgres(conn) else "rowid"  # PostgreSQL has no rowid
    return PASSES.all(
        conn,
        f"agent_id = :a AND (:s IS NULL OR status = :s) ORDER BY started_at DESC, {tie} DESC"
        " LIMIT :n",
        {"a": agent_id, "s": status, "n": limit},
    )


def agents_with_passes(conn: Connection) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT DISTINCT agent_id FROM dreaming_passes")]


# -- tool calls --------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > MAX_TOOL_JSON_CHARS:
        text = json.dumps({"truncated": True, "chars": len(text), "head": text[:4000]})
    return text


def record_tool_call(
    conn: Connection,
    *,
    agent_id: str,
    pass_id: str,
    tool_call_id: str | None,
    tool_name: str,
    input_value: Any,
    output_value: Any,
    status: ToolCallStatus,
    error: str | None,
    duration_ms: int,
) -> int:
    """Append one call to the pass's trace; returns its `seq` (0, 1, 2, ... per pass)."""
    seq = int(
        conn.execute(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM dreaming_tool_calls WHERE pass_id = :p",
            {"p": pass_id},
        ).fetchone()[0]
    )
    conn.execute(
        "INSERT INTO dreaming_tool_calls (id, agent_id, pass_id, seq, tool_call_id, tool_name,"
        " input_json, output_json, status, error, duration_ms, created_at)"
        " VALUES (:id, :agent, :pass, :seq, :call, :name, :input, :output, :status, :error,"
        " :ms, :now)",
        {
            "id": str(uuid.uuid4()),
            "agent": agent_id,
            "pass": pass_id,
            "seq": seq,
            "call": tool_call_id,
            "name": tool_name or "?",
            "input": _json_text(input_value),
            "output": None if output_value is None else _json_text(output_value),
            "status": status,
            "error": error,
            "ms": max(0, int(duration_ms)),
            "now": utc_now(),
        },
    )
    return seq


def tool_calls(conn: Connection, agent_id: str, pass_id: str) -> list[ToolCallRecord]:
    """The pass's trace in order."""
    rows = conn.execute(
        "SELECT * FROM dreaming_tool_calls WHERE pass_id = :p AND agent_id = :a ORDER BY seq",
        {"p": pass_id, "a": agent_id},
    ).fetchall()
    return [
        from_row(
            ToolCallRecord,
            row,
            seq=int(row["seq"]),
            input=_loads(row["input_json"]),
            output=_loads(row["output_json"]),
            duration_ms=int(row["duration_ms"]),
        )
        for row in rows
    ]


# -- exclusions --------------------------------------------------------------------------


def record_exclusions(
    conn: Connection,
    agent_id: str,
    pass_id: str,
    items: Sequence[tuple[str, str, str]],
    now: str | None = None,
) -> int:
    """Record (source_kind, source_id, reason) as excluded by this pass (one row per source)."""
    now = now or utc_now()
    for kind, source_id, reason in items:
        conn.execute(
            "INSERT INTO dreaming_evidence_exclusions (agent_id, source_kind, source_id, reason,"
            " status, attempts, pass_id, excluded_at, updated_at)"
            " VALUES (:agent, :kind, :source, :reason, 'excluded', 1, :pass, :now, :now)"
            " ON CONFLICT (agent_id, source_kind, source_id) DO UPDATE SET"
            " reason = excluded.reason, status = 'excluded',"
            " attempts = dreaming_evidence_exclusions.attempts + 1,"
            " pass_id = excluded.pass_id, resolved_at = NULL, updated_at = excluded.updated_at",
            {
                "agent": agent_id,
                "kind": kind,
                "source": source_id,
                "reason": reason,
                "pass": pass_id,
                "now": now,
            },
        )
    return len(items)


def exclusions_of_pass(conn: Connection, agent_id: str, pass_id: str) -> list[EvidenceExclusion]:
    rows = conn.execute(
        "SELECT * FROM dreaming_evidence_exclusions WHERE agent_id = :a AND pass_id = :p"
        " ORDER BY source_kind, source_id",
        {"a": agent_id, "p": pass_id},
    ).fetchall()
    return [from_row(EvidenceExclusion, row, attempts=int(row["attempts"])) for row in rows]


# -- state -------------------------------------------------------------------------------

_STATE_FIELDS = (
    "tokens_since_last_pass",
    "consecutive_failures",
    "evidence_cursor",
    "last_pass_at",
    "last_pass_id",
    "last_pass_mode",
    "last_failure_at",
    "last_error",
    "next_attempt_at",
)


def get_state(conn: Connection, agent_id: str) -> DreamingState:
    row = conn.execute(
        "SELECT * FROM dreaming_state WHERE agent_id = :a", {"a": agent_id}
    ).fetchone()
    if row is None:
        return DreamingState(agent_id)
    return DreamingState(agent_id, **{name: row[name] for name in _STATE_FIELDS})


def all_states(conn: Connection) -> list[DreamingState]:
    rows = conn.execute("SELECT agent_id FROM dreaming_state ORDER BY agent_id").fetchall()
    return [get_state(conn, str(row[0])) for row in rows]


def put_state(conn: Connection, state: DreamingState, now: str | None = None) -> None:
    """Insert or replace the agent's state row."""
    now = now or utc_now()
    values = {name: getattr(state, name) for name in _STATE_FIELDS}
    columns = ", ".join(_STATE_FIELDS)
    marks = ", ".join(f":{name}" for name in _STATE_FIELDS)
    updates = ", ".join(f"{name} = excluded.{name}" for name in _STATE_FIELDS)
    conn.execute(
        f"INSERT INTO dreaming_state (agent_id, {columns}, created_at, updated_at)"
        f" VALUES (:agent_id, {marks}, :now, :now)"
        f" ON CONFLICT (agent_id) DO UPDATE SET {updates}, updated_at = excluded.updated_at",
        {"agent_id": state.agent_id, "now": now, **values},
    )


def _counts(counts: MutationCounts, pass_id: str) -> dict[str, Any]:
    return {
        "applied": counts.applied,
        "skipped": counts.skipped,
        "failed": counts.failed,
        "now": utc_now(),
        "id": pass_id,
    }


def set_mutations(conn: Connection, pass_id: str, counts: MutationCounts) -> None:
    """Replace the pass's counts (from the seam's own per-operation records)."""
    conn.execute(
        "UPDATE dreaming_passes SET mutations_applied = :applied, mutations_skipped = :skipped,"
        " mutations_failed = :failed, updated_at = :now WHERE id = :id",
        _counts(counts, pass_id),
    )
