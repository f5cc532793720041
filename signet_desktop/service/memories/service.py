"""Memory lifecycle: remember, get, list, modify, forget, recover and history."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from signet_desktop.domain import remember as checks
from signet_desktop.domain import scope
from signet_desktop.domain.browse import BrowseQuery
from signet_desktop.domain.entities import Mention
from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.events import (
    DiscardEvents,
    EventSink,
    MemoryCreated,
    MemoryDeleted,
    MemoryRecovered,
)
from signet_desktop.domain.knowledge import KnowledgeChanged, StructuredOutcome, StructuredPayload
from signet_desktop.domain.memory import (
    DEFAULT_AGENT_ID,
    RECOVERY_WINDOW_DAYS,
    Actor,
    BatchPatch,
    ForgetBatchOutcome,
    ForgetPreview,
    HistoryEvent,
    ItemOutcome,
    Memory,
    MemoryChange,
    MemoryPatch,
    MemorySelector,
    NewMemory,
)
from signet_desktop.service.embeddings.batches import VectorFollow
from signet_desktop.service.knowledge.mention_linking import link_mentions
from signet_desktop.service.memories import batches, rules
from signet_desktop.service.memories.edits import MemoryEditor
from signet_desktop.service.memories.structured import apply_structured
from signet_desktop.service.ports import MemoryVectors
from signet_desktop.storage import history, memories, mentions
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.memories import MemoryStats

MAX_HISTORY_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class RememberRequest:
    """A remember call as the edges hand it over (types already checked)."""

    content: str
    agent_id: str = DEFAULT_AGENT_ID
    type: str | None = None
    tags: tuple[str, ...] = ()
    importance: float | None = None
    pinned: bool | None = None
    who: str | None = None
    project: str | None = None
    scope: str | None = None
    visibility: str = "global"
    source_type: str | None = None
    source_id: str | None = None
    idempotency_key: str | None = None
    session_id: str | None = None
    created_at: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # Signet's `critical:` / `[tags]:` shorthand is for what a person or agent types; text
    # taken from a source (document chunks, imports) is stored as it is.
    parse_prefixes: bool = True
    # A validated `structured` block (domain/knowledge.py: parse_structured), applied in the
    # memory's own write transaction (service/memories/structured.py); not on a dedupe.
    structured: StructuredPayload | None = None


# What a remember did about the memory's vector (`vectorStatus` on the wire).
VECTOR_STORED = "stored"  # written with the memory
VECTOR_PENDING = "pending"  # the memory is committed; its vector follows from the batcher
VECTOR_QUEUED = "queued"  # the embedder failed: an embedding_backfill job will make it
VECTOR_NONE = "none"  # no embedder configured
VECTOR_EXISTING = "existing"  # deduped: the existing memory's vector is unchanged
BULK_CHUNK = 500  # memories per write transaction in remember_many


@dataclass(frozen=True, slots=True)
class RememberOutcome:
    """The stored (or already existing) memory, whether this call deduped, and its vector."""

    memory: Memory
    deduped: bool
    embedded: bool
    vector: str = VECTOR_NONE
    structured: StructuredOutcome | None = None  # set when a structured block was applied


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """One page of a listing plus the scope's counts."""

    memories: list[Memory]
    stats: MemoryStats


def build_new_memory(request: RememberRequest) -> NewMemory:
    """Validate and normalise a remember request, applying Signet's content prefixes."""
    content = checks.check_content(request.content)
    critical, prefix_tags = False, tuple[str, ...]()
    if request.parse_prefixes:
        content, critical, prefix_tags = checks.parse_prefixes(content)
        content = checks.check_content(content)
    importance = 1.0 if critical else request.importance
    return NewMemory(
        agent_id=scope.check_agent_id(request.agent_id),
        content=content,
        type=checks.check_type(request.type or "fact"),
        importance=checks.check_importance(0.5 if importance is None else importance),
        pinned=critical or bool(request.pinned),
        tags=checks.check_tags((*prefix_tags, *request.tags)),
        who=checks.check_text_field("who", request.who),
        project=checks.check_text_field("project", request.project),
        scope=checks.check_text_field("scope", request.scope),
        visibility=request.visibility,
        source_type=checks.check_text_field("sourceType", request.source_type),
        source_id=checks.check_text_field("sourceId", request.source_id),
        idempotency_key=checks.check_text_field("idempotencyKey", request.idempotency_key),
        session_id=checks.check_text_field("sessionId", request.session_id),
        created_at=request.created_at,
        metadata=dict(request.metadata),
    )


