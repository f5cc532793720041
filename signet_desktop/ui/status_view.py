"""What the window shows, computed off the UI thread from the facade (no Qt here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.domain.recall import RecallHit, channel_label
from signet_desktop.service.facade import ServiceStatus, SignetService

_PREVIEW_CHARS = 160


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


def format_hit(hit: RecallHit) -> str:
    """One result line: score, type, tags and a one-line preview of the content."""
    memory = hit.memory
    text = " ".join(memory.content.split())
    if len(text) > _PREVIEW_CHARS:
        text = text[: _PREVIEW_CHARS - 1] + "…"
    tags = f" [{', '.join(memory.tags)}]" if memory.tags else ""
    return f"{hit.score:.2f}  {memory.type}{tags}  {text}"


def explain_hit(hit: RecallHit) -> str:
    """Why a hit ranked where it did: each channel's rank and score, and any context boost."""
    parts = [
        f"{channel_label(name)} #{evidence.rank} ({evidence.score:.2f})"
        for name, evidence in hit.channels.items()
    ]
    context = hit.context
    if context is not None and context.who:
        parts.append(f"names {hit.memory.who} +{context.who:.2f}")
    if context is not None and context.session:
        parts.append(f"session neighbour +{context.session:.2f}")
    return f"score {hit.score:.2f}: " + " · ".join(parts or ["no channel evidence"])
