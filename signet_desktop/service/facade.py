"""The service facade: one method per operation, shared by HTTP, MCP, CLI and the UI."""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.errors import Unavailable
from signet_desktop.domain.memory import Actor, HistoryEvent, Memory, MemoryPatch
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.recall.engine import RecallEngine
from signet_desktop.service.embeddings import EmbeddingOps
from signet_desktop.service.events import EventBus
from signet_desktop.service.memories import (
    MemoryPage,
    MemoryService,
    RememberOutcome,
    RememberRequest,
)
from signet_desktop.service.status import StatusBoard
from signet_desktop.storage.connect import sqlite_version
from signet_desktop.storage.database import Database


class SignetService:
    """Every operation the product offers, scoped by agent. Methods block: call off the loop."""

    def __init__(
        self,
        db: Database,
        memories: MemoryService,
        recall_engine: RecallEngine,
        status: StatusBoard | None = None,
        *,
        embeddings: EmbeddingOps | None = None,
        events: EventBus | None = None,
    ) -> None:
        self.db = db
        self._memories = memories
        self._recall = recall_engine
        self.events = events or EventBus()
        self.status_board = status or StatusBoard(self.events)
        self.embeddings = embeddings

    def close(self) -> None:
        """Stop the recall and remember thread pools and close the database (idempotent)."""
        self._recall.close()
        if self.embeddings is not None:
            parts = self.embeddings.parts
            if parts.vectors is not None:
                parts.vectors.close()
            closer = getattr(parts.embedder, "close", None)
            if callable(closer):
                closer()
        self.db.close()

    def remember(self, request: RememberRequest, actor: Actor) -> RememberOutcome:
        return self._memories.remember(request, actor)

    def get_memory(self, agent_id: str, memory_id: str) -> Memory:
        return self._memories.get(agent_id, memory_id)

    def list_memories(self, agent_id: str, limit: int = 100, offset: int = 0) -> MemoryPage:
        return self._memories.list_page(agent_id, limit, offset)

    def count_memories(self, agent_id: str) -> int:
        return self._memories.count(agent_id)

    def modify_memory(
        self,
        agent_id: str,
        memory_id: str,
        patch: MemoryPatch,
        *,
        reason: str,
        if_version: int | None,
        actor: Actor,
    ) -> Memory:
        return self._memories.modify(
            agent_id, memory_id, patch, reason=reason, if_version=if_version, actor=actor
        )

    def forget_memory(
        self,
        agent_id: str,
        memory_id: str,
        *,
        reason: str,
        force: bool = False,
        if_version: int | None = None,
        actor: Actor,
    ) -> Memory:
        return self._memories.forget(
            agent_id, memory_id, reason=reason, force=force, if_version=if_version, actor=actor
        )

    def recover_memory(
        self,
        agent_id: str,
        memory_id: str,
        *,
        reason: str = "",
        if_version: int | None = None,
        actor: Actor,
    ) -> Memory:
        return self._memories.recover(
            agent_id, memory_id, reason=reason, if_version=if_version, actor=actor
        )

    def memory_history(self, agent_id: str, memory_id: str, limit: int = 200) -> list[HistoryEvent]:
        return self._memories.history(agent_id, memory_id, limit)

    def recall(self, query: RecallQuery) -> RecallResult:
        return self._recall.recall(query)

    def embedding_status(self) -> dict[str, Any]:
        """`signet embed audit`: generations, coverage, mirror health, queued backfills."""
        return self._require_embeddings().audit()

    def embedding_backfill(self, *, limit: int = 500, dry_run: bool = False) -> dict[str, Any]:
        """`signet embed backfill`: embed up to `limit` missing vectors now."""
        return self._require_embeddings().backfill(limit=limit, dry_run=dry_run)

    def resync_vec(
        self, *, generation: int | None = None, full: bool = False, dry_run: bool = False
    ) -> dict[str, Any]:
        """`signet repair resync-vec`: rebuild the vec0 mirror from canonical vectors."""
        return self._require_embeddings().resync(generation=generation, full=full, dry_run=dry_run)

    def _require_embeddings(self) -> EmbeddingOps:
        if self.embeddings is None:
            raise Unavailable("the vector index is not wired in this build", code="no_vectors")
        return self.embeddings

    def status(self) -> dict[str, Any]:
        """Database, vector and worker facts for /api/status and `signet doctor`."""
        return {
            "database": {
                "path": str(self.db.path),
                "sqliteVersion": sqlite_version(),
                "migrations": self._migration_count(),
            },
            "vector": {
                "available": self.db.vec.available,
                "version": self.db.vec.version,
                "error": self.db.vec.error,
            },
            "embedding": self.embeddings.status_json() if self.embeddings else None,
            **self.status_board.snapshot(),
        }

    def _migration_count(self) -> int:
        row = self.db.reader().execute("SELECT COUNT(*) FROM schema_migrations").fetchone()
        return int(row[0])
