"""The real Claude Code binary for end-to-end tests, run offline against a scripted model.

`.ci/run` installs the pinned npm package and exports SIGNET_TEST_CLAUDE_BIN; on a developer
machine without it the tests that need it skip with the command that installs it (in CI they
fail instead: a CI run must exercise the real binary).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

CLAUDE_CODE_VERSION = "2.1.197"  # keep in step with .ci/run
BIN_ENV = "SIGNET_TEST_CLAUDE_BIN"
# The user's own PATH: no virtualenv, no `uv run` (the installed commands must not need one).
USER_PATH = "/usr/local/bin:/usr/bin:/bin"
OFFLINE_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
RUN_TIMEOUT_S = 120.0


def claude_binary() -> str:
    """The pinned Claude Code binary, or a skip (a failure in CI) saying how to get it."""
    path = os.environ.get(BIN_ENV, "").strip() or shutil.which("claude") or ""
    if path and Path(path).is_file():
        version = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
        if version.startswith(CLAUDE_CODE_VERSION):
            return path
        reason = f"{path} is Claude Code {version.strip()!r}, the tests pin {CLAUDE_CODE_VERSION}"
    else:
        reason = "the real Claude Code binary is not installed"
    hint = (
        f"{reason}; install it with `npm install --prefix ~/.cache/signet-desktop/claude-code"
        f" @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}` and set {BIN_ENV} to its"
        " node_modules/.bin/claude (.ci/run does both)"
    )
    if os.environ.get("CI"):
        pytest.fail(hint)
    pytest.skip(hint)


@dataclass(frozen=True)
class ClaudeRun:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass(frozen=True)
class ClaudeCode:
    """`claude` in a temp HOME, pointed at a model server, from the user's plain PATH."""

    binary: str
    home: Path
    model_url: str

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR", "TERM")}
        return {
            **keep,
            **OFFLINE_ENV,
            "HOME": str(self.home),
            "PATH": USER_PATH,
            "ANTHROPIC_BASE_URL": self.model_url,
        }

    def run(self, cwd: Path, *args: str) -> ClaudeRun:
        import time

        started = time.monotonic()
        done = subprocess.run(
            [self.binary, *args],
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        return ClaudeRun(done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def prompt(self, cwd: Path, text: str) -> ClaudeRun:
        """`claude -p TEXT` as a user runs it (one session, then exit)."""
        return self.run(cwd, "-p", text, "--model", "claude-sonnet-4-5")


def hook_error_lines(text: str) -> list[str]:
    """Lines where Claude Code reports a hook (or our hook command) failing."""
    lines = []
    for line in text.splitlines():
        low = line.lower()
        if "[signet]" in low or ("hook" in low and ("fail" in low or "error" in low)):
            lines.append(line)
    return lines
