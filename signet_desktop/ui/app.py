"""The desktop process: the same daemon runtime on a qasync loop, plus a tray icon and a window.

uvicorn serves on the Qt event loop (qasync), so HTTP, the tray and the window share one
thread that never blocks: facade calls go to worker threads. Quitting (tray, window without a
tray, SIGINT/SIGTERM) asks the runtime to stop; when the server returns, the process ends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys

import qasync
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from signet_desktop.daemon.runtime import (
    EXIT_OK,
    DaemonRuntime,
    RuntimeOptions,
    StartupError,
    report_startup_error,
)
from signet_desktop.daemon.signals import (
    ignore_stop_signals,
    interrupt_on_term,
    serve_with_signals,
)
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.icon import app_icon
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.startup_error import show_startup_error
from signet_desktop.ui.tray import TrayIcon
from signet_desktop.ui.worker_host import QtWorkerHost

APP_NAME = "Signet Desktop"
_HEADLESS_PLATFORMS = ("offscreen", "minimal")


class DesktopShell(QObject):
    """The window and tray over an opened `DaemonRuntime`."""

    def __init__(self, runtime: DaemonRuntime, *, use_tray: bool | None = None) -> None:
        super().__init__()
        if runtime.service is None:
            raise RuntimeError("the runtime must be opened before the shell is built")
        self.runtime = runtime
        tray_ok = QSystemTrayIcon.isSystemTrayAvailable() if use_tray is None else use_tray
        self.events = EventBridge(runtime.service.events, self)
        self.window = MainWindow(
            runtime.service,
            runtime.url,
            runtime.paths_root(),
            hide_on_close=tray_ok,
            events=self.events,
        )
        self.window.setWindowIcon(app_icon())
        self.tray: TrayIcon | None = None
        if tray_ok:
            self.tray = TrayIcon(app_icon(), f"{APP_NAME} — {runtime.url}", self)
            self.tray.open_chosen.connect(self.show_window)
            self.tray.quit_chosen.connect(self.quit)
        self.window.quit_requested.connect(self.quit)
        runtime.on_ready(self.window.start_refreshing)

    def show(self) -> None:
        """Show the tray icon (when there is a tray) and the window."""
        if self.tray is not None:
            self.tray.show()
        self.show_window()

    def show_window(self) -> None:
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()

    def quit(self) -> None:
        """Stop the daemon; the process exits when the server has shut down."""
        self.window.state_label.setText("stopping")
        self.runtime.request_stop()

    def close(self) -> None:
        """Tear down the widgets (after the server stopped)."""
        self.window.stop_refreshing()
        self.events.close()
        if self.tray is not None:
            self.tray.hide()
        self.window.hide()
        self.window.deleteLater()


def run_desktop(options: RuntimeOptions) -> int:
    """The default `signet-desktop` process. Returns the exit code."""
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else APP_NAME])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    if options.worker_host is None:  # workers run in QThreads under the app
        options = dataclasses.replace(options, worker_host=QtWorkerHost)
    runtime = DaemonRuntime(options)
    interrupt_on_term()
    try:
        try:
            runtime.open()
        except StartupError as exc:
            report_startup_error(exc)
            _show_startup_error(app, exc)
            return exc.exit_code
        return _run_shell(app, runtime)
    except KeyboardInterrupt:  # a signal before the loop took over signal handling
        return EXIT_OK
    finally:
        runtime.close()
        ignore_stop_signals()  # the process ends here: no late signal may kill it


def _run_shell(app: QApplication, runtime: DaemonRuntime) -> int:
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    shell = DesktopShell(runtime)
    shell.show()
    try:
        result: int = loop.run_until_complete(
            serve_with_signals(runtime.serve, runtime.request_stop)
        )
        return result
    finally:
        shell.close()
        _finish_pending_tasks(loop)
        loop.close()
        asyncio.set_event_loop(None)


def _finish_pending_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and await what is still pending (window tasks, uvicorn's lifespan task).

    A task left pending is garbage-collected after the loop's Qt timers are gone, and its
    cancellation then fails inside qasync with a traceback at exit.
    """
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _show_startup_error(app: QApplication, exc: StartupError) -> None:
    # Someone who started the app from a menu never sees stderr.
    if app.platformName() in _HEADLESS_PLATFORMS:
        return
    show_startup_error(f"{APP_NAME} did not start", exc.message)