class MemoryService:
    """The memory lifecycle over one database; every call is scoped to an agent."""

    def __init__(
        self,
        db: DatabaseHandle,
        vectors: MemoryVectors | None = None,
        events: EventSink | None = None,
        follow: VectorFollow | None = None,
    ) -> None:
        self._db = db
        self._vectors = vectors
        self._follow = follow
        self._events: EventSink = events or DiscardEvents()
        self._editor = MemoryEditor(db, vectors, follow, self._events)

    def remember(self, request: RememberRequest, actor: Actor) -> RememberOutcome:
        """Store a memory unless it duplicates a live one (sourceId, idempotencyKey, content).

        With vectors that follow (the daemon), the memory is acknowledged once committed and
        its vector is `pending`; otherwise it is embedded first and stored with it.
        """
        new = build_new_memory(request)
        scope.check_actor(actor)
        # Cheap dedupe check first, so repeats never pay for the embedder.
        existing = memories.find_duplicate(self._db.reader(), new)
        if existing:
            return _deduped(existing)
        if self._follow is not None:
            outcome = self._write_many([new], actor, structured=[request.structured])[0]
            if not outcome.deduped:
                self._follow.follow([outcome.memory])
            return outcome
        prepared = self._vectors.prepare(new.content) if self._vectors else None
        memory_id = str(uuid.uuid4())
        with self._db.write() as conn:
            existing = memories.find_duplicate(conn, new)
            if existing:
                return _deduped(existing)
            memory = self._insert(conn, memory_id, new, actor)
            applied = self._structured(conn, memory, request.structured, actor)
            embedded = self._vectors.attach(conn, memory, prepared) if self._vectors else False
        self._publish_created([memory], embedded=embedded)
        self._publish_knowledge(memory, applied)
        if self._vectors is None:
            vector = VECTOR_NONE
        else:
            vector = VECTOR_STORED if embedded else VECTOR_QUEUED
        return RememberOutcome(memory, False, embedded, vector, applied)

    def remember_many(
        self, requests: Sequence[RememberRequest], actor: Actor
    ) -> list[RememberOutcome]:
        """Remember many memories (importers, ingest, benches): outcomes in request order.

        Every request is validated first; one invalid request refuses the call and nothing is
        written. Memories are written BULK_CHUNK per transaction (each deduped against the live
        ones and the earlier items), then embedded in the remember batcher's batches before
        this returns; a batch the embedder refuses leaves backfill jobs (`vector: queued`).
        """
        scope.check_actor(actor)
        news = []
        for number, request in enumerate(requests):
            try:
                news.append(build_new_memory(request))
            except InvalidInput as exc:
                raise InvalidInput(
                    f"item {number}: {exc.message}", code=exc.code, details=exc.details
                ) from None
        if self._follow is None:
            return [self.remember(request, actor) for request in requests]
        outcomes: list[RememberOutcome] = []
        for start in range(0, len(news), BULK_CHUNK):
            chunk = self._write_many(
                news[start : start + BULK_CHUNK],
                actor,
                publish=False,
                structured=[r.structured for r in requests[start : start + BULK_CHUNK]],
            )
            created = [o.memory for o in chunk if not o.deduped]
            done = self._follow.store_now(created)
            self._publish_created([m for m in created if m.id in done], embedded=True)
            self._publish_created([m for m in created if m.id not in done], embedded=False)
            outcomes.extend(_with_vector(o, done) for o in chunk)
        return outcomes

    def _write_many(
        self,
        news: Sequence[NewMemory],
        actor: Actor,
        *,
        publish: bool = True,
        structured: Sequence[StructuredPayload | None] = (),
    ) -> list[RememberOutcome]:
        """Commit memories without vectors in one transaction (each deduped inside it);
        `structured[i]`, when given, is applied with `news[i]`."""
        outcomes: list[RememberOutcome] = []
        with self._db.write() as conn:
            for n, new in enumerate(news):
                existing = memories.find_duplicate(conn, new)
                if existing:
                    outcomes.append(_deduped(existing))
                    continue
                memory = self._insert(conn, str(uuid.uuid4()), new, actor)
                payload = structured[n] if n < len(structured) else None
                applied = self._structured(conn, memory, payload, actor)
                outcomes.append(RememberOutcome(memory, False, False, VECTOR_PENDING, applied))
        if publish:
            self._publish_created([o.memory for o in outcomes if not o.deduped], embedded=False)
        for outcome in outcomes:
            self._publish_knowledge(outcome.memory, outcome.structured)
        return outcomes

    @staticmethod
    def _structured(
        conn: Connection, memory: Memory, payload: StructuredPayload | None, actor: Actor
    ) -> StructuredOutcome | None:
        """The narrow hook for structured payloads (service/memories/structured.py)."""
        return None if payload is None else apply_structured(conn, memory, payload, actor)

    def _publish_knowledge(self, memory: Memory, applied: StructuredOutcome | None) -> None:
        if applied is not None and applied.entity_ids:
            self._events.publish(
                KnowledgeChanged(
                    agent_id=memory.agent_id,
                    operation="structured_remember",
                    entity_ids=applied.entity_ids,
                    memory_id=memory.id,
                )
            )

    def _insert(self, conn: Connection, memory_id: str, new: NewMemory, actor: Actor) -> Memory:
        memories.insert_memory(conn, memory_id, new, actor=actor.changed_by, embedding_model=None)
        memory = self._require(conn, new.agent_id, memory_id)
        history.record_event(
            conn,
            memory_id=memory_id,
            agent_id=new.agent_id,
            event="created",
            actor=actor,
            new_content=new.content,
            metadata={"source_type": new.source_type, "source_id": new.source_id},
        )
        link_mentions(conn, memory)
        return memory

    def _publish_created(self, created: Iterable[Memory], *, embedded: bool) -> None:
        for memory in created:
            self._events.publish(
                MemoryCreated(
                    agent_id=memory.agent_id,
                    memory_id=memory.id,
                    memory_type=memory.type,
                    embedded=embedded,
                )
            )

    def mentions(self, agent_id: str, memory_id: str) -> list[Mention]:
        """The existing entities this live memory was linked to when it was remembered."""
        self.get(agent_id, memory_id)
        return mentions.mentions_of(self._db.reader(), agent_id, memory_id)

    def get(self, agent_id: str, memory_id: str) -> Memory:
        """A live memory; NotFound when missing, deleted or another agent's."""
        scope.check_agent_id(agent_id)
        memory = memories.get_memory(self._db.reader(), agent_id, memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        if memory.is_deleted:
            raise NotFound(rules.deleted_message(memory))
        return memory

    def list_page(
        self, agent_id: str, limit: int = 100, offset: int = 0, memory_type: str | None = None
    ) -> MemoryPage:
        """Live memories newest first (only `memory_type`, when given), with the scope's counts."""
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= 1000 or offset < 0:
            raise InvalidInput("limit must be 1..1000 and offset >= 0", code="bad_paging")
        memory_type = checks.check_text_field("type", memory_type)
        conn = self._db.reader()
        return MemoryPage(
            memories.list_memories(conn, agent_id, limit, offset, memory_type),
            memories.memory_stats(conn, agent_id),
        )

    def count(self, agent_id: str) -> int:
        """Live memories in this scope (cheap: no embedding join, unlike list_page's stats)."""
        scope.check_agent_id(agent_id)
        return memories.count_live(self._db.reader(), agent_id)

    def inspect(self, agent_id: str, memory_id: str) -> Memory:
        """The memory in this scope, deleted or not (the inspector offers Recover on those)."""
        scope.check_agent_id(agent_id)
        return self._require(self._db.reader(), agent_id, memory_id)

    def browse(
        self, agent_id: str, query: BrowseQuery, limit: int = 200, offset: int = 0
    ) -> list[Memory]:
        """One page of the memories table: `query`'s order and filters, live or deleted rows."""
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= 1000 or offset < 0:
            raise InvalidInput("limit must be 1..1000 and offset >= 0", code="bad_paging")
        return memories.browse_memories(
            self._db.reader(), agent_id, check_browse(query), limit, offset
        )

    def browse_count(self, agent_id: str, query: BrowseQuery) -> int:
        """How many rows `browse` has for `query`."""
        scope.check_agent_id(agent_id)
        return memories.browse_count(self._db.reader(), agent_id, check_browse(query))

    def browse_position(self, agent_id: str, query: BrowseQuery, memory_id: str) -> int | None:
        """The 0-based row of a memory in `browse(query)`; None when the browse lacks it."""
        scope.check_agent_id(agent_id)
        query = check_browse(query)
        return memories.browse_position(self._db.reader(), agent_id, query, memory_id)

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
        """Change content, type, tags, importance or pinned (service/memories/edits.py)."""
        return self._editor.modify(
            agent_id, memory_id, patch, reason=reason, if_version=if_version, actor=actor
        )

    def modify_batch(
        self, agent_id: str, patches: Sequence[BatchPatch], *, reason: str | None, actor: Actor
    ) -> tuple[ItemOutcome, ...]:
        """Signet's POST /api/memory/modify: every patch validated first, then one
        transaction where a memory's state fails only its own item (memory_edits.py)."""
        return self._editor.modify_batch(agent_id, patches, reason=reason, actor=actor)

    def forget(
        self,
        agent_id: str,
        memory_id: str,
        *,
        reason: str,
        force: bool = False,
        if_version: int | None = None,
        actor: Actor,
    ) -> MemoryChange:
        """Soft-delete a memory; it stays recoverable for the recovery window."""
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        reason = rules.require_reason(reason)
        with self._db.write() as conn:
            memory = self._require(conn, agent_id, memory_id)
            if memory.is_deleted:
                raise Conflict(
                    "memory is already deleted", code="already_deleted", details=rules.state(memory)
                )
            rules.check_version(memory, if_version)
            if memory.pinned and not force:
                raise Conflict(
                    "memory is pinned; pass force to forget it",
                    code="pinned_requires_force",
                    details=rules.state(memory),
                )
            change = self._forget_in(conn, memory, reason=reason, force=force, actor=actor)
        self._publish_deletes((change,))
        return change

    def preview_forget(self, agent_id: str, selector: MemorySelector) -> ForgetPreview:
        """What a batch forget with this selector would delete (nothing is written)."""
        scope.check_agent_id(agent_id)
        return batches.preview(self._db.reader(), agent_id, batches.check_selector(selector))

    def forget_batch(
        self,
        agent_id: str,
        selector: MemorySelector,
        *,
        reason: str,
        force: bool = False,
        confirm_token: str | None = None,
        actor: Actor,
    ) -> ForgetBatchOutcome:
        """Soft-delete every live memory the selector matches (at most MAX_BATCH), at once.

        Above CONFIRM_ABOVE candidates the caller must present the preview's confirm token;
        a token from another selection (the candidates or their versions changed) is refused.
        Pinned memories are skipped unless `force`. Refusals write nothing.
        """
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        reason = rules.require_reason(reason)
        selector = batches.check_selector(selector)
        changes: list[MemoryChange] = []
        results: list[ItemOutcome] = []
        with self._db.write() as conn:
            preview = batches.preview(conn, agent_id, selector)
            batches.check_confirm(preview, confirm_token)
            live = memories.get_memories(conn, agent_id, [c.id for c in preview.candidates])
            for candidate in preview.candidates:
                memory = live[candidate.id]
                if memory.pinned and not force:
                    results.append(ItemOutcome(memory.id, "pinned_requires_force", memory.version))
                    continue
                change = self._forget_in(conn, memory, reason=reason, force=force, actor=actor)
                changes.append(change)
                results.append(
                    ItemOutcome(memory.id, "deleted", change.previous_version, change.new_version)
                )
            results.extend(batches.unmatched_ids(conn, agent_id, selector, preview))
        self._publish_deletes(changes)
        pinned = sum(1 for item in results if item.status == "pinned_requires_force")
        return ForgetBatchOutcome(len(preview.candidates), len(changes), pinned, tuple(results))

    def recover(
        self, agent_id: str, memory_id: str, *, reason: str, if_version: int | None, actor: Actor
    ) -> MemoryChange:
        """Undo a soft delete within the recovery window (a reason is required, as in Signet)."""
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        reason = rules.require_reason(reason)
        with self._db.write() as conn:
            memory = memories.get_memory(conn, agent_id, memory_id)
            if memory is None:
                raise NotFound(f"memory {memory_id} not found", details={"id": memory_id})
            if not memory.is_deleted:
                raise Conflict(
                    "memory is not deleted", code="not_deleted", details=rules.state(memory)
                )
            rules.check_version(memory, if_version)
            if rules.recovery_expired(memory.deleted_at):
                raise Conflict(
                    f"memory was deleted more than {RECOVERY_WINDOW_DAYS} days ago",
                    code="retention_expired",
                    details=rules.state(memory),
                )
            if memories.find_duplicate(conn, rules.as_new(memory)):
                raise Conflict(
                    "a live memory with the same content exists; recover would duplicate it",
                    code="duplicate_live_memory",
                    details=rules.state(memory),
                )
            memories.set_deleted(conn, memory, deleted=False, reason=None, actor=actor.changed_by)
            history.record_event(
                conn,
                memory_id=memory_id,
                agent_id=agent_id,
                event="recovered",
                actor=actor,
                reason=reason,
                new_content=memory.content,
            )
            recovered = self._require(conn, agent_id, memory_id)
        self._events.publish(
            MemoryRecovered(agent_id=agent_id, memory_id=memory_id, version=recovered.version)
        )
        return MemoryChange(recovered, memory.version)

    def history(self, agent_id: str, memory_id: str, limit: int = 200) -> list[HistoryEvent]:
        """Every lifecycle event of a memory in this scope (deleted ones included)."""
        scope.check_agent_id(agent_id)
        if not 1 <= limit <= MAX_HISTORY_LIMIT:
            raise InvalidInput(f"limit must be 1..{MAX_HISTORY_LIMIT}", code="bad_limit")
        conn = self._db.reader()
        if memories.get_memory(conn, agent_id, memory_id) is None:  # Signet: {error, memoryId}
            raise NotFound(f"memory {memory_id} not found", details={"memory_id": memory_id})
        return history.list_events(conn, agent_id, memory_id, limit)

    def _forget_in(
        self, conn: Connection, memory: Memory, *, reason: str, force: bool, actor: Actor
    ) -> MemoryChange:
        memories.set_deleted(conn, memory, deleted=True, reason=reason, actor=actor.changed_by)
        history.record_event(
            conn,
            memory_id=memory.id,
            agent_id=memory.agent_id,
            event="deleted",
            actor=actor,
            reason=reason,
            old_content=memory.content,
            metadata={"force": force},
        )
        deleted = self._require(conn, memory.agent_id, memory.id)
        return MemoryChange(deleted, memory.version)

    def _publish_deletes(self, changes: Iterable[MemoryChange]) -> None:
        for change in changes:
            self._events.publish(
                MemoryDeleted(
                    agent_id=change.memory.agent_id,
                    memory_id=change.memory.id,
                    version=change.new_version,
                )
            )

    def _require(self, conn: Connection, agent_id: str, memory_id: str) -> Memory:
        memory = memories.get_memory(conn, agent_id, memory_id)
        if memory is None:  # Signet's body: {id, status: "not_found", error}
            raise NotFound(f"memory {memory_id} not found", details={"id": memory_id})
        return memory


def check_browse(query: BrowseQuery) -> BrowseQuery:
    """A browse query with a known sort and bounded filter values (blank filters: off)."""
    if query.sort not in memories.BROWSE_SORTS:
        known = ", ".join(sorted(memories.BROWSE_SORTS))
        raise InvalidInput(f"sort must be one of {known}", code="bad_sort")
    tag = checks.check_text_field("tag", query.tag)
    return replace(
        query,
        type=checks.check_text_field("type", query.type),
        text=checks.check_text_field("text", query.text),
        tag=None if tag is None else checks.check_tags((tag,))[0],
        who=checks.check_text_field("who", query.who),
        project=checks.check_text_field("project", query.project),
    )


def _deduped(existing: Memory) -> RememberOutcome:
    return RememberOutcome(existing, deduped=True, embedded=False, vector=VECTOR_EXISTING)


def _with_vector(outcome: RememberOutcome, done: set[str]) -> RememberOutcome:
    """A bulk outcome once its batch was embedded: stored, or queued for backfill."""
    if outcome.deduped:
        return outcome
    embedded = outcome.memory.id in done
    vector = VECTOR_STORED if embedded else VECTOR_QUEUED
    return replace(outcome, embedded=embedded, vector=vector)
