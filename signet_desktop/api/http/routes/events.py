"""/api/events: the event bus as Server-Sent Events, scoped to one agent, with a heartbeat.

For external dashboards and tests (the inspector follows the bus in-process). Each event is
`id: <seq>`, `event: <type>`, `data: <json>` with the fields of `api/views.py: event_json`.
Events of other agents never reach the stream; process events (workers, status) do. A client
that falls behind loses events rather than growing the daemon's memory: the stream then sends
`event: stream.dropped` with the running count. The stream ends when the daemon shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field

from signet_desktop.api.http.schemas import AgentParams
from signet_desktop.api.http.scope import get_service, resolve_agent
from signet_desktop.api.views import delivery_json
from signet_desktop.service.events import Subscription

router = APIRouter(tags=["events"])

DEFAULT_HEARTBEAT_S = 15.0
SHUTDOWN_CHECK_S = 0.5  # how soon a waiting stream notices that the daemon is stopping
BATCH = 100
RETRY_MS = 3000


class EventParams(AgentParams):
    """GET /api/events."""

    types: str | None = Field(None, max_length=2000, description="comma-separated event types")
    heartbeat: float = Field(DEFAULT_HEARTBEAT_S, ge=0.05, le=300)


def frame(event: str, data: object, event_id: int | None = None) -> str:
    """One SSE frame."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def _frames(
    request: Request, subscription: Subscription, heartbeat_s: float
) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()

    def wake_up() -> None:  # called on the publisher's thread
        loop.call_soon_threadsafe(wake.set)

    subscription.set_waker(wake_up)
    reported_drops = 0
    try:
        yield f"retry: {RETRY_MS}\n: connected\n\n"
        last_sent = time.monotonic()
        while not request.app.state.shutting_down:
            wake.clear()
            for delivery in subscription.drain(BATCH):
                yield frame(delivery.event.kind, delivery_json(delivery), delivery.seq)
                last_sent = time.monotonic()
            if subscription.dropped != reported_drops:
                reported_drops = subscription.dropped
                yield frame("stream.dropped", {"type": "stream.dropped", "dropped": reported_drops})
            if subscription.pending():
                continue
            remaining = heartbeat_s - (time.monotonic() - last_sent)
            if remaining <= 0:
                yield ": heartbeat\n\n"
                last_sent = time.monotonic()
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), min(remaining, SHUTDOWN_CHECK_S))
    finally:
        subscription.set_waker(None)
        subscription.close()


@router.get("/api/events", operation_id="events", response_class=StreamingResponse)
async def events(params: Annotated[EventParams, Query()], request: Request) -> StreamingResponse:
    """Stream this agent's events (and process events) as they happen."""
    kinds = [t.strip() for t in (params.types or "").split(",") if t.strip()]
    subscription = get_service(request).stream.follow(
        resolve_agent(request, params.agent_id), kinds or None
    )
    return StreamingResponse(
        _frames(request, subscription, params.heartbeat),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
