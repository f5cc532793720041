"""The recall capability: one ranked search behind HTTP, MCP, hooks, the CLI and the inspector."""

from __future__ import annotations

from signet_desktop.domain import scope
from signet_desktop.domain.recall import RecallQuery, RecallResult
from signet_desktop.recall.engine import RecallEngine


class RecallService:
    """Scope-checked access to the recall engine."""

    def __init__(self, engine: RecallEngine) -> None:
        self._engine = engine

    def search(self, query: RecallQuery) -> RecallResult:
        """Rank the agent's live memories for `query` (InvalidInput on a bad query or agent)."""
        scope.check_agent_id(query.agent_id)
        return self._engine.recall(query)

    def close(self) -> None:
        """Stop the query-embedding threads."""
        self._engine.close()
