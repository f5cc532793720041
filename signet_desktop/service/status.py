"""The status board: live process facts for /api/status, kept current by following the bus.

Workers and start-up tasks do not write here directly: they publish events
(`worker.state`) and the board, subscribed with `follow(bus)`, turns them into facts. The
runtime sets its own static facts (`runtime`, `config`) with `set`. Every change is announced
as `status.changed` so the inspector refreshes without polling. A fact that changes too often
to announce (the event relay's counters) is `provide`d instead: read when a snapshot is taken.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from signet_desktop.domain.events import (
    DiscardEvents,
    Event,
    EventSink,
    StatusChanged,
    WorkerStateChanged,
)

WORKERS_KEY = "workers"


class StatusBoard:
    """Thread-safe facts keyed by their top-level /api/status name."""

    def __init__(self, events: EventSink | None = None) -> None:
        self._facts: dict[str, Any] = {}
        self._live: dict[str, Callable[[], Any]] = {}
        self._lock = threading.Lock()
        self._events: EventSink = events or DiscardEvents()

    def set(self, key: str, value: Any) -> None:
        with self._lock:
            self._facts[key] = value
        self._events.publish(StatusChanged(key=key))

    def provide(self, key: str, read: Callable[[], Any]) -> None:
        """Report `read()` under `key` in every snapshot (cheap and non-blocking; announced
        once, here, not on each change)."""
        with self._lock:
            self._live[key] = read
        self._events.publish(StatusChanged(key=key))

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            facts, live = dict(self._facts), dict(self._live)
        facts.update((key, read()) for key, read in live.items())
        return facts

    def follow(self, connect: Callable[[Callable[[Event], None]], Callable[[], None]]) -> None:
        """Subscribe to the bus (`bus.connect`) and keep worker facts current from its events."""
        connect(self.apply)

    def apply(self, event: Event) -> None:
        """Fold one event into the facts (events of other kinds are ignored)."""
        if isinstance(event, WorkerStateChanged):
            with self._lock:
                workers = dict(self._facts.get(WORKERS_KEY, {}))
                known = workers.get(event.worker, {})  # keeps a worker's own `detail`
                workers[event.worker] = {**known, "state": event.state, "error": event.error}
                self._facts[WORKERS_KEY] = workers
            self._events.publish(StatusChanged(key=WORKERS_KEY))

    def note_worker(self, worker: str, detail: str | None) -> None:
        """A worker's own account of itself (why it is idle, say) beside its hosted state."""
        with self._lock:
            workers = dict(self._facts.get(WORKERS_KEY, {}))
            known = workers.get(worker, {"state": "pending", "error": None})
            workers[worker] = {**known, "detail": detail}
            self._facts[WORKERS_KEY] = workers
        self._events.publish(StatusChanged(key=WORKERS_KEY))
