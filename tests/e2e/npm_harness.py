"""The real harness binaries from npm for end-to-end tests: found, version-checked, or skipped.

`.ci/run` installs each pinned npm package under `$HOME/.cache/signet-desktop/` and exports
the binary's path in an environment variable; on a developer machine without it the tests
that need it skip with the command that installs it (in CI they fail instead: a CI run must
exercise the real binary).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.launcher import DaemonProcess, Launcher, args_for, clean_env

# The user's own PATH: no virtualenv, no `uv run` (the installed commands must not need one).
USER_PATH = "/usr/local/bin:/usr/bin:/bin"
RUN_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class NpmBinary:
    """One pinned npm package and the binary it ships."""

    package: str
    version: str
    command: str  # the name on PATH and in node_modules/.bin
    bin_env: str  # the variable .ci/run sets to the binary's path
    cache_name: str  # .ci/run's prefix: ~/.cache/signet-desktop/<cache_name>-<version>

    def find(self) -> str:
        """The pinned binary, or a skip (a failure in CI) saying how to get it."""
        cached = (
            Path.home()
            / ".cache"
            / "signet-desktop"
            / f"{self.cache_name}-{self.version}"
            / "node_modules"
            / ".bin"
            / self.command
        )
        candidates = [os.environ.get(self.bin_env, "").strip(), str(cached)]
        candidates.append(shutil.which(self.command) or "")
        found = ""
        for path in filter(None, candidates):
            if not Path(path).is_file():
                continue
            found = found or path
            version = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=60, check=False
            ).stdout.strip()
            if version.split()[-1:] == [self.version]:
                return path
        if found:
            reason = f"{found} is not {self.package} {self.version}"
        else:
            reason = f"the real {self.command} binary ({self.package}) is not installed"
        hint = (
            f"{reason}; install it with `npm install --prefix"
            f" ~/.cache/signet-desktop/{self.cache_name}-{self.version}"
            f" {self.package}@{self.version}` (or set {self.bin_env} to its"
            f" node_modules/.bin/{self.command}; .ci/run does both)"
        )
        if os.environ.get("CI"):
            pytest.fail(hint)
        pytest.skip(hint)


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def run(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float = RUN_TIMEOUT_S
) -> Run:
    """Run one harness command to its end, stdin closed, output kept."""
    started = time.monotonic()
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def base_env(home: Path, path: str = USER_PATH, **extra: str) -> dict[str, str]:
    """A user's plain environment in `home`: no SIGNET_* setting, no virtualenv on PATH."""
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR", "TERM")}
    return {**keep, "HOME": str(home), "PATH": path, **extra}


def signet_cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`signet ...` as `uv run signet` runs it: this environment's script, its PATH."""
    script = Path(sys.executable).with_name("signet")
    env = clean_env(home, PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    return subprocess.run(
        [str(script), *argv], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def start_daemon(launcher: Launcher, workspace: Path) -> DaemonProcess:
    """A test daemon on a free port, listening."""
    daemon = launcher.start(*args_for(workspace), env=clean_env(launcher.home))
    daemon.wait_listening()
    return daemon


def hook_log_reasons(home: Path) -> list[str]:
    """The reason on each line `signet hook` logged under `home`'s default workspace."""
    log = home / ".agents" / ".daemon" / "logs" / "hooks.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [line.split(" harness=", 1)[-1].split(" ", 1)[-1] for line in lines]


def failed_open_at_once(home: Path) -> bool:
    """Every hook that ran met the refused connection and skipped at once: none waited out
    its request timeout ("did not answer within …") or was killed before it logged."""
    reasons = hook_log_reasons(home)
    return bool(reasons) and all(reason == "daemon not running, hook skipped" for reason in reasons)
