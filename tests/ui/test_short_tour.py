"""A short scripted tour of the real window under Xvfb (xcb), with work going on behind it.

Runs `bench/tour.py --minutes 0.5` as its own process on a virtual X display: every pane by
its shortcut and by the rail, queries typed into Recall and Transcripts, a hit opened, the
Ctrl+K palette, Dreaming's Details, Settings scrolled through, the window resized, while an
agent's hooks write memories and Claude Code sessions are imported. It fails on any
traceback or uncaught exception (logged, in a thread, in a slot, in the workspace's log).
The ten-minute run of the same tour is in docs/BENCHMARKS.md.
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


@pytest.mark.timeout(180)
def test_half_a_minute_of_a_person_and_an_agent_leaves_no_traceback(tmp_path: Path) -> None:
    tour = subprocess.run(
        [xvfb_run(), "-a", "-s", "-screen 0 1600x1000x24", sys.executable,
         str(REPO / "bench" / "tour.py"), "--minutes", "0.5", "--count", "120"],
        env=x_env(tmp_path), capture_output=True, text=True, timeout=170, check=False,
    )  # fmt: skip
    report = tour.stdout + tour.stderr
    assert tour.returncode == 0, report
    assert "platform: xcb" in report and "tour: ok" in report, report
    [visits] = [line for line in tour.stdout.splitlines() if line.startswith("visits: ")]
    for spec in discover_panes():
        assert f"'{spec.key}'" in visits, f"{spec.key} was not visited\n{report}"
