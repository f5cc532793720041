"""The one bridge from the event bus to Qt: events re-emitted as a signal on the GUI thread.

The bus calls `_forward` on whatever thread published (a worker, an HTTP request's thread);
emitting a signal of an object that lives on the GUI thread queues the delivery there, so
panes connect to `event_published` and never poll. Only `ui/` imports Qt; the core never
knows this exists.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from signet_desktop.domain.events import Event
from signet_desktop.service.events import EventBus


class EventBridge(QObject):
    """Re-emits every bus event as `event_published(event)` on the thread this object lives on."""

    event_published = Signal(object)

    def __init__(self, bus: EventBus, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._disconnect: Callable[[], None] | None = bus.connect(self._forward)

    def _forward(self, event: Event) -> None:
        self.event_published.emit(event)

    def close(self) -> None:
        """Stop forwarding (idempotent); call before the object is deleted."""
        if self._disconnect is not None:
            self._disconnect()
            self._disconnect = None
