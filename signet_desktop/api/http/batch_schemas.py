"""Request bodies of Signet's batch routes: POST /api/memory/forget and /api/memory/modify."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field

from signet_desktop.api.http.schemas import (
    Body,
    Score,
    Timestamp,
    Version,
    split_tags,
)
from signet_desktop.api.http.schemas import _agent_field as agent_field
from signet_desktop.domain.memory import BatchPatch, MemoryPatch, MemorySelector
from signet_desktop.service.memories.batches import MAX_BATCH, MAX_ID_CHARS

BatchId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
DEFAULT_FORGET_LIMIT = 20


class BatchForgetBody(Body):
    """POST /api/memory/forget: preview (default) or execute a selection.

    At least one of `query`, `ids` or a filter is needed; every given criterion must match.
    """

    mode: Literal["preview", "execute"] = "preview"
    query: str | None = None
    ids: list[BatchId] | None = Field(default=None, max_length=MAX_BATCH)
    type: str | None = None
    tags: list[str] | str | None = None
    who: str | None = None
    source_type: str | None = Field(
        default=None, validation_alias=AliasChoices("source_type", "sourceType")
    )
    since: Timestamp | None = None
    until: Timestamp | None = None
    limit: int = Field(DEFAULT_FORGET_LIMIT, ge=1, le=MAX_BATCH)
    reason: str | None = None
    force: bool = False
    confirm_token: str | None = Field(
        default=None, max_length=128, validation_alias=AliasChoices("confirm_token", "confirmToken")
    )
    changed_by: str | None = Field(
        default=None, validation_alias=AliasChoices("changed_by", "changedBy")
    )
    agent_id: str | None = agent_field()
    # Signet refuses a version guard on batch forget (400), whatever its value, rather than
    # ignore it; `execute` checks whether it was sent (memory route: forget_batch).
    if_version: Any = Field(
        default=None,
        validation_alias=AliasChoices("if_version", "ifVersion"),
        description="not supported: an execute that sends it is refused (400)",
    )

    @property
    def sent_if_version(self) -> bool:
        """Whether the body named `if_version` at all (even as null), as Signet checks."""
        return "if_version" in self.model_fields_set

    def to_selector(
        self, ranked: tuple[str, ...] | None = None, scores: dict[str, float] | None = None
    ) -> MemorySelector:
        """The core's selector; `ranked` (a query's hits, best first) narrows the ids."""
        ids = None if self.ids is None else tuple(self.ids)
        if ranked is not None:
            wanted = None if ids is None else set(ids)
            ids = tuple(i for i in ranked if wanted is None or i in wanted)
        return MemorySelector(
            ids=ids,
            type=self.type,
            tags=split_tags(self.tags),
            who=self.who,
            source_type=self.source_type,
            since=self.since,
            until=self.until,
            limit=self.limit,
            scores=scores or {},
        )


class PatchItem(Body):
    """One patch of POST /api/memory/modify (its own `reason` overrides the batch's)."""

    id: BatchId
    content: str | None = None
    type: str | None = None
    tags: list[str] | str | None = None
    importance: Score | None = None
    pinned: bool | None = None
    reason: str | None = None
    if_version: Version | None = Field(
        default=None, validation_alias=AliasChoices("if_version", "ifVersion")
    )

    def to_patch(self) -> BatchPatch:
        patch = MemoryPatch(
            content=self.content,
            type=self.type,
            tags=None if self.tags is None else split_tags(self.tags),
            importance=self.importance,
            pinned=self.pinned,
        )
        return BatchPatch(self.id, patch, self.reason, self.if_version)


class BatchModifyBody(Body):
    """POST /api/memory/modify: up to MAX_BATCH patches, validated in full before any write."""

    patches: list[PatchItem] = Field(min_length=1, max_length=MAX_BATCH)
    reason: str | None = None
    changed_by: str | None = Field(
        default=None, validation_alias=AliasChoices("changed_by", "changedBy")
    )
    agent_id: str | None = agent_field()
