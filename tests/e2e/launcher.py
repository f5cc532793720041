"""Helpers that start the real `signet-desktop` process and read its listening line."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LISTENING_PREFIX = "Signet Desktop listening on "
# Bounds against a hang, not speed checks (bench/ measures start and quit): under load 10–13
# on two cores a start (the desktop one imports Qt too; seen past 30 s) or a clean stop
# (workers, start-up tasks, the database) takes many times its quiet time.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0
HARNESS_TIMEOUT_S = 600.0  # per test that runs a real harness binary (pytest-timeout)


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The test's environment minus any SIGNET_* setting, with HOME pointed at `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGNET_")}
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass
class DaemonProcess:
    """One running `signet-desktop` child; stderr goes to a file so it can never block."""

    proc: subprocess.Popen[str]
    stderr_path: Path
    url: str = ""
    first_line: str = ""
    exit_code: int | None = None
    _lines: list[str] = field(default_factory=list)

    def wait_listening(self, timeout: float = START_TIMEOUT) -> str:
        """Read stdout until the listening line; fail with stderr if the process exits."""
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not selector.select(timeout=0.1):
                    continue
                line = self.proc.stdout.readline()
                if not line:  # EOF: the process ended before listening
                    self.proc.wait(STOP_TIMEOUT)
                    pytest.fail(f"daemon exited {self.proc.returncode}: {self.stderr()}")
                self._lines.append(line)
                if line.startswith(LISTENING_PREFIX):
                    self.first_line = line.strip()
                    self.url = self.first_line.removeprefix(LISTENING_PREFIX).split(" ")[0]
                    return self.url
        finally:
            selector.close()
        pytest.fail(f"daemon did not listen within {timeout}s: {self.stderr()}")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def signal(self, sig: int = signal.SIGTERM) -> int:
        """Send `sig` and wait for the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait()

    def wait(self, timeout: float = STOP_TIMEOUT) -> int:
        self.exit_code = self.proc.wait(timeout)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.exit_code


@dataclass
class Launcher:
    """Starts daemons in one test; kills whatever is still running at the end."""

    tmp_path: Path
    started: list[DaemonProcess] = field(default_factory=list)

    @property
    def home(self) -> Path:
        path = self.tmp_path / "home"
        path.mkdir(exist_ok=True)
        return path

    def start(
        self, *args: str, env: dict[str, str] | None = None, headless: bool = True
    ) -> DaemonProcess:
        command = [sys.executable, "-m", "signet_desktop.main"]
        command += ["--headless"] if headless else []
        command += list(args)
        stderr_path = self.tmp_path / f"stderr-{len(self.started)}.txt"
        with stderr_path.open("w") as stderr:
            proc = subprocess.Popen(
                command,
                cwd=REPO_ROOT,
                env=env or clean_env(self.home),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        daemon = DaemonProcess(proc, stderr_path)
        self.started.append(daemon)
        return daemon

    def run_to_exit(self, *args: str, env: dict[str, str] | None = None) -> DaemonProcess:
        """Start a process that is expected to refuse to start; wait for its exit."""
        daemon = self.start(*args, env=env)
        daemon.wait(START_TIMEOUT)
        return daemon

    def cleanup(self) -> None:
        for daemon in self.started:
            if daemon.proc.poll() is None:
                daemon.proc.kill()
                daemon.proc.wait(STOP_TIMEOUT)
            if daemon.proc.stdout is not None and not daemon.proc.stdout.closed:
                daemon.proc.stdout.close()


def no_traceback(text: str) -> None:
    assert "Traceback" not in text, text


def args_for(workspace: Path, *extra: str) -> Sequence[str]:
    return ("--workspace", str(workspace), "--port", "0", *extra)
