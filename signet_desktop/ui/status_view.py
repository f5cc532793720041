"""What the status bar and the tray show, computed off the UI thread from the facade (no Qt here).

`read_status` blocks (the database, the pipeline): the shell runs it through its `TaskRunner`
when an event says something changed. The rest are pure functions of the `StatusView`, so the
wording and the tray state are unit-tested without a window.
"""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.verdict import StateFacts, Verdict, WorkerFact, judge, read_facts

__all__ = ["StatusView", "TrayState", "WorkerFact", "read_status", "tray_state"]


@dataclass(frozen=True, slots=True)
class StatusView:
    """The daemon facts the status bar and the tray display, and the one verdict on them."""

    memory_count: int
    vector: str  # the vector index: `sqlite-vec v0.1.9`, or why it is unavailable
    facts: StateFacts

    @property
    def verdict(self) -> Verdict:
        """`service/verdict.py: judge` over these facts: what every surface says."""
        return judge(self.facts)


@dataclass(frozen=True, slots=True)
class TrayState:
    """One of `ui/icon.py: TRAY_STATES` and the reason shown in the tooltip."""

    state: str
    reason: str


def read_status(service: SignetService, agent_id: str = DEFAULT_AGENT_ID) -> StatusView:
    """Collect the status facts (blocks: run it in a worker thread)."""
    return StatusView(
        memory_count=service.memories.count(agent_id),
        vector=describe_vector(service.status()),
        facts=read_facts(service, agent_id),
    )


def describe_vector(status: ServiceStatus) -> str:
    """`sqlite-vec v0.1.9`, or why vectors are unavailable."""
    vector = status.vector
    if vector.available:
        return f"sqlite-vec {vector.version or ''}".strip()
    return f"unavailable ({vector.error or 'unknown reason'})"


def memories_text(view: StatusView) -> str:
    noun = "memory" if view.memory_count == 1 else "memories"
    return f"{view.memory_count:,} {noun}"


def workers_text(view: StatusView) -> str:
    """`2 workers idle`, `1 worker running`, `workers paused`, `1 of 2 workers crashed`."""
    facts = view.facts
    total = len(facts.workers)
    if total == 0:
        return "no workers"
    crashed = [w for w in facts.workers if w.state == "crashed"]
    if crashed:
        return f"{len(crashed)} of {total} workers crashed"
    if facts.paused:
        return "workers paused"
    noun = "worker" if total == 1 else "workers"
    if facts.jobs_active:
        return f"{total} {noun} working ({facts.jobs_active:,} queued)"
    running = sum(w.state == "running" for w in facts.workers)
    if running == total:
        return f"{total} {noun} idle"
    return f"{total} {noun} " + ", ".join(sorted({w.state for w in facts.workers}))


def summary_text(view: StatusView) -> str:
    """`Ready · 12,431 memories · 1 failed item`: the verdict in words, as the bar leads."""
    verdict = view.verdict
    parts = [verdict.headline, memories_text(view)]
    if verdict.failed:
        parts.append(verdict.failed_text)
    return " · ".join(parts)


def tray_state(view: StatusView) -> TrayState:
    """What the tray icon shows: the verdict's state, its summary in the tooltip."""
    return TrayState(view.verdict.state, summary_text(view))


def ago(seconds: float) -> str:
    """`just now`, `3 s ago`, `4 min ago`, `2 h ago`."""
    if seconds < 1:
        return "just now"
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{int(seconds // 3600)} h ago"
