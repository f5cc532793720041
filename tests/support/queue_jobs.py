"""Queue rows in every state for tests of diagnostics, repair and the Queue pane.

Jobs are queued through `queue/jobs.py`; states a worker would reach later (dead, an expired
lease, an old Signet database's retired `extract` rows) are set on the row directly, which is
what an old database or a crashed daemon leaves behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from signet_desktop.queue import jobs
from signet_desktop.storage.database import Database


@dataclass(frozen=True, slots=True)
class QueueRows:
    """The ids of what `fill_queue` made."""

    pending: tuple[str, ...]
    leased_expired: tuple[str, ...]
    completed: tuple[str, ...]
    dead: tuple[str, ...]
    retired: tuple[str, ...]


def set_row(db: Database, job_id: str, **values: Any) -> None:
    assignments = ", ".join(f"{name} = :{name}" for name in values)
    with db.write() as conn:
        conn.execute(
            f"UPDATE memory_jobs SET {assignments} WHERE id = :id", {**values, "id": job_id}
        )


def add(db: Database, job_type: str, agent_id: str = "default", **kw: Any) -> str:
    with db.write() as conn:
        job, _ = jobs.enqueue(conn, job_type, agent_id=agent_id, **kw)
    return job.id


def all_rows(db: Database) -> dict[str, tuple[Any, ...]]:
    found = db.reader().execute("SELECT * FROM memory_jobs ORDER BY id").fetchall()
    return {str(r["id"]): tuple(r) for r in found}


def fill_queue(
    db: Database, agent_id: str = "default", *, now: datetime | None = None
) -> QueueRows:
    """2 pending, 1 expired lease, 2 completed, 2 dead (timeouts) and 3 retired extract rows."""
    moment = now or datetime.now(UTC)
    ago = jobs.iso(moment - timedelta(hours=2))
    pending = tuple(
        add(db, "document_ingest", agent_id, document_id=f"doc-{n}", payload={"n": n})
        for n in range(2)
    )
    leased = add(db, "embedding_backfill", agent_id, memory_id="m-leased")
    set_row(db, leased, status="leased", attempts=1, lease_token="gone", leased_at=ago,
            lease_expires_at=ago)  # fmt: skip
    completed = tuple(add(db, "embedding_backfill", agent_id, memory_id=f"m{n}") for n in range(2))
    for job_id in completed:
        set_row(db, job_id, status="completed", attempts=1, completed_at=ago, result='{"ok": 1}')
    dead = tuple(
        add(db, kind, agent_id, payload={"url": "https://example.invalid/design.pdf"})
        for kind in ("document_ingest", "embedding_backfill")
    )
    for job_id in dead:
        set_row(db, job_id, status="dead", attempts=3, error="timeout after 10 s",
                failed_at=ago, updated_at=ago)  # fmt: skip
    retired = tuple(add(db, "extract", agent_id, memory_id=f"old-{n}") for n in range(3))
    set_row(db, retired[0], status="dead", attempts=3, error="extraction model gone")
    set_row(db, retired[1], status="leased", attempts=1, lease_token="x", lease_expires_at=ago)
    return QueueRows(pending, (leased,), completed, dead, retired)
