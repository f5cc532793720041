"""The MCP server in-process: the SDK's own client over memory streams, the real service behind.

The same `build_server` both transports serve, over the facade backend `/mcp` uses, for one
agent per client: fast tests of the server's protocol behaviour without a daemon process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from mcp.client.client import Client

from signet_desktop.api.mcp.facade_backend import Caller, FacadeBackend
from signet_desktop.api.mcp.server import build_server
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.facade import SignetService
from support.db import database_of


@contextmanager
def built_service(root: Path) -> Iterator[SignetService]:
    """The real service over a temp workspace (the hash embedder stands in for MiniLM)."""
    options = BuildOptions(embedder=HashEmbedder(64), inline_vectors=True)
    svc = build_service(WorkspacePaths.for_root(root), SignetConfig(), options)
    try:
        yield svc
    finally:
        svc.close()


@asynccontextmanager
async def mcp_client(service: SignetService, agent: str = "default") -> AsyncIterator[Client]:
    """An initialised SDK client to the server, every call scoped to `agent`."""
    backend = FacadeBackend(service, Caller(agent, "mcp", "agent"))
    server = build_server(lambda ctx: backend, version="test")
    async with Client(server) as client:
        yield client


def counts(service: SignetService) -> dict[str, int]:
    """Rows of the tables an MCP call may write: a refused call leaves them unchanged."""
    conn = database_of(service).reader()
    tables = ("memories", "memory_history", "memory_feedback", "hook_sessions")
    return {
        table: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]) for table in tables
    }
