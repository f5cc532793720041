"""What the window shows, computed off the UI thread from the facade (no Qt here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.service.facade import ServiceStatus, SignetService


@dataclass(frozen=True, slots=True)
class StatusView:
    """The daemon facts the status labels display."""

    memory_count: int
    vector: str
    warming_up: tuple[str, ...]


def read_status(service: SignetService, agent_id: str = DEFAULT_AGENT_ID) -> StatusView:
    """Collect the status labels' facts (blocks: run it in a worker thread)."""
    status = service.status()
    return StatusView(
        memory_count=service.memories.count(agent_id),
        vector=describe_vector(status),
        warming_up=_warming_up(status.process.get("startup", {})),
    )


def describe_vector(status: ServiceStatus) -> str:
    """`sqlite-vec v0.1.9`, or why vectors are unavailable."""
    vector = status.vector
    if vector.available:
        return f"sqlite-vec {vector.version or ''}".strip()
    return f"unavailable ({vector.error or 'unknown reason'})"


def _warming_up(startup: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        sorted(
            name
            for name, task in startup.items()
            if isinstance(task, dict) and task.get("state") in ("pending", "running")
        )
    )
