"""Start the headless daemon where PySide6 cannot be imported, ask /health, stop it cleanly.

    uv run python scripts/headless_without_qt.py

Servers and CI machines run `signet-desktop --headless` without Qt. This puts a `PySide6`
(and `shiboken6`, `qasync`) first on the daemon's import path that refuses to import, so any
Qt import on the headless path fails the run. `.ci/run` calls it after the tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PREFIX = "Signet Desktop listening on "
BLOCKED = ("PySide6", "shiboken6", "qasync")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="signet-noqt-") as tmp:
        shim = Path(tmp) / "shim"
        for name in BLOCKED:
            (shim / name).mkdir(parents=True)
            (shim / name / "__init__.py").write_text(
                f"raise ImportError('{name} is not installed (headless check)')\n"
            )
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
        env.update(PYTHONPATH=str(shim), HOME=tmp, PYTHONUNBUFFERED="1")
        command = [sys.executable, "-m", "signet_desktop.main", "--headless"]
        command += ["--workspace", str(Path(tmp) / "ws"), "--port", "0"]
        proc = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        url = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(PREFIX):
                url = line.removeprefix(PREFIX).split()[0]
        if url is None:
            proc.kill()
            print(f"the daemon did not start without Qt:\n{proc.stderr.read()}", file=sys.stderr)
            return 1
        with urllib.request.urlopen(f"{url}/health", timeout=10) as answer:
            health = answer.read().decode()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
        errors = proc.stderr.read()
        if code != 0 or "Traceback" in errors or '"status":"healthy"' not in health:
            print(f"exit {code}, /health {health}\n{errors}", file=sys.stderr)
            return 1
        print(f"headless daemon without Qt: /health {health}; stopped with exit {code}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
