"""maintenance_runs: one row per retention/maintenance run (migrations/0009)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from signet_desktop.domain.maintenance import MaintenanceRun
from signet_desktop.domain.memory import utc_now
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.rows import from_row

MAX_STEPS_JSON = 16_384
RUN_COLUMNS = "id, trigger, status, started_at, finished_at, steps_json, error"

INSERT_RUN = """
INSERT INTO maintenance_runs (id, trigger, status, started_at)
VALUES (:id, :trigger, 'running', :now)
"""
FINISH_RUN = """
UPDATE maintenance_runs SET status = :status, finished_at = :now, steps_json = :steps,
    error = :error
WHERE id = :id AND status = 'running'
"""
INTERRUPT_RUNNING = """
UPDATE maintenance_runs SET status = 'interrupted', finished_at = :now
WHERE status = 'running'
"""
RECENT_RUNS = f"SELECT {RUN_COLUMNS} FROM maintenance_runs ORDER BY started_at DESC, id LIMIT :n"
PRUNE_RUNS = """
DELETE FROM maintenance_runs WHERE id NOT IN (
    SELECT id FROM maintenance_runs ORDER BY started_at DESC LIMIT :keep)
"""


def _run(row: Any) -> MaintenanceRun:
    return from_row(MaintenanceRun, row, steps=json.loads(row["steps_json"] or "{}"))


def start_run(conn: Connection, run_id: str, *, trigger: str) -> None:
    """Record a run as running."""
    conn.execute(INSERT_RUN, {"id": run_id, "trigger": trigger, "now": utc_now()})


def finish_run(
    conn: Connection,
    run_id: str,
    *,
    status: str,
    steps: Mapping[str, Mapping[str, Any]],
    error: str | None = None,
) -> None:
    """Record how a run ended; the step counters are kept under 16 KB."""
    text = json.dumps(steps, sort_keys=True)
    if len(text) > MAX_STEPS_JSON:
        text = json.dumps({"truncated": True})
    conn.execute(
        FINISH_RUN,
        {"id": run_id, "status": status, "now": utc_now(), "steps": text, "error": error},
    )


def interrupt_running(conn: Connection) -> int:
    """Runs a killed process left running become `interrupted` (at start-up)."""
    return int(conn.execute(INTERRUPT_RUNNING, {"now": utc_now()}).rowcount)


def recent_runs(conn: Connection, limit: int) -> list[MaintenanceRun]:
    """The newest runs first."""
    return [_run(r) for r in conn.execute(RECENT_RUNS, {"n": limit}).fetchall()]


def prune_runs(conn: Connection, keep: int) -> int:
    """Keep only the newest `keep` run records."""
    return int(conn.execute(PRUNE_RUNS, {"keep": keep}).rowcount)
