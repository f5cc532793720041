"""The unconsumed evidence's size per agent, read again only after the database changed.

`dreaming_evidence.pending_tokens` sums the length of every unconsumed memory, summary and
artifact: a pass over the agent's whole store (161 ms and every memory row at 100k memories).
Dreaming's status asks for it, and the Overview and Dreaming panes ask for the status every few
seconds while events arrive. SQLite's `PRAGMA data_version` changes on a connection when
another connection committed; read connections never commit, so an unchanged version on the
same connection means an unchanged answer. Kept per thread, like the read connections.
"""

from __future__ import annotations

import threading

from signet_desktop.storage import dreaming_evidence
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres


class PendingTokens:
    """`pending_tokens(conn, agent)` remembered per (thread, connection, data_version)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def read(self, conn: Connection, agent_id: str) -> tuple[int, int]:
        """(sources, estimated tokens) of the agent's unconsumed evidence (PostgreSQL has no
        data_version to tell an unchanged database: read each time)."""
        if is_postgres(conn):
            return dreaming_evidence.pending_tokens(conn, agent_id)
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        seen: dict[str, tuple[int, int, tuple[int, int]]] = getattr(self._local, "seen", {})
        self._local.seen = seen
        hit = seen.get(agent_id)
        if hit is not None and hit[:2] == (id(conn), version):
            return hit[2]
        value = dreaming_evidence.pending_tokens(conn, agent_id)
        seen[agent_id] = (id(conn), version, value)
        return value
