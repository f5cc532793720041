"""What a tool needs from the daemon, whichever transport carries it, and how it fails.

Two implementations: `facade_backend.py` calls the facade in-process (the daemon's `/mcp`),
`daemon_backend.py` calls the daemon's HTTP API (`signet-mcp` over stdio). Both take the
HTTP bodies of the matching routes and answer with the JSON text the route would send, so a
tool behaves the same on both transports, errors included. This module stays light: the stdio
server imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

Body = Mapping[str, Any]


class ToolFailure(Exception):
    """A refused or failed call: the message and code HTTP would answer with."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class MemoryBackend(Protocol):
    """The memory routes a tool calls; each answers the route's JSON as text.

    Bodies are the routes' own (`POST /api/memory/recall`, `POST /api/memory/remember`,
    `PATCH`/`DELETE /api/memory/{id}`, the query of `GET /api/memories`,
    `POST /api/memory/feedback`, `POST /api/sessions/search`, `POST
    /api/sessions/{key}/bypass`, `POST /api/knowledge/expand`) without any scope field: who
    is asking belongs to the backend (its connection), never to tool arguments. Raises
    ToolFailure for every refusal.
    """

    async def search(self, body: Body) -> str: ...

    async def store(self, body: Body) -> str: ...

    async def get(self, memory_id: str) -> str: ...

    async def list(self, params: Body) -> str: ...

    async def modify(self, memory_id: str, body: Body) -> str: ...

    async def forget(self, memory_id: str, body: Body) -> str: ...

    async def feedback(self, body: Body) -> str: ...

    async def session_search(self, body: Body) -> str: ...

    async def session_bypass(self, session_key: str, body: Body) -> str: ...

    # The secret names of `GET /api/secrets` (never a value).
    async def secret_names(self) -> str: ...

    # The resources: the query of `GET /api/sessions`, `GET /api/sessions/{key}/transcript`.
    async def sessions(self, params: Body) -> str: ...

    async def session_transcript(self, session_key: str) -> str: ...

    # The knowledge graph: the query of `GET /api/knowledge/entities` and of
    # `GET /api/knowledge/entities/{id}`.
    async def knowledge_entities(self, params: Body) -> str: ...

    async def knowledge_entity(self, entity_id: str, params: Body) -> str: ...

    async def knowledge_expand(self, body: Body) -> str: ...
