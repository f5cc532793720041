"""One desktop app per workspace: a second start asks the first to show its window, then exits.

The first instance listens on a QLocalServer named after the workspace (a hash of the user and
the resolved path). A second `signet-desktop` connects *before* it takes the workspace lock,
sends `focus`, waits for `ok` and exits 0; when nobody answers it starts normally (and the lock
still refuses a daemon that is running headless). `--headless` never comes here.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

FOCUS = b"focus\n"
ACK = b"ok\n"
REPLY_TIMEOUT_MS = 3000  # a running instance answers within a loop turn


def server_name(workspace: Path) -> str:
    """The local server name for `workspace` (same user, same directory → same name)."""
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
    key = f"{user}:{workspace.expanduser().resolve()}"
    return "signet-desktop-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def ask_running_instance(name: str, *, timeout_ms: int = REPLY_TIMEOUT_MS) -> bool:
    """Ask the instance listening on `name` to show its window; True when it said so.

    Waits in a local event loop (up to `timeout_ms`), not in blocking socket calls: it runs
    before the application's loop exists, and on the same thread as a server in tests.
    """
    socket = QLocalSocket()
    loop = QEventLoop()
    reply = bytearray()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)

    def received() -> None:
        reply.extend(bytes(socket.readAll().data()))
        if ACK in reply:
            loop.quit()

    socket.connected.connect(lambda: socket.write(FOCUS))
    socket.readyRead.connect(received)
    socket.errorOccurred.connect(lambda _error: loop.quit())
    socket.disconnected.connect(loop.quit)
    socket.connectToServer(name)
    try:
        if socket.state() == QLocalSocket.LocalSocketState.UnconnectedState:
            return False  # nobody listens (refused at once)
        timer.start(timeout_ms)
        loop.exec()
        return ACK in reply
    finally:
        timer.stop()
        socket.abort()


class InstanceServer(QObject):
    """Listens for later starts on the same workspace; `focus_requested` when one asks."""

    focus_requested = Signal()

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.requests = 0
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Start listening. Call it holding the workspace lock: a leftover socket file of a
        crashed instance is removed first, which is only safe when no instance is alive."""
        QLocalServer.removeServer(self.name)
        if not self._server.listen(self.name):
            log.warning(
                "single instance: cannot listen on %s: %s", self.name, self._server.errorString()
            )
            return False
        return True

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    def close(self) -> None:
        self._server.close()
        for socket in list(self._buffers):
            socket.abort()
        self._buffers.clear()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))
            if socket.bytesAvailable():  # arrived before readyRead was connected
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        self._buffers[socket] = data
        if FOCUS not in data:
            return
        self._buffers[socket] = b""
        socket.write(ACK)
        socket.flush()
        self.requests += 1
        log.info("another signet-desktop started on this workspace: showing the window")
        self.focus_requested.emit()

    def _forget(self, socket: QLocalSocket) -> None:
        # No deleteLater: the server owns accepted sockets and frees them when it goes, and a
        # deferred delete of one the Python wrapper also tracks crashed the interpreter.
        self._buffers.pop(socket, None)
