"""Helpers of the Memories pane and memory detail tests: fill a store, let the GUI settle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from signet_desktop.domain.memory import Actor
from signet_desktop.service.facade import SignetService
from signet_desktop.service.memories.service import RememberRequest
from signet_desktop.ui.pane import PaneContext

ELSEWHERE = Actor(changed_by="claude-code", actor_type="hook")  # another client of the daemon


def fill(service: SignetService, count: int, agent_id: str = "default") -> list[str]:
    """`count` memories (ids oldest first): tags, who, type and pinned vary with the number."""
    requests = [
        RememberRequest(
            content=f"memory number {n:04d} about {'billing' if n % 3 == 0 else 'search'}",
            agent_id=agent_id,
            type="decision" if n % 5 == 0 else "fact",
            tags=("infra",) if n % 4 == 0 else ("ops", "db"),
            who="alice" if n % 2 == 0 else "bob",
            project="billing" if n % 3 == 0 else None,
            importance=round((n % 10) / 10, 1),
            pinned=n % 50 == 0,
            created_at=f"2026-01-{1 + n // 1000:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:"
            f"{n % 60:02d}.000Z",
        )
        for n in range(count)
    ]
    return [o.memory.id for o in service.memories.remember_many(requests, ELSEWHERE)]


def settle(
    loop: asyncio.AbstractEventLoop,
    context: PaneContext,
    until: Callable[[], bool] | None = None,
    timeout: float = 30.0,  # a bound for a loaded machine (load 10), not a pace
) -> None:
    """Run the loop until `until()` holds (default: no task pending for a quiet 0.3 s)."""

    async def run() -> None:
        deadline = loop.time() + timeout
        quiet_since: float | None = None
        while True:
            await context.tasks.wait_idle()
            await asyncio.sleep(0.02)
            now = loop.time()
            if until is not None and until():
                return
            if until is None:
                if context.tasks.pending:
                    quiet_since = None
                elif quiet_since is None:
                    quiet_since = now
                elif now - quiet_since >= 0.3:
                    return
            if now > deadline:
                raise AssertionError("the GUI did not settle in time")

    loop.run_until_complete(run())
