"""The real desktop app at its window's first paint: what it has imported, and a stop there.

The window must show before the heavy parts load: the HTTP app (FastAPI, Starlette, MCP) and
its server (uvicorn) are built after the first paint, pyqtgraph when the Map or Queue pane is
first shown, httpx at the first provider request or fetch, the embedding model (onnxruntime,
tokenizers, safetensors) by the warm-up after the window. The app runs in a subprocess, as
`signet-desktop` does, offscreen, on a fresh workspace; an event filter notes `sys.modules` at
the first paint of a widget in the main window and ends the process. Nothing here is timed.
A SIGTERM at that moment (the daemon not yet serving) stops the app cleanly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gui, pytest.mark.slow]

DEFERRED = (
    "fastapi",
    "starlette",
    "mcp",
    "uvicorn",
    "signet_desktop.api.http.app",
    "pyqtgraph",
    "httpx",
    "onnxruntime",
    "tokenizers",
    "safetensors",
    "umap",
    "numba",
)
MARK = "MODULES-AT-FIRST-PAINT "

PROBE = f"""
import os, signal, sys
from PySide6 import QtCore, QtWidgets

class Probe(QtCore.QObject):
    def eventFilter(self, obj, event):
        if (event.type() == QtCore.QEvent.Type.Paint and obj.isWidgetType()
                and isinstance(obj.window(), QtWidgets.QMainWindow)):
            QtWidgets.QApplication.instance().removeEventFilter(self)
            loaded = [name for name in {DEFERRED!r} if name in sys.modules]
            sys.stdout.write("{MARK}" + ",".join(loaded) + "\\n")
            sys.stdout.flush()
            if os.environ.get("PROBE_THEN") == "exit":
                os._exit(0)
            os.kill(os.getpid(), signal.SIGTERM)
        return False

class App(QtWidgets.QApplication):
    def __init__(self, *args):
        super().__init__(*args)
        self.probe = Probe()
        self.installEventFilter(self.probe)

QtWidgets.QApplication = App
from signet_desktop.main import main
sys.exit(main(sys.argv[1:]))
"""


def launch(tmp_path: Path, then: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the app until its first paint, then `then` ("exit" at once, or "term": SIGTERM)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SIGNET_", "QT_"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), PROBE_THEN=then)
    env["QT_QPA_PLATFORM"] = "offscreen"
    command = [sys.executable, "-c", PROBE, "--workspace", str(tmp_path / "ws"), "--port", "0"]
    done = subprocess.run(
        [*command, "--log-level", "warning"],
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    marks = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    assert marks, f"the window never painted (exit {done.returncode}): {done.stderr[-2000:]}"
    return done, [name for name in marks[0].removeprefix(MARK).split(",") if name]


def test_nothing_heavy_is_imported_before_the_window_paints(tmp_path: Path) -> None:
    _, loaded = launch(tmp_path, "exit")
    assert loaded == []


def test_a_sigterm_at_the_first_paint_stops_the_app_cleanly(tmp_path: Path) -> None:
    done, _ = launch(tmp_path, "term")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "ws" / ".daemon" / "pid").exists()  # cleanup ran
