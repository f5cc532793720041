"""The desktop shell over a real (in-process) daemon runtime: tray actions, states, the process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from signet_desktop.daemon.runtime import DaemonRuntime, RuntimeOptions, ServeContext
from signet_desktop.domain.events import JobDead, WorkerStateChanged
from signet_desktop.ui.app import NO_TRAY_NOTE, DesktopShell
from signet_desktop.ui.autostart import Autostart
from signet_desktop.ui.icon import ICON_FILE, app_icon, resources_dir
from signet_desktop.ui.settings import ShellSettings
from tests.e2e.launcher import Launcher, clean_env, no_traceback
from tests.ui.test_main_window import SPECS

pytestmark = pytest.mark.gui


def test_icon_comes_from_the_svg(qtbot: QtBot) -> None:
    directory = resources_dir()
    assert directory is not None and (directory / ICON_FILE).is_file()
    icon = app_icon()
    assert not icon.isNull()
    assert not icon.pixmap(32, 32).isNull()


def _no_app(context: ServeContext) -> Any:
    return None  # the shell never serves in this test


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[DaemonRuntime]:
    options = RuntimeOptions(
        app_factory=_no_app, workspace=str(tmp_path / "ws"), port=0, env={}, log_to_stderr=False
    )
    opened = DaemonRuntime(options)
    opened.open()
    yield opened
    opened.close()


class Shells:
    """Builds shells with settings, autostart and URL opening kept under tmp."""

    def __init__(self, qtbot: QtBot, runtime: DaemonRuntime, tmp_path: Path) -> None:
        self.qtbot = qtbot
        self.runtime = runtime
        self.settings_path = tmp_path / "settings.ini"
        self.autostart = Autostart(tmp_path / "autostart")
        self.opened: list[QUrl] = []
        self.built: list[DesktopShell] = []

    def make(self, *, use_tray: bool, open_ok: bool = True) -> DesktopShell:
        def open_url(url: QUrl) -> bool:
            self.opened.append(url)
            return open_ok

        shell = DesktopShell(
            self.runtime,
            use_tray=use_tray,
            settings=ShellSettings.at(self.settings_path),
            specs=SPECS,
            autostart=self.autostart,
            open_url=open_url,
        )
        self.qtbot.addWidget(shell.window)
        self.built.append(shell)
        return shell

    def close(self) -> None:
        for shell in self.built:
            shell.close()


@pytest.fixture
def shells(
    qtbot: QtBot, runtime: DaemonRuntime, tmp_path: Path, qt_loop: asyncio.AbstractEventLoop
) -> Iterator[Shells]:
    made = Shells(qtbot, runtime, tmp_path)
    yield made
    made.close()


@pytest.mark.parametrize("use_tray", [True, False])
def test_shell_quit_asks_the_runtime_to_stop(shells: Shells, use_tray: bool) -> None:
    shell = shells.make(use_tray=use_tray)
    shell.show()
    assert shell.window.isVisible()
    assert shell.window.status.url_label.text() == shells.runtime.url
    assert (shell.tray is not None) is use_tray
    if shell.tray is not None:
        shell.tray.quit_action.trigger()
    else:
        shell.window.close()  # no tray: closing the window is quitting
    assert shell.window.status.state_label.text() == "stopping…"
    assert shells.runtime.stop_requested


def test_without_a_tray_the_window_says_so(shells: Shells) -> None:
    shell = shells.make(use_tray=False)
    shell.show()
    assert shell.window.status.note_label.text() == NO_TRAY_NOTE
    assert shell.window.status.note_label.isVisibleTo(shell.window)
    assert not shell.window.hide_on_close


def test_pause_and_resume_from_the_tray_reach_the_pipeline(
    shells: Shells, qt_loop: asyncio.AbstractEventLoop
) -> None:
    shell = shells.make(use_tray=True)
    tray = shell.tray
    assert tray is not None
    service = shells.runtime.service
    assert service is not None and not service.pipeline.paused
    assert tray.pause_action.text() == "Pause workers"
    tray.pause_action.trigger()
    qt_loop.run_until_complete(shell.window.tasks.wait_idle())
    assert service.pipeline.paused
    assert service.pipeline.status().mode == "paused"
    assert tray.pause_action.text() == "Resume workers"
    qt_loop.run_until_complete(shell.window.tasks.wait_idle())  # the status re-read
    assert tray.state.state == "paused"
    tray.pause_action.trigger()
    qt_loop.run_until_complete(shell.window.tasks.wait_idle())
    assert not service.pipeline.paused
    assert tray.pause_action.text() == "Pause workers"


def test_open_workspace_folder_opens_the_workspace(shells: Shells) -> None:
    shell = shells.make(use_tray=True)
    assert shell.tray is not None
    shell.tray.workspace_action.trigger()
    assert [url.toLocalFile() for url in shells.opened] == [shells.runtime.paths_root()]
    assert not shell.window.banner.isVisibleTo(shell.window)
    failing = shells.make(use_tray=True, open_ok=False)
    assert failing.tray is not None
    failing.tray.workspace_action.trigger()
    assert "Could not open the workspace folder" in failing.window.banner.text_label.text()


def test_start_at_login_toggles_the_autostart_entry(shells: Shells) -> None:
    shell = shells.make(use_tray=True)
    assert shell.tray is not None
    action = shell.tray.autostart_action
    assert not action.isChecked() and not shells.autostart.enabled
    action.trigger()
    assert shells.autostart.path.is_file()
    assert action.isChecked()
    again = shells.make(use_tray=True)  # a later start shows the entry as it is on disk
    assert again.tray is not None and again.tray.autostart_action.isChecked()
    action.trigger()
    assert not shells.autostart.path.exists() and not action.isChecked()


def test_search_memory_opens_the_window_with_the_palette(shells: Shells, qtbot: QtBot) -> None:
    shell = shells.make(use_tray=True)
    assert shell.tray is not None
    assert not shell.window.isVisible()
    shell.tray.search_action.trigger()
    assert shell.window.isVisible()
    assert shell.window.command_palette.isVisible()
    shell.tray.open_action.trigger()
    assert shell.window.isVisible()


def test_closing_to_the_tray_notifies_once_ever(shells: Shells) -> None:
    shell = shells.make(use_tray=True)
    assert shell.tray is not None
    shell.show()
    shell.window.close()
    assert not shell.window.isVisible() and not shells.runtime.stop_requested
    assert [kind for kind, _, _ in shell.tray.notices] == ["closed"]
    shell.show_window()
    shell.window.close()
    assert [kind for kind, _, _ in shell.tray.notices] == ["closed"]
    later = shells.make(use_tray=True)  # remembered in the settings file
    assert later.tray is not None
    later.show()
    later.window.close()
    assert later.tray.notices == []


def test_tray_state_follows_the_status_the_window_reads(
    shells: Shells, qt_loop: asyncio.AbstractEventLoop
) -> None:
    shell = shells.make(use_tray=True)
    tray = shell.tray
    assert tray is not None
    shell.window.refresh_status()
    qt_loop.run_until_complete(shell.window.tasks.wait_idle())
    assert tray.state.state in ("healthy", "working")
    assert "Signet Desktop" in tray.toolTip()
    service = shells.runtime.service
    assert service is not None

    async def crash() -> None:
        shell.window.start_refreshing()
        await shell.window.tasks.wait_idle()
        # What the worker host publishes when a worker dies (the status board follows it).
        await asyncio.to_thread(
            service.events.publish,
            WorkerStateChanged(worker="embedding", state="crashed", error="boom"),
        )
        for _ in range(100):
            if tray.state.state == "error":
                break
            await asyncio.sleep(0.05)
        await shell.window.tasks.wait_idle()

    qt_loop.run_until_complete(crash())
    assert tray.state.state == "error"
    assert tray.state.reason == "Needs attention: worker embedding crashed: boom · 0 memories"
    assert "worker embedding crashed: boom" in tray.toolTip()
    kinds = [kind for kind, _, _ in tray.notices]
    assert kinds.count("worker.crashed") == 1 and kinds.count("error") == 1
    service.events.publish(JobDead(job_id="j1", job_type="document_ingest", worker=None, error="x"))
    qt_loop.run_until_complete(asyncio.sleep(0.1))
    assert [kind for kind, _, _ in tray.notices].count("job.dead") == 1


@pytest.mark.slow
def test_desktop_process_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`signet-desktop` without --headless: Qt offscreen, same daemon, same clean stop."""
    launch = Launcher(tmp_path)
    env = clean_env(
        launch.home,
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        XDG_CONFIG_HOME=str(launch.home / ".config"),  # QSettings stay under tmp
    )
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
