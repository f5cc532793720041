"""Modify: one memory's patch or a batch of them, content and type included (as in Signet).

A patch needs a reason and honours `if_version`. Every field may change; a content change
keeps the old text in the history event, re-derives what the old text gave
(service/memories/content_edits.py: vectors, hints, mention links, review attention for derived
rows whose quotes are gone) in the same transaction, and the new vector follows the write:
through the vector batcher (the daemon), or embedded before the transaction and attached in
it (inline vectors) — never a provider call inside the transaction. A content equal to
another live memory of the scope is refused (409 `duplicate_content_hash`), as a deleted
memory is (409 `deleted`; recover it first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from signet_desktop.domain import scope
from signet_desktop.domain.errors import Conflict, NotFound
from signet_desktop.domain.events import EventSink, MemoryUpdated
from signet_desktop.domain.memory import (
    Actor,
    BatchPatch,
    ItemOutcome,
    Memory,
    MemoryChange,
    MemoryPatch,
)
from signet_desktop.service.embeddings.batches import VectorFollow
from signet_desktop.service.memories import rules
from signet_desktop.service.memories.content_edits import apply_content_edit
from signet_desktop.service.ports import MemoryVectors
from signet_desktop.storage import history, memories
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.handle import DatabaseHandle

VECTOR_STORED, VECTOR_PENDING, VECTOR_QUEUED, VECTOR_NONE = "stored", "pending", "queued", "none"


class MemoryEditor:
    """Applies patches to an agent's live memories (MemoryService.modify delegates here)."""

    def __init__(
        self,
        db: DatabaseHandle,
        vectors: MemoryVectors | None,
        follow: VectorFollow | None,
        events: EventSink,
    ) -> None:
        self._db = db
        self._vectors = vectors
        self._follow = follow
        self._events = events

    def modify(
        self,
        agent_id: str,
        memory_id: str,
        patch: MemoryPatch,
        *,
        reason: str,
        if_version: int | None,
        actor: Actor,
    ) -> MemoryChange:
        """Change any of content, type, tags, importance, pinned (nothing to change: no
        write, `changed` empty)."""
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        reason = rules.require_reason(reason)
        fields = rules.patch_fields(patch)
        prepared = self._prepare(agent_id, [(memory_id, fields)])
        with self._db.write() as conn:
            change = self._modify_in(
                conn, agent_id, memory_id, fields, reason, if_version, actor, prepared
            )
        self._after_commit((change,))
        return change

    def modify_batch(
        self, agent_id: str, patches: Sequence[BatchPatch], *, reason: str | None, actor: Actor
    ) -> tuple[ItemOutcome, ...]:
        """Apply up to MAX_BATCH patches in one transaction (Signet's POST /api/memory/modify).

        Every patch is validated before anything is written: one bad patch (no reason, an
        empty or invalid patch, a repeated id) refuses the whole batch. A memory's state
        (missing, another agent's, deleted, a version conflict, a duplicate content) only
        fails its own item, which reports Signet's status; the others apply.
        """
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        prepared_patches = rules.prepare_patches(patches, reason)
        prepared = self._prepare(agent_id, [(p.id, fields) for p, fields, _ in prepared_patches])
        outcomes: list[ItemOutcome] = []
        changes: list[MemoryChange] = []
        with self._db.write() as conn:
            for item, fields, item_reason in prepared_patches:
                try:
                    change = self._modify_in(
                        conn,
                        agent_id,
                        item.id,
                        fields,
                        item_reason,
                        item.if_version,
                        actor,
                        prepared,
                    )
                except (NotFound, Conflict) as refused:
                    outcomes.append(refused_item(item.id, refused))
                    continue
                outcomes.append(item_outcome(change))
                changes.append(change)
        self._after_commit(changes)
        return tuple(outcomes)

    def _prepare(
        self, agent_id: str, targets: Iterable[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, object | None]:
        """Inline vectors only: embed each new content before the write transaction."""
        if self._vectors is None or self._follow is not None:
            return {}
        conn = self._db.reader()
        prepared: dict[str, object | None] = {}
        for memory_id, fields in targets:
            content = fields.get("content")
            current = memories.get_memory(conn, agent_id, memory_id)
            if content is not None and current is not None and current.content != content:
                prepared[memory_id] = self._vectors.prepare(content)
        return prepared

    def _modify_in(
        self,
        conn: Connection,
        agent_id: str,
        memory_id: str,
        fields: Mapping[str, Any],
        reason: str,
        if_version: int | None,
        actor: Actor,
        prepared: Mapping[str, object | None],
    ) -> MemoryChange:
        memory = require_live(conn, agent_id, memory_id)
        rules.check_version(memory, if_version)
        changed = {k: v for k, v in fields.items() if getattr(memory, k) != v}
        if not changed:
            return MemoryChange(memory, memory.version)
        if "content" in changed:
            check_no_clash(conn, memory, changed["content"])
        memories.update_memory_fields(conn, memory, changed, actor=actor.changed_by)
        updated = require_live(conn, agent_id, memory_id)
        metadata: dict[str, Any] = {
            "changed": sorted(changed),
            "before": rules.before(memory, {k: v for k, v in changed.items() if k != "content"}),
            "contentChanged": "content" in changed,
            "ifVersion": if_version,
        }
        vector: str | None = None
        flagged: tuple[str, ...] = ()
        if "content" in changed:
            effects = apply_content_edit(conn, memory, updated)
            metadata.update(effects.as_metadata())
            vector, flagged = self._vector_in(conn, updated, prepared), effects.flagged
            updated = require_live(conn, agent_id, memory_id)
        history.record_event(
            conn,
            memory_id=memory_id,
            agent_id=agent_id,
            event="modified",
            actor=actor,
            reason=reason,
            old_content=memory.content,
            new_content=updated.content,
            metadata=metadata,
        )
        return MemoryChange(updated, memory.version, tuple(sorted(changed)), vector, flagged)

    def _vector_in(
        self, conn: Connection, memory: Memory, prepared: Mapping[str, object | None]
    ) -> str:
        """The new text's vector inside the transaction: attached (inline), or to follow."""
        if self._vectors is None:
            return VECTOR_NONE
        if self._follow is not None:
            return VECTOR_PENDING
        stored = self._vectors.attach(conn, memory, prepared.get(memory.id))
        return VECTOR_STORED if stored else VECTOR_QUEUED

    def _after_commit(self, changes: Sequence[MemoryChange]) -> None:
        """Events for what changed; new content handed to the vector batcher."""
        for change in changes:
            if change.changed:
                self._events.publish(
                    MemoryUpdated(
                        agent_id=change.memory.agent_id,
                        memory_id=change.memory.id,
                        version=change.new_version,
                        changed=change.changed,
                    )
                )
        edited = [c.memory for c in changes if c.vector == VECTOR_PENDING]
        if self._follow is not None and edited:
            self._follow.follow(edited)


def require_live(conn: Connection, agent_id: str, memory_id: str) -> Memory:
    """The agent's memory; NotFound (with its id) when missing or another agent's, Conflict
    `deleted` when it is this agent's and soft-deleted (Signet's 409 `status: deleted`)."""
    memory = memories.get_memory(conn, agent_id, memory_id)
    if memory is None:
        raise NotFound(f"memory {memory_id} not found", details={"id": memory_id})
    if memory.is_deleted:
        raise Conflict(
            f"memory {memory_id} is deleted; recover it before changing it",
            code="deleted",
            details=rules.state(memory),
        )
    return memory


def check_no_clash(conn: Connection, memory: Memory, content: str) -> None:
    """Conflict `duplicate_content_hash` when another live memory of the scope holds it."""
    clash = memories.find_content_clash(conn, memory, content)
    if clash is not None:
        raise Conflict(
            f"memory {clash.id} already holds this content in the same scope",
            code="duplicate_content_hash",
            details={**rules.state(memory), "duplicate_memory_id": clash.id},
        )


def item_outcome(change: MemoryChange) -> ItemOutcome:
    """A batch item that applied (`updated`) or had nothing to change (`no_changes`)."""
    status = "updated" if change.changed else "no_changes"
    return ItemOutcome(
        change.memory.id,
        status,
        change.previous_version,
        change.new_version,
        change.changed,
        vector=change.vector,
    )


def refused_item(memory_id: str, refused: NotFound | Conflict) -> ItemOutcome:
    """A batch item its memory's state refused, under Signet's status name."""
    current = refused.details.get("current_version")
    duplicate = refused.details.get("duplicate_memory_id")
    return ItemOutcome(
        memory_id, refused.code, current, error=refused.message, duplicate_of=duplicate
    )
