"""Batch forget selection: the selector's checks, the candidates, the confirm token.

Signet's `POST /api/memory/forget` previews, then executes, a selection of at most MAX_BATCH
memories; above CONFIRM_ABOVE the execute must present the token its preview returned. The
token is a digest of the agent and the candidates' ids and versions, so it needs no stored
state and goes stale as soon as any candidate changes (or another one starts to match).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from signet_desktop.domain import remember as checks
from signet_desktop.domain.errors import Conflict, InvalidInput
from signet_desktop.domain.memory import ForgetCandidate, ForgetPreview, ItemOutcome, MemorySelector
from signet_desktop.storage import memories
from signet_desktop.storage.connect import Connection

MAX_BATCH = 200
CONFIRM_ABOVE = 25
MAX_ID_CHARS = 256
EXACT_MATCH_SCORE = 1.0


def check_selector(selector: MemorySelector) -> MemorySelector:
    """Refuse an empty or oversized selection; an explicit id list sets the limit."""
    if selector.ids is None and not selector.has_filters:
        raise InvalidInput(
            "say what to forget: query, ids, or a filter (type, tags, who, source_type, "
            "since, until)",
            code="selector_required",
        )
    if selector.ids is not None:
        if len(selector.ids) > MAX_BATCH:
            raise InvalidInput(
                f"at most {MAX_BATCH} ids per batch, got {len(selector.ids)}", code="bad_batch"
            )
        if any(not item or len(item) > MAX_ID_CHARS for item in selector.ids):
            raise InvalidInput(f"ids must be 1..{MAX_ID_CHARS} characters", code="field_invalid")
        ids = tuple(dict.fromkeys(selector.ids))
        selector = replace(selector, ids=ids, limit=max(len(ids), 1))
    if not 1 <= selector.limit <= MAX_BATCH:
        raise InvalidInput(f"limit must be 1..{MAX_BATCH}", code="bad_limit")
    for name in ("type", "who", "source_type"):
        checks.check_text_field(name, getattr(selector, name))
    return replace(selector, tags=checks.check_tags(selector.tags))


def preview(conn: Connection, agent_id: str, selector: MemorySelector) -> ForgetPreview:
    """The live memories the selector matches, best first, with their confirm token."""
    found = memories.select_live(conn, agent_id, selector)
    if selector.scores:
        rank = {memory_id: index for index, memory_id in enumerate(selector.ids or ())}
        found.sort(key=lambda memory: rank.get(memory.id, len(rank)))
    candidates = tuple(
        ForgetCandidate(
            memory.id,
            round(selector.scores.get(memory.id, EXACT_MATCH_SCORE), 4),
            memory.pinned,
            memory.version,
        )
        for memory in found
    )
    return ForgetPreview(
        candidates, len(candidates) > CONFIRM_ABOVE, confirm_token(agent_id, candidates)
    )


def confirm_token(agent_id: str, candidates: tuple[ForgetCandidate, ...]) -> str:
    """A digest of exactly this selection (order-independent)."""
    digest = hashlib.sha256(agent_id.encode())
    for item in sorted(f"{c.id}@{c.version}" for c in candidates):
        digest.update(b"\n" + item.encode())
    return digest.hexdigest()[:32]


def check_confirm(found: ForgetPreview, token: str | None) -> None:
    """Above CONFIRM_ABOVE candidates, the preview's token must come back unchanged."""
    if not found.requires_confirm:
        return
    if not token:
        raise InvalidInput(
            f"{len(found.candidates)} memories match (more than {CONFIRM_ABOVE}): preview "
            "first and pass its confirmToken as confirm_token",
            code="confirm_required",
            details={"count": len(found.candidates)},
        )
    if token != found.confirm_token:
        raise Conflict(
            "the matching memories changed since the preview; preview again",
            code="confirm_token_mismatch",
            details={"count": len(found.candidates)},
        )


def unmatched_ids(
    conn: Connection, agent_id: str, selector: MemorySelector, found: ForgetPreview
) -> list[ItemOutcome]:
    """Explicit ids the batch did not select: missing (or another agent's), already deleted,
    or live but not matching the filters."""
    chosen = {candidate.id for candidate in found.candidates}
    outcomes: list[ItemOutcome] = []
    for memory_id in selector.ids or ():
        if memory_id in chosen:
            continue
        memory = memories.get_memory(conn, agent_id, memory_id)
        if memory is None:
            outcomes.append(ItemOutcome(memory_id, "not_found"))
        elif memory.is_deleted:
            outcomes.append(ItemOutcome(memory_id, "already_deleted", memory.version))
        else:
            outcomes.append(ItemOutcome(memory_id, "not_matched", memory.version))
    return outcomes
