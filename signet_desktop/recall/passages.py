"""A memory's passage: the live memories around it in its session, ring by ring.

The rerank stage judges a hit with the turns around it (`recall/rerank.py`). Ring 1 is the
previous and next live memory of the same session (what the context stage calls its
neighbours); ring d is the memory d steps away on each side, found by walking on from ring
d - 1 (the previous memory's previous, the next memory's next). One `candidate_context`
query per ring, so every read keeps its agent scope and skips deleted memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.recall_context import candidate_context


@dataclass(frozen=True, slots=True)
class Window:
    """A memory and its session's live memories by distance: rings[0] is 1 step away."""

    memory_id: str
    rings: tuple[tuple[str, ...], ...] = ()

    @property
    def near(self) -> tuple[str, ...]:
        """The adjacent memories (ring 1), previous first."""
        return self.rings[0] if self.rings else ()

    @property
    def outer(self) -> tuple[str, ...]:
        """The memories two or more steps away."""
        return tuple(memory_id for ring in self.rings[1:] for memory_id in ring)

    @property
    def ids(self) -> tuple[str, ...]:
        """Every memory of the window, itself first."""
        return (self.memory_id, *(memory_id for ring in self.rings for memory_id in ring))


def session_windows(
    conn: Connection, agent_id: str, ids: Sequence[str], width: int
) -> dict[str, Window]:
    """Each of `ids`' window of `width` steps each side (one query per step; none for 0).

    A memory without a session, deleted, or outside the agent's scope has an empty window.
    """
    ends: dict[str, tuple[str | None, str | None]] = {i: (i, i) for i in ids}  # walked to
    rings: dict[str, list[tuple[str, ...]]] = {memory_id: [] for memory_id in ids}
    for _ in range(width):
        frontier = list(dict.fromkeys(i for pair in ends.values() for i in pair if i))
        if not frontier:
            break
        facts = candidate_context(conn, agent_id, frontier)
        for memory_id, (before, after) in ends.items():
            previous = facts[before].previous_id if before in facts else None
            following = facts[after].next_id if after in facts else None
            ends[memory_id] = (previous, following)
            rings[memory_id].append(tuple(i for i in (previous, following) if i))
    return {
        memory_id: Window(memory_id, tuple(ring for ring in found if ring))
        for memory_id, found in rings.items()
    }
