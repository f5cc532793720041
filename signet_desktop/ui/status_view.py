"""What the status bar and the tray show, computed off the UI thread from the facade (no Qt here).

`read_status` blocks (the database, the pipeline): the shell runs it through its `TaskRunner`
when an event says something changed. The rest are pure functions of the `StatusView`, so the
wording and the tray state are unit-tested without a window.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.health import health_of


@dataclass(frozen=True, slots=True)
class WorkerFact:
    """One hosted worker as the status bar and the tray see it."""

    name: str
    state: str  # pending | running | paused | stopped | crashed
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StatusView:
    """The daemon facts the status bar and the tray display."""

    memory_count: int
    vector: str  # the vector index: `sqlite-vec v0.1.9`, or why it is unavailable
    warming_up: tuple[str, ...]
    embedder: str = "none"  # provider name; "none" runs lexical-only
    embedded: int = 0
    embeddable: int = 0  # live memories the embedder's generation should cover
    vector_search: str = "unavailable"  # complete | recent-window | unavailable
    workers: tuple[WorkerFact, ...] = ()
    paused: bool = False
    jobs_active: int = 0  # pending + leased
    jobs_dead: int = 0
    health: str = "healthy"  # healthy | degraded | unhealthy (service/health.py)
    database_ok: bool = True


@dataclass(frozen=True, slots=True)
class TrayState:
    """One of `ui/icon.py: TRAY_STATES` and the reason shown in the tooltip."""

    state: str
    reason: str


def read_status(service: SignetService, agent_id: str = DEFAULT_AGENT_ID) -> StatusView:
    """Collect the status facts (blocks: run it in a worker thread)."""
    status = service.status()
    database_ok = service.ping()
    pipeline = service.pipeline.status()
    coverage = status.embedding.coverage
    queue = pipeline.queues.get("memory", {})
    return StatusView(
        memory_count=service.memories.count(agent_id),
        vector=describe_vector(status),
        warming_up=_warming_up(status.process.get("startup", {})),
        embedder=status.embedding.provider,
        embedded=coverage.embedded if coverage is not None else 0,
        embeddable=coverage.total if coverage is not None else 0,
        vector_search=status.embedding.vector_search,
        workers=_workers(status.process.get("workers"), pipeline.workers),
        paused=pipeline.mode == "paused",
        jobs_active=queue.get("pending", 0) + queue.get("leased", 0),
        jobs_dead=queue.get("dead", 0),
        health=health_of(status, database_ok).status,
        database_ok=database_ok,
    )


def describe_vector(status: ServiceStatus) -> str:
    """`sqlite-vec v0.1.9`, or why vectors are unavailable."""
    vector = status.vector
    if vector.available:
        return f"sqlite-vec {vector.version or ''}".strip()
    return f"unavailable ({vector.error or 'unknown reason'})"


def daemon_state(view: StatusView) -> str:
    """`ready`, `warming up (embedder)`, `database unavailable`."""
    if not view.database_ok:
        return "database unavailable"
    if view.warming_up:
        return "warming up (" + ", ".join(view.warming_up) + ")"
    return "ready"


def memories_text(view: StatusView) -> str:
    noun = "memory" if view.memory_count == 1 else "memories"
    return f"{view.memory_count:,} {noun}"


def vectors_text(view: StatusView) -> str:
    """`vectors complete`, `vectors 72% (1,204 to go)`, `keyword only (no embedder)`."""
    if view.embedder == "none":
        return "keyword only (no embedder)"
    if view.vector_search == "unavailable":
        return "vector search unavailable"
    missing = max(view.embeddable - view.embedded, 0)
    if missing == 0:
        suffix = "" if view.vector_search == "complete" else f" ({view.vector_search})"
        return "vectors complete" + suffix
    percent = int(100 * view.embedded / view.embeddable) if view.embeddable else 0
    return f"vectors {percent}% ({missing:,} to go)"


def workers_text(view: StatusView) -> str:
    """`2 workers idle`, `1 worker running`, `workers paused`, `1 of 2 workers crashed`."""
    total = len(view.workers)
    if total == 0:
        return "no workers"
    crashed = [w for w in view.workers if w.state == "crashed"]
    if crashed:
        return f"{len(crashed)} of {total} workers crashed"
    if view.paused:
        return "workers paused"
    noun = "worker" if total == 1 else "workers"
    if view.jobs_active:
        return f"{total} {noun} working ({view.jobs_active:,} queued)"
    running = sum(w.state == "running" for w in view.workers)
    if running == total:
        return f"{total} {noun} idle"
    return f"{total} {noun} " + ", ".join(sorted({w.state for w in view.workers}))


def tray_state(view: StatusView) -> TrayState:
    """What the tray icon shows: the worst fact wins (error > paused > degraded > working)."""
    if not view.database_ok:
        return TrayState("error", "the database does not answer")
    crashed = [w for w in view.workers if w.state == "crashed"]
    if crashed:
        first = crashed[0]
        detail = f": {first.error}" if first.error else ""
        return TrayState("error", f"worker {first.name} crashed{detail}")
    if view.paused:
        return TrayState("paused", "workers paused")
    if view.health != "healthy":
        return TrayState("degraded", f"{view.health}: {vectors_text(view)}")
    if view.jobs_dead:
        return TrayState("degraded", f"{view.jobs_dead:,} dead jobs in the queue")
    if view.warming_up:
        return TrayState("working", daemon_state(view))
    if view.embedder != "none" and view.embedded < view.embeddable:
        return TrayState("working", vectors_text(view))
    if view.jobs_active:
        return TrayState("working", f"{view.jobs_active:,} jobs queued")
    return TrayState("healthy", f"ready · {memories_text(view)} · {vectors_text(view)}")


def ago(seconds: float) -> str:
    """`just now`, `3 s ago`, `4 min ago`, `2 h ago`."""
    if seconds < 1:
        return "just now"
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{int(seconds // 3600)} h ago"


def _workers(facts: Any, declared: Any) -> tuple[WorkerFact, ...]:
    """The status board's worker facts (from `worker.state` events), else the pipeline's."""
    if isinstance(facts, Mapping) and facts:
        return tuple(
            WorkerFact(str(name), str(fact.get("state", "pending")), fact.get("error"))
            for name, fact in sorted(facts.items())
            if isinstance(fact, Mapping)
        )
    return tuple(WorkerFact(w.name, w.state, w.error) for w in declared)


def _warming_up(startup: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        sorted(
            name
            for name, task in startup.items()
            if isinstance(task, dict) and task.get("state") in ("pending", "running")
        )
    )
