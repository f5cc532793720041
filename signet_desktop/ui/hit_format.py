"""How a recall hit reads in the inspector: a one-line summary and why it ranked (no Qt here)."""

from __future__ import annotations

from signet_desktop.domain.recall import RecallHit, channel_label

_PREVIEW_CHARS = 160


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
