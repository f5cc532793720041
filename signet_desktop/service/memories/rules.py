"""The memory lifecycle's rules: reasons, versions, patches, the recovery window (no I/O).

Pure functions the memory service applies inside and around its transactions; kept apart so
the service module reads as the lifecycle itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from signet_desktop.domain import remember as checks
from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.memory import (
    RECOVERY_WINDOW_DAYS,
    BatchPatch,
    Memory,
    MemoryPatch,
    NewMemory,
)
from signet_desktop.service.memories.batches import MAX_BATCH


def require_reason(reason: str | None) -> str:
    if reason is None or not reason.strip():
        raise InvalidInput("reason is required", code="reason_required")
    if len(reason) > 2000 or "\x00" in reason:
        raise InvalidInput("reason is too long or invalid", code="reason_invalid")
    return reason.strip()


def check_version(memory: Memory, if_version: int | None) -> None:
    if if_version is not None and if_version != memory.version:
        raise Conflict(
            f"version conflict: memory is at version {memory.version}, request expected "
            f"{if_version}",
            code="version_conflict",
            details=state(memory),
        )


def prepare_patches(
    patches: Sequence[BatchPatch], reason: str | None
) -> list[tuple[BatchPatch, dict[str, Any], str]]:
    """Validate every patch of a batch (nothing is written unless all pass)."""
    if not 1 <= len(patches) <= MAX_BATCH:
        raise InvalidInput(
            f"a batch holds 1..{MAX_BATCH} patches, got {len(patches)}", code="bad_batch"
        )
    prepared: list[tuple[BatchPatch, dict[str, Any], str]] = []
    seen: set[str] = set()
    for index, item in enumerate(patches):
        try:
            if item.id in seen:
                raise InvalidInput("the same id appears twice in the batch", code="duplicate_id")
            seen.add(item.id)
            fields = patch_fields(item.patch)
            item_reason = require_reason(item.reason if item.reason is not None else reason)
        except InvalidInput as refused:
            raise InvalidInput(
                f"patches[{index}]: {refused.message}",
                code=refused.code,
                details={"index": index, "id": item.id},
            ) from None
        prepared.append((item, fields, item_reason))
    return prepared


def patch_fields(patch: MemoryPatch) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if patch.content is not None:
        fields["content"] = checks.check_content(patch.content)
    if patch.type is not None:
        fields["type"] = checks.check_type(patch.type)
    if patch.tags is not None:
        fields["tags"] = checks.check_tags(patch.tags)
    if patch.importance is not None:
        fields["importance"] = checks.check_importance(patch.importance)
    if patch.pinned is not None:
        fields["pinned"] = patch.pinned
    if not fields:
        raise InvalidInput("nothing to change", code="empty_patch")
    return fields


def before(memory: Memory, changed: Mapping[str, Any]) -> dict[str, Any]:
    values = {name: getattr(memory, name) for name in changed}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def deleted_message(memory: Memory) -> str:
    """Why a deleted memory is not shown, and how long it can still be brought back."""
    if memory.deleted_at is None or recovery_expired(memory.deleted_at):
        return f"memory {memory.id} was deleted and can no longer be recovered"
    deleted = datetime.fromisoformat(memory.deleted_at.replace("Z", "+00:00"))
    until = (deleted + timedelta(days=RECOVERY_WINDOW_DAYS)).date().isoformat()
    return (
        f"memory {memory.id} was deleted on {deleted.date().isoformat()}; it can be recovered "
        f"until {until} (`signet memory recover {memory.id}`, or POST "
        f"/api/memory/{memory.id}/recover)"
    )


def recovery_expired(deleted_at: str | None) -> bool:
    if deleted_at is None:
        return False
    deleted = datetime.fromisoformat(deleted_at.replace("Z", "+00:00"))
    return datetime.now(UTC) - deleted > timedelta(days=RECOVERY_WINDOW_DAYS)


def as_new(memory: Memory) -> NewMemory:
    return NewMemory(
        agent_id=memory.agent_id,
        content=memory.content,
        visibility=memory.visibility,
        scope=memory.scope,
    )


def state(memory: Memory) -> dict[str, Any]:
    """The facts Signet sends beside a refused lifecycle change."""
    return {"id": memory.id, "current_version": memory.version}
