"""The backend of `signet-mcp`: the daemon's HTTP routes, through `client/daemon.py`.

The daemon validates and scopes every call (the agent comes from the client's
`x-signet-agent-id` header, never from tool arguments), so refusals carry its messages and
codes unchanged. A daemon that is down or slow is a tool error naming the address and how
to start it; the stdio server stays up and the next call tries again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

import anyio.to_thread

from signet_desktop.api.mcp.backend import Body, ToolFailure
from signet_desktop.client.daemon import DaemonClient, DaemonResponseError, DaemonUnreachable


def encode(answer: Any) -> str:
    """JSON text as the daemon's `/mcp` encodes it (compact, UTF-8, no NaN)."""
    return json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _memory_path(memory_id: str) -> str:
    return f"/api/memory/{quote(memory_id, safe='')}"


def _session_path(session_key: str) -> str:
    return f"/api/sessions/{quote(session_key, safe='')}"


class DaemonBackend:
    """The memory routes over HTTP; the blocking client runs in a worker thread."""

    def __init__(self, client: DaemonClient) -> None:
        self.client = client

    async def _call(self, request: Callable[[], Any]) -> str:
        try:
            answer = await anyio.to_thread.run_sync(request)
        except DaemonUnreachable as exc:
            code = "daemon_timeout" if exc.timed_out else "daemon_unreachable"
            raise ToolFailure(exc.user_message(), code) from None
        except DaemonResponseError as exc:
            raise ToolFailure(exc.message, exc.code or f"http_{exc.status}") from None
        return encode(answer)

    async def search(self, body: Body) -> str:
        return await self._call(lambda: self.client.post("/api/memory/recall", body))

    async def store(self, body: Body) -> str:
        return await self._call(lambda: self.client.post("/api/memory/remember", body))

    async def get(self, memory_id: str) -> str:
        return await self._call(lambda: self.client.get(_memory_path(memory_id)))

    async def list(self, params: Body) -> str:
        query: Mapping[str, Any] = dict(params)
        return await self._call(lambda: self.client.get("/api/memories", query))

    async def modify(self, memory_id: str, body: Body) -> str:
        path = _memory_path(memory_id)
        return await self._call(lambda: self.client.request("PATCH", path, body=body))

    async def forget(self, memory_id: str, body: Body) -> str:
        return await self._call(lambda: self.client.delete(_memory_path(memory_id), body))

    async def feedback(self, body: Body) -> str:
        return await self._call(lambda: self.client.post("/api/memory/feedback", body))

    async def session_search(self, body: Body) -> str:
        return await self._call(lambda: self.client.post("/api/sessions/search", body))

    async def session_bypass(self, session_key: str, body: Body) -> str:
        path = f"{_session_path(session_key)}/bypass"
        return await self._call(lambda: self.client.post(path, body))

    async def secret_names(self) -> str:
        return await self._call(lambda: self.client.get("/api/secrets"))

    async def sessions(self, params: Body) -> str:
        query: Mapping[str, Any] = dict(params)
        return await self._call(lambda: self.client.get("/api/sessions", query))

    async def session_transcript(self, session_key: str) -> str:
        path = f"{_session_path(session_key)}/transcript"
        return await self._call(lambda: self.client.get(path))

    async def knowledge_entities(self, params: Body) -> str:
        query: Mapping[str, Any] = dict(params)
        return await self._call(lambda: self.client.get("/api/knowledge/entities", query))

    async def knowledge_entity(self, entity_id: str, params: Body) -> str:
        path = f"/api/knowledge/entities/{quote(entity_id, safe='')}"
        query: Mapping[str, Any] = dict(params)
        return await self._call(lambda: self.client.get(path, query))

    async def knowledge_expand(self, body: Body) -> str:
        return await self._call(lambda: self.client.post("/api/knowledge/expand", body))
