"""The real window under Xvfb (xcb): every pane at a laptop's and a desktop's size.

Runs `scripts/window_tour.py` on a virtual X display as its own process: real fonts and a
real xcb window, panes switched by their shortcuts with real key events. It fails on a pane
that does not show, a window that grows past the asked size, anything cut off, a shortcut
two actions claim, a switch that holds the GUI thread over 500 ms of CPU, or any error
logged. CI installs Xvfb (`.ci/run` sets SIGNET_TEST_REQUIRE_XVFB=1, so a missing Xvfb is a
failure there, not a skip).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.xvfb import x_env, xvfb_run

from signet_desktop.ui.pane import discover_panes

pytestmark = [pytest.mark.gui, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
SIZES = ("1024x640", "1600x1000")


def test_every_pane_at_laptop_and_desktop_size_on_a_real_x_display(tmp_path: Path) -> None:
    env = x_env(tmp_path)
    tour = subprocess.run(
        [xvfb_run(), "-a", "-s", "-screen 0 1600x1000x24", sys.executable,
         str(REPO / "scripts" / "window_tour.py"), "--sizes", ",".join(SIZES)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    report = tour.stdout + tour.stderr
    assert tour.returncode == 0, report
    assert "platform: xcb" in report and "tour: ok" in report, report
    for size in SIZES:
        assert size.replace("x", "×") + ":" in report, report
    shown = [line.split()[0] for line in tour.stdout.splitlines() if line.endswith("  ok")]
    assert sorted(shown) == sorted([spec.key for spec in discover_panes()] * len(SIZES)), report
