"""A memory's passage: the live memories around it in its session, ring by ring.

The rerank stage judges a hit with the turns around it (`recall/rerank.py`). Ring 1 is the
previous and next live memory of the same session in seq order (what the context stage calls
its neighbours); ring d is the live memory d steps away on each side. One query for every
ring (`storage.recall_context.session_rings`), in the agent's scope, deleted memories skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from signet_desktop.storage.connect import Connection
from signet_desktop.storage.recall_context import session_rings


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
    """Each of `ids`' window of `width` steps each side (one query; none for width 0).

    A memory without a session, deleted, or outside the agent's scope has an empty window.
    """
    rings = session_rings(conn, agent_id, ids, width)
    return {memory_id: Window(memory_id, rings.get(memory_id, ())) for memory_id in ids}
