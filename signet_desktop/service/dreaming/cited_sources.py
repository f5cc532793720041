"""The text a cited quote sits in (`service.cited_sources`), for the inspector's audit views.

Dreaming operations and ontology proposals cite evidence as `{quote, source_ref}`. The
Dreaming and Proposals panes show each quote highlighted in its source; this renders the
source exactly as the apply seam checked the quote against it (`dreaming/sources.py`), in one
agent's scope: another agent's source, an in-progress transcript or a blocked one renders as
None. Read-only.
"""

from __future__ import annotations

from pathlib import Path

from signet_desktop.domain import scope
from signet_desktop.dreaming.sources import MAX_REF_CHARS, SourceReader
from signet_desktop.storage.handle import DatabaseHandle


class CitedSources:
    """Canonical source text by `kind:id`, scoped to an agent."""

    def __init__(self, db: DatabaseHandle, workspace: Path | None = None) -> None:
        self._db = db
        self._workspace = workspace

    def source_text(self, agent_id: str, source_ref: str) -> str | None:
        """The rendered text of the source `source_ref` names (None: not usable evidence
        for this agent — missing, another agent's, in progress, or blocked)."""
        scope.check_agent_id(agent_id)
        if not isinstance(source_ref, str) or not source_ref or len(source_ref) > MAX_REF_CHARS:
            return None
        return SourceReader(self._db.reader(), agent_id, self._workspace).render(source_ref)

    def source_texts(self, agent_id: str, refs: list[str]) -> dict[str, str | None]:
        """`source_text` for several refs in one reader (the sources a proposal cites)."""
        scope.check_agent_id(agent_id)
        reader = SourceReader(self._db.reader(), agent_id, self._workspace)
        return {
            ref: reader.render(ref) if isinstance(ref, str) and len(ref) <= MAX_REF_CHARS else None
            for ref in refs
        }
