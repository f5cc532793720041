"""Tray, icon and the desktop shell over a real (in-process) daemon runtime."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtWidgets import QSystemTrayIcon
from pytestqt.qtbot import QtBot

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions, ServeContext
from signet_desktop.ui.app import DesktopShell
from signet_desktop.ui.icon import ICON_FILE, app_icon, resources_dir
from signet_desktop.ui.tray import TrayIcon
from tests.e2e.launcher import Launcher, clean_env, no_traceback

pytestmark = pytest.mark.gui


def test_icon_comes_from_the_svg(qtbot: QtBot) -> None:
    directory = resources_dir()
    assert directory is not None and (directory / ICON_FILE).is_file()
    icon = app_icon()
    assert not icon.isNull()
    assert not icon.pixmap(32, 32).isNull()


def test_tray_menu_emits_open_and_quit(qtbot: QtBot) -> None:
    tray = TrayIcon(app_icon(), "Signet Desktop")
    assert [a.text() for a in tray.menu.actions() if a.text()] == ["Open Signet Desktop", "Quit"]
    with qtbot.waitSignal(tray.open_chosen, timeout=1000):
        tray.open_action.trigger()
    with qtbot.waitSignal(tray.open_chosen, timeout=1000):
        tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.waitSignal(tray.quit_chosen, timeout=1000):
        tray.quit_action.trigger()


def _no_app(context: ServeContext) -> Any:
    return None  # the shell never serves in this test


@pytest.mark.parametrize("use_tray", [True, False])
def test_shell_quit_asks_the_runtime_to_stop(qtbot: QtBot, tmp_path: Path, use_tray: bool) -> None:
    options = RuntimeOptions(
        app_factory=_no_app, workspace=str(tmp_path), port=0, env={}, log_to_stderr=False
    )
    runtime = DaemonRuntime(options)
    runtime.open()
    try:
        shell = DesktopShell(runtime, use_tray=use_tray)
        qtbot.addWidget(shell.window)
        shell.show()
        assert shell.window.isVisible()
        assert shell.window.url_label.text() == runtime.url
        assert (shell.tray is not None) is use_tray
        if shell.tray is not None:
            shell.tray.quit_chosen.emit()
        else:
            shell.window.close()  # no tray: closing the window is quitting
        assert shell.window.state_label.text() == "stopping"
        shell.close()
    finally:
        runtime.close()
    assert runtime.stop_requested


@pytest.mark.slow
def test_desktop_process_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`signet-desktop` without --headless: Qt offscreen, same daemon, same clean stop."""
    launch = Launcher(tmp_path)
    env = clean_env(launch.home, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    try:
        daemon = launch.start(
            "--workspace", str(tmp_path / "ws"), "--port", "0", env=env, headless=False
        )
        url = daemon.wait_listening()
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/health").status_code == 200
            stored = client.post("/api/memory/remember", json={"content": "Qt shell works."})
            assert stored.status_code == 200
            status = client.get("/api/status").json()
        assert status["runtime"]["mode"] == "desktop"
        pid = json.loads((tmp_path / "ws" / ".daemon" / "pid").read_text())["pid"]
        assert pid == daemon.proc.pid
        assert daemon.signal(signal.SIGTERM) == 0
        no_traceback(daemon.stderr())
        assert not (tmp_path / "ws" / ".daemon" / "pid").exists()
    finally:
        launch.cleanup()
