"""New log lines as a Qt signal on the GUI thread (the Health pane's log view, no polling).

The ring (`daemon/logring.py`) calls its listeners on whatever thread logged; emitting a signal
of an object that lives on the GUI thread queues the delivery there, as `event_bridge.py` does
for bus events.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from signet_desktop.daemon.logring import LogLine, LogRing


class LogBridge(QObject):
    """Re-emits every new line of `ring` as `line_logged(line)`."""

    line_logged = Signal(object)

    def __init__(self, ring: LogRing, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ring = ring
        self._unsubscribe: Callable[[], None] | None = ring.subscribe(self._forward)

    def _forward(self, line: LogLine) -> None:
        try:
            self.line_logged.emit(line)
        except RuntimeError:  # the Qt object is gone without close(): stop listening
            self.close()

    def close(self) -> None:
        """Stop forwarding (idempotent); call before the object is deleted."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
