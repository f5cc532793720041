"""Following the event bus from outside the process: scope- and kind-checked subscriptions."""

from __future__ import annotations

from collections.abc import Collection

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput
from signet_desktop.domain.events import known_kinds
from signet_desktop.service.events import EventBus, Subscription

STREAM_BUFFER = 256  # a client that falls this far behind loses events (counted), not memory


class EventStream:
    """Hands out bounded subscriptions for one agent (the SSE route, later MCP)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    def follow(
        self, agent_id: str, kinds: Collection[str] | None = None, *, buffer: int = STREAM_BUFFER
    ) -> Subscription:
        """A subscription to `agent_id`'s events and process events, optionally some kinds."""
        scope.check_agent_id(agent_id)
        if kinds:
            unknown = sorted(set(kinds) - known_kinds())
            if unknown:
                raise InvalidInput(
                    f"unknown event type {', '.join(unknown)}; known: "
                    + ", ".join(sorted(known_kinds())),
                    code="bad_event_type",
                )
        return self._bus.subscribe(agent_id=agent_id, kinds=kinds or None, buffer=buffer)
