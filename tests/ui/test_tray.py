"""The tray icon: menu, states with reasons, rate-limited notifications, the autostart entry."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QSystemTrayIcon
from pytestqt.qtbot import QtBot

from signet_desktop.domain.events import JobDead, MemoryCreated, WorkerStateChanged
from signet_desktop.ui.autostart import ENTRY, ENTRY_NAME, Autostart, autostart_dir
from signet_desktop.ui.icon import TRAY_STATES, tray_icon
from signet_desktop.ui.status_view import TrayState
from signet_desktop.ui.tray import NOTIFY_INTERVAL_S, TrayIcon
from tests.e2e.launcher import REPO_ROOT

pytestmark = pytest.mark.gui


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_menu_has_every_action_and_emits_what_was_chosen(qtbot: QtBot) -> None:
    tray = TrayIcon()
    labels = [a.text() for a in tray.menu.actions() if a.text()]
    assert labels == [
        "Open Inspector",
        "Search Memory…",
        "Pause workers",
        "Open workspace folder",
        "Start at login",
        "Quit",
    ]
    with qtbot.waitSignal(tray.open_chosen, timeout=1000):
        tray.open_action.trigger()
    with qtbot.waitSignal(tray.open_chosen, timeout=1000):
        tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.waitSignal(tray.search_chosen, timeout=1000):
        tray.search_action.trigger()
    with qtbot.waitSignal(tray.pause_chosen, timeout=1000) as pause:
        tray.pause_action.trigger()
    assert pause.args == [True]
    tray.set_paused(True)
    with qtbot.waitSignal(tray.pause_chosen, timeout=1000) as resume:
        tray.pause_action.trigger()
    assert resume.args == [False] and tray.pause_action.text() == "Resume workers"
    with qtbot.waitSignal(tray.workspace_chosen, timeout=1000):
        tray.workspace_action.trigger()
    with qtbot.waitSignal(tray.autostart_chosen, timeout=1000) as toggled:
        tray.autostart_action.trigger()
    assert toggled.args == [True]
    with qtbot.waitSignal(tray.quit_chosen, timeout=1000):
        tray.quit_action.trigger()


def test_every_state_has_its_own_icon_and_the_reason_is_in_the_tooltip(qtbot: QtBot) -> None:
    images = {state: tray_icon(state).pixmap(32, 32).toImage() for state in TRAY_STATES}
    assert all(not image.isNull() for image in images.values())
    assert len({bytes(image.constBits()) for image in images.values()}) == len(TRAY_STATES)
    tray = TrayIcon()
    tray.show_state(TrayState("degraded", "Degraded: vectors 40% (600 to go)"), paused=False)
    assert tray.toolTip() == "Signet Desktop\nDegraded: vectors 40% (600 to go)"
    assert tray.icon().pixmap(32, 32).toImage() == images["degraded"]
    tray.show_state(TrayState("paused", "workers paused"), paused=True)
    assert tray.pause_action.text() == "Resume workers"


def test_a_turn_for_the_worse_notifies_once_per_kind_per_minute(qtbot: QtBot) -> None:
    clock = Clock()
    tray = TrayIcon(clock=clock)
    tray.show_state(TrayState("error", "worker embedding crashed"), paused=False)
    tray.show_state(TrayState("healthy", "ready"), paused=False)
    tray.show_state(TrayState("error", "worker embedding crashed"), paused=False)
    assert [kind for kind, _, _ in tray.notices] == ["error"]  # flapping: still one
    tray.show_state(TrayState("working", "vectors 10%"), paused=False)
    clock.now += NOTIFY_INTERVAL_S + 1
    tray.show_state(TrayState("error", "the database does not answer"), paused=False)
    assert [msg for _, _, msg in tray.notices] == [
        "worker embedding crashed",
        "the database does not answer",
    ]
    tray.show_state(TrayState("working", "…"), paused=False)
    assert len(tray.notices) == 2  # getting better is not news


def test_failure_events_notify_rate_limited_and_others_do_not(qtbot: QtBot) -> None:
    clock = Clock()
    tray = TrayIcon(clock=clock)
    tray.note_event(MemoryCreated(memory_id="m", memory_type="fact", embedded=False))
    tray.note_event(WorkerStateChanged(worker="embedding", state="running"))
    assert tray.notices == []
    crashed = WorkerStateChanged(worker="embedding", state="crashed", error="model missing")
    tray.note_event(crashed)
    tray.note_event(crashed)
    dead = JobDead(job_id="j", job_type="embedding_backfill", worker="embedding", error="timeout")
    for _ in range(5):
        tray.note_event(dead)
    assert tray.notices == [
        ("worker.crashed", "A worker stopped", "embedding crashed: model missing"),
        ("job.dead", "Embedding backfill job failed", "timeout (Retry it in Queue)"),
    ]
    clock.now += NOTIFY_INTERVAL_S
    tray.note_event(dead)
    assert len(tray.notices) == 3


def test_autostart_writes_the_packaged_entry_and_removes_it(tmp_path: Path) -> None:
    packaged = REPO_ROOT / "packaging" / "linux" / "signet-desktop-autostart.desktop"
    assert packaged.read_text(encoding="utf-8") == ENTRY
    autostart = Autostart(tmp_path / "config" / "autostart")
    assert not autostart.enabled
    autostart.set(True)
    assert autostart.path == tmp_path / "config" / "autostart" / ENTRY_NAME
    assert autostart.path.read_bytes() == packaged.read_bytes()
    assert autostart.enabled
    autostart.set(True)  # idempotent
    assert sorted(p.name for p in autostart.directory.iterdir()) == [ENTRY_NAME]
    autostart.set(False)
    assert not autostart.path.exists() and not autostart.enabled
    autostart.disable()  # already gone: fine


def test_autostart_directory_follows_xdg_config_home(tmp_path: Path) -> None:
    assert autostart_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "autostart"
    assert autostart_dir({"HOME": str(tmp_path)}) == tmp_path / ".config" / "autostart"
