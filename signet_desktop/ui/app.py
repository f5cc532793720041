"""The desktop process: the same daemon runtime on a qasync loop, plus a tray icon and a window.

uvicorn serves on the Qt event loop (qasync), so HTTP, the tray and the window share one
thread that never blocks: facade calls go to worker threads. Quitting (tray, window without a
tray, SIGINT/SIGTERM) asks the runtime to stop; when the server returns, the process ends.
A second start on the same workspace shows the running window and exits 0
(`ui/single_instance.py`), checked before the workspace lock is taken.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import os
import sys
from collections.abc import Callable, Sequence

import qasync
from PySide6.QtCore import QObject, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from signet_desktop.config import resolve_workspace
from signet_desktop.daemon.runtime import (
    EXIT_OK,
    DaemonRuntime,
    RuntimeOptions,
    StartupError,
    run_runtime,
)
from signet_desktop.daemon.signals import serve_with_signals
from signet_desktop.domain.events import Event
from signet_desktop.service.pipeline.service import PipelineStatus
from signet_desktop.ui.autostart import Autostart
from signet_desktop.ui.event_bridge import EventBridge
from signet_desktop.ui.first_paint import first_paint
from signet_desktop.ui.icon import app_icon
from signet_desktop.ui.main_window import MainWindow
from signet_desktop.ui.pane import PaneSpec
from signet_desktop.ui.settings import ShellSettings
from signet_desktop.ui.single_instance import InstanceServer, ask_running_instance, server_name
from signet_desktop.ui.startup_error import show_startup_error
from signet_desktop.ui.status_view import StatusView, tray_state
from signet_desktop.ui.style import apply_style
from signet_desktop.ui.tray import TrayIcon
from signet_desktop.ui.worker_host import QtWorkerHost

log = logging.getLogger(__name__)

APP_NAME = "Signet Desktop"
NO_TRAY_NOTE = "No system tray: closing the window quits"
_HEADLESS_PLATFORMS = ("offscreen", "minimal")


class DesktopShell(QObject):
    """The window and tray over an opened `DaemonRuntime`."""

    def __init__(
        self,
        runtime: DaemonRuntime,
        *,
        use_tray: bool | None = None,
        settings: ShellSettings | None = None,
        specs: Sequence[PaneSpec] | None = None,
        autostart: Autostart | None = None,
        open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
    ) -> None:
        super().__init__()
        if runtime.service is None:
            raise RuntimeError("the runtime must be opened before the shell is built")
        self.runtime = runtime
        self.service = runtime.service
        self.settings = settings or ShellSettings.user()
        self.autostart = autostart or Autostart()
        self._open_url = open_url
        tray_ok = QSystemTrayIcon.isSystemTrayAvailable() if use_tray is None else use_tray
        self.events = EventBridge(runtime.service.events, self)
        self.window = MainWindow(
            runtime.service,
            events=self.events,
            settings=self.settings,
            url=runtime.url,
            workspace=runtime.paths_root(),
            specs=specs,
            hide_on_close=tray_ok,
        )
        self.window.setWindowIcon(app_icon())
        self.tray: TrayIcon | None = None
        if tray_ok:
            self.tray = self._build_tray()
        else:
            log.warning("no system tray available: running window-only (closing it quits)")
            self.window.status.set_note(NO_TRAY_NOTE)
        self.window.quit_requested.connect(self.quit)
        self.window.hidden_to_tray.connect(self._hidden_to_tray)
        self.window.status_read.connect(self._status_read)
        runtime.on_ready(self.window.start_refreshing)

    def _build_tray(self) -> TrayIcon:
        tray = TrayIcon(self, autostart=self.autostart.enabled)
        tray.open_chosen.connect(self.show_window)
        tray.search_chosen.connect(self.search)
        tray.pause_chosen.connect(self.set_paused)
        tray.workspace_chosen.connect(self.open_workspace)
        tray.autostart_chosen.connect(self.set_autostart)
        tray.quit_chosen.connect(self.quit)
        self.events.event_published.connect(self._event_published)
        return tray

    def show(self) -> None:
        """Show the tray icon (when there is a tray) and the window."""
        if self.tray is not None:
            self.tray.show()
        self.show_window()

    def show_window(self) -> None:
        """Show, raise and activate the window (tray, a second instance)."""
        if self.window.isMinimized():
            self.window.showNormal()
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()

    def search(self) -> None:
        """ "Search Memory…": the window with the command palette open."""
        self.show_window()
        self.window.open_palette()

    def set_paused(self, paused: bool) -> None:
        """Pause or resume the workers (off the GUI thread); the tray follows the result."""
        pipeline = self.service.pipeline
        self.window.tasks.call(
            pipeline.pause if paused else pipeline.resume,
            done=self._pipeline_changed,
            failed=lambda exc: self.window.show_failure(f"Could not pause/resume: {exc}"),
        )

    def open_workspace(self) -> None:
        root = self.runtime.paths_root()
        if not self._open_url(QUrl.fromLocalFile(root)):
            self.window.show_failure(f"Could not open the workspace folder {root}")

    def set_autostart(self, enabled: bool) -> None:
        try:
            self.autostart.set(enabled)
        except OSError as exc:
            self.window.show_failure(f"Could not change start at login: {exc}")
        if self.tray is not None:
            self.tray.set_autostart(self.autostart.enabled)

    def quit(self) -> None:
        """Stop the daemon; the process exits when the server has shut down."""
        self.window.status.set_state_text("stopping…")
        self.runtime.request_stop()

    def close(self) -> None:
        """Tear down the widgets (after the server stopped)."""
        self.window.shutdown()
        self.events.close()
        if self.tray is not None:
            self.tray.hide()
        self.window.hide()
        self.window.deleteLater()

    def _pipeline_changed(self, status: PipelineStatus) -> None:
        if self.tray is not None:
            self.tray.set_paused(status.mode == "paused")
        self.window.refresh_status()

    def _status_read(self, view: StatusView) -> None:
        if self.tray is not None:
            self.tray.show_state(tray_state(view), view.facts.paused)

    def _event_published(self, event: Event) -> None:
        if self.tray is not None:
            self.tray.note_event(event)

    def _hidden_to_tray(self) -> None:
        if self.tray is None or self.settings.tray_notice_shown():
            return
        self.tray.notify(
            "closed",
            f"{APP_NAME} is still running",
            "The memory daemon keeps running in the tray. Quit from the tray menu.",
        )
        self.settings.set_tray_notice_shown()


def run_desktop(options: RuntimeOptions) -> int:
    """The default `signet-desktop` process. Returns the exit code."""
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else APP_NAME])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)
    env = os.environ if options.env is None else options.env
    instance_name = server_name(resolve_workspace(options.workspace, env))
    if ask_running_instance(instance_name):  # before the lock: the running one shows itself
        print(
            f"{APP_NAME} is already running on this workspace: showed its window", file=sys.stderr
        )
        return EXIT_OK
    apply_style(app, ShellSettings.user().theme())
    if options.worker_host is None:  # workers run in QThreads under the app
        options = dataclasses.replace(options, worker_host=QtWorkerHost)
    options = dataclasses.replace(options, defer_app=True)  # the HTTP app after the window
    return run_runtime(
        options,
        lambda runtime: _run_shell(app, runtime, InstanceServer(instance_name)),
        failed=lambda exc: _show_startup_error(app, exc),
    )


def _run_shell(app: QApplication, runtime: DaemonRuntime, instance: InstanceServer) -> int:
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    shell = DesktopShell(runtime)
    instance.focus_requested.connect(shell.show_window)
    instance.listen()  # we hold the workspace lock: a stale socket file is ours to remove
    shell.show()

    async def window_then_daemon() -> int:
        # The window paints before the HTTP app is built and the server (then the warm-ups)
        # start. Start-up makes ~64k long-lived objects (modules, Qt wrappers, the HTTP app);
        # a full collection walking them stalled the GUI thread 34-88 ms (bench/gui_stall.py).
        # Frozen, later collections only walk what came after: once the window painted, and
        # again once the HTTP app (built in serve()) is up.
        await first_paint(shell.window)
        _freeze_heap()
        runtime.on_ready(_freeze_heap)
        return await runtime.serve()  # a stop asked while waiting: serve() returns at once

    try:
        # The signal handlers cover the wait for the paint too (a SIGTERM then stops cleanly).
        result: int = loop.run_until_complete(
            serve_with_signals(window_then_daemon, runtime.request_stop)
        )
        return result
    finally:
        instance.close()
        shell.close()
        _finish_pending_tasks(loop)
        loop.close()
        asyncio.set_event_loop(None)


def _freeze_heap() -> None:
    gc.collect()
    gc.freeze()


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
