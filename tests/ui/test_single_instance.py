"""One desktop app per workspace: a second start focuses the first and exits 0."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalServer
from pytestqt.qtbot import QtBot

from signet_desktop.ui.single_instance import InstanceServer, ask_running_instance, server_name
from tests.e2e.launcher import Launcher, args_for, clean_env, no_traceback

pytestmark = pytest.mark.gui

FOCUS_LOG = "another signet-desktop started on this workspace"


def test_the_name_is_per_workspace_and_stable(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    name = server_name(tmp_path / "a")
    assert name == server_name(tmp_path / "a")
    assert name == server_name(tmp_path / "link")  # the same directory, however reached
    assert name != server_name(tmp_path / "b")
    assert name.startswith("signet-desktop-") and len(name) < 64  # fits a socket path


def test_nobody_listening_means_start_normally(tmp_path: Path, qtbot: QtBot) -> None:
    started = time.monotonic()
    assert not ask_running_instance(server_name(tmp_path / "nobody"))
    assert time.monotonic() - started < 1.0


def test_a_second_start_asks_the_first_to_show_its_window(tmp_path: Path, qtbot: QtBot) -> None:
    name = server_name(tmp_path / "ws")
    server = InstanceServer(name)
    assert server.listen() and server.listening
    focused: list[bool] = []
    server.focus_requested.connect(lambda: focused.append(True))
    try:
        # Both ends on this thread: the asking side's local event loop serves the server too.
        assert ask_running_instance(name)
        assert focused == [True] and server.requests == 1
        assert ask_running_instance(name)
        assert server.requests == 2
    finally:
        server.close()
    assert not ask_running_instance(name)  # closed: the next start runs normally


def test_an_instance_that_never_answers_is_not_taken_for_focused(
    tmp_path: Path, qtbot: QtBot
) -> None:
    name = server_name(tmp_path / "ws")
    QLocalServer.removeServer(name)
    mute = QLocalServer()
    assert mute.listen(name)  # accepts, reads nothing, says nothing
    try:
        started = time.monotonic()
        assert not ask_running_instance(name, timeout_ms=300)
        assert time.monotonic() - started < 2.0
    finally:
        mute.close()


def test_a_stale_socket_of_a_crashed_instance_does_not_block_listening(
    tmp_path: Path, qtbot: QtBot
) -> None:
    name = server_name(tmp_path / "ws")
    crashed = InstanceServer(name)
    assert crashed.listen()
    # A killed process leaves its socket file behind; the next instance (holding the lock)
    # replaces it.
    replacement = InstanceServer(name)
    try:
        assert replacement.listen()
    finally:
        replacement.close()
        crashed.close()


@pytest.mark.slow
def test_second_desktop_process_focuses_the_first_and_exits_zero(tmp_path: Path) -> None:
    launch = Launcher(tmp_path)
    env = clean_env(
        launch.home,
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        XDG_CONFIG_HOME=str(launch.home / ".config"),
    )
    workspace = tmp_path / "ws"
    try:
        first = launch.start(*args_for(workspace), env=env, headless=False)
        first.wait_listening()
        started = time.monotonic()
        second = launch.start(*args_for(workspace), env=env, headless=False)
        assert second.wait(15) == 0
        assert time.monotonic() - started < 15
        assert "already running on this workspace: showed its window" in second.stderr()
        deadline = time.monotonic() + 5
        while FOCUS_LOG not in first.stderr() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert FOCUS_LOG in first.stderr()
        log_file = workspace / ".daemon" / "logs" / "daemon.log"
        assert FOCUS_LOG in log_file.read_text(encoding="utf-8")
        headless = launch.run_to_exit(*args_for(workspace), env=env)  # today's lock behaviour
        assert headless.exit_code == 1
        assert "already running" in headless.stderr()
        assert first.signal() == 0
        no_traceback(first.stderr())
        no_traceback(second.stderr())
    finally:
        launch.cleanup()
