"""Run one Dreaming pass through the user's agent harness (`executor: acpx`), bounded.

The harness (Claude Code, Codex or OpenCode) is started headless in an empty temporary
folder with the pass's system prompt and runbook, the evidence window on stdin, and one MCP
server: the daemon's `/mcp/dream`, which serves this pass's tools to the holder of its secret
(`dreaming/tool_sessions.py`). Its structured output is read as it comes
(`dreaming/harness_streams.py`): the model it ran, every tool it asked for (one the pass never
gave it is recorded as refused), its turns, and its end with usage and cost as the harness
reports them. The pass's bounds hold: at the deadline, on cancel or past the turn bound the
harness's whole process group is killed; the harness dies with the daemon (a parent-death
signal, and a watchdog for what it started), and a pid file lets start-up recovery kill what
a `kill -9` of the daemon left (`kill_leftovers`).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from signet_desktop.domain.dreaming import PassUsage
from signet_desktop.dreaming.harness_streams import (
    ClaudeStream,
    CodexStream,
    OpenCodeStream,
    RefuseTool,
    StreamReader,
    StreamState,
)
from signet_desktop.inference.harness_agent import MCP_SERVER_NAME, MCP_TOOL_PREFIX, HarnessAgent

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 4 * 1024 * 1024  # one stream-json event; longer is garbage
STDERR_TAIL = 2_000
POLL_S = 0.2
FORGET_TIMEOUT_S = 30.0
PR_SET_PDEATHSIG = 1


class HarnessFailed(Exception):
    """The harness could not finish the pass; the message is the pass's error."""


@dataclass(frozen=True, slots=True)
class HarnessResult:
    """How the harness ended: `completed` with its summary, or `cancelled`."""

    status: str  # completed | cancelled
    summary: str
    usage: PassUsage  # as the harness reported it (cost None: it did not)
    model: str | None
    turns: int


class Cancel(Protocol):
    def is_set(self) -> bool: ...


def run_harness(
    agent: HarnessAgent,
    *,
    system_prompt: str,
    prompt: str,
    tools_url: str,
    token: str,
    timeout_s: float,
    max_turns: int,
    refuse_tool: RefuseTool,
    cancel: Cancel | None = None,
    pid_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> HarnessResult:
    """Run the harness to its end (or the pass's bounds); HarnessFailed says why it failed."""
    base = env if env is not None else dict(os.environ)
    launch = agent.launch(system_prompt=system_prompt, tools_url=tools_url, token=token, env=base)
    argv, environ = launch.argv, {**base, **launch.env}
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="signet-dream-") as cwd:
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=environ,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group: killed whole
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )
        except OSError as exc:
            message = f"{agent.label} could not be started ({agent.binary}): {exc}"
            raise HarnessFailed(message) from None
        pid_file = _write_pid(pid_dir, process.pid, agent.binary)
        watchdog = _start_watchdog(process.pid)
        reader = _reader(agent, refuse_tool)
        stderr: list[bytes] = []
        threads = [
            threading.Thread(
                target=_read_stdout,
                args=(process.stdout, reader),
                name="harness-stdout",
                daemon=True,
            ),
            threading.Thread(
                target=_read_stderr,
                args=(process.stderr, reader, stderr),
                name="harness-stderr",
                daemon=True,
            ),
            threading.Thread(
                target=_feed, args=(process.stdin, prompt), name="harness-stdin", daemon=True
            ),
        ]
        for thread in threads:
            thread.start()
        try:
            ended = _wait(process, reader.state, deadline, max_turns, cancel)
        finally:
            _kill_group(process)
            _stop_watchdog(watchdog)
            for thread in threads:
                thread.join(timeout=5)
            for pipe in (process.stdin, process.stdout, process.stderr):
                with contextlib.suppress(OSError, ValueError):
                    if pipe is not None:
                        pipe.close()
            if pid_file is not None:
                pid_file.unlink(missing_ok=True)
        session = reader.state.session_id
        forget = agent.forget_command(session) if session else None
        if session and forget is not None:
            _forget_session(forget, session, cwd, environ)
    return _outcome(agent, ended, reader.state, process.returncode, b"".join(stderr), timeout_s)


def _forget_session(argv: list[str], session_id: str, cwd: str, env: dict[str, str]) -> None:
    """Delete the session the harness kept of the pass (OpenCode stores every run): the pass
    is no session of the user's. Bounded; a failure is logged, the pass stands."""
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        log.warning("cannot delete the harness session %s of a Dreaming pass", session_id)
        return
    try:
        if process.wait(timeout=FORGET_TIMEOUT_S) != 0:
            log.warning("the harness did not delete the Dreaming pass's session %s", session_id)
    except subprocess.TimeoutExpired:
        log.warning("the harness took too long deleting the session %s; stopped", session_id)
    finally:
        _kill_group(process)


def _reader(agent: HarnessAgent, refuse_tool: RefuseTool) -> StreamReader:
    if agent.kind == "codex":
        return CodexStream(refuse_tool, MCP_SERVER_NAME)
    if agent.kind == "opencode":
        return OpenCodeStream(refuse_tool, MCP_SERVER_NAME)
    return ClaudeStream(refuse_tool, MCP_TOOL_PREFIX)


def _wait(
    process: subprocess.Popen[bytes],
    stream: StreamState,
    deadline: float,
    max_turns: int,
    cancel: Cancel | None,
) -> str:
    """Poll until the harness exits or a bound is met: exited | timeout | cancelled | turns."""
    while True:
        try:
            process.wait(timeout=POLL_S)
            return "exited"
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            return "cancelled"
        if time.monotonic() >= deadline:
            return "timeout"
        if stream.turns > max_turns:
            return "turns"


def _outcome(
    agent: HarnessAgent,
    ended: str,
    stream: StreamState,
    returncode: int | None,
    stderr: bytes,
    timeout_s: float,
) -> HarnessResult:
    usage = stream.usage
    if ended == "timeout":
        raise HarnessFailed(f"pass timeout: {timeout_s:g} s elapsed ({agent.label} was stopped)")
    if ended == "cancelled":
        return HarnessResult("cancelled", "cancelled", usage, stream.model, stream.turns)
    if ended == "turns":
        return HarnessResult(
            "completed",
            f"(stopped at the {stream.turns - 1}-turn bound)",
            usage,
            stream.model,
            stream.turns,
        )
    if not stream.finished:
        told = stream.error or _tail(stderr) or "; ".join(stream.garbage) or "nothing"
        raise HarnessFailed(
            f"{agent.label} ended without a result (exit {returncode}; "
            f"{stream.garbage_count} unreadable output lines): {told}"
        )
    if stream.error is not None:
        raise HarnessFailed(f"{agent.label} reported an error: {stream.error}")
    if stream.tools_connected is False:
        raise HarnessFailed(
            f"{agent.label} could not connect to the pass's tools (/mcp/dream; "
            f"it reported: {stream.tools_status})"
        )
    return HarnessResult("completed", stream.summary, usage, stream.model, stream.turns)


# -- the stream ------------------------------------------------------------------------------


def _read_stdout(pipe: IO[bytes] | None, reader: StreamReader) -> None:
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        while line := pipe.readline(MAX_LINE_BYTES):
            reader.take(line)


def _read_stderr(pipe: IO[bytes] | None, reader: StreamReader, tail: list[bytes]) -> None:
    """Stderr line by line to the reader, keeping its last few KB for an error message."""
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        while line := pipe.readline(MAX_LINE_BYTES):
            reader.take_stderr(line)
            tail.append(line)
            while sum(len(c) for c in tail) > 4 * STDERR_TAIL and len(tail) > 1:
                tail.pop(0)


def _feed(pipe: IO[bytes] | None, prompt: str) -> None:
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        pipe.write(prompt.encode("utf-8"))
        pipe.close()


def _tail(stderr: bytes) -> str:
    return stderr.decode("utf-8", "replace").strip()[-STDERR_TAIL:]


# -- processes --------------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the thread that started it dies (the daemon)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# Run by the watchdog: kill the harness's process group when the daemon's end of its stdin
# closes without saying "done" (the daemon was killed). The parent-death signal reaches only
# the harness's first process; this reaches what it started (Codex's npm launcher on Node 20
# starts the native binary as a child, which would otherwise outlive the daemon).
_WATCHDOG = """\
import os, signal, sys
if sys.stdin.buffer.read() != b"done":
    try:
        os.killpg(int(sys.argv[1]), signal.SIGKILL)
    except OSError:
        pass
"""


def _start_watchdog(pgid: int) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(pgid)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the harness's group, nor killed with the daemon's
        )
    except OSError:
        log.warning("cannot start the harness watchdog; start-up recovery still kills leftovers")
        return None


def _stop_watchdog(watchdog: subprocess.Popen[bytes] | None) -> None:
    if watchdog is None or watchdog.stdin is None:
        return
    with contextlib.suppress(OSError, ValueError):
        watchdog.stdin.write(b"done")
        watchdog.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        watchdog.wait(timeout=5)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the harness and everything it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def _write_pid(pid_dir: Path | None, pid: int, binary: str) -> Path | None:
    if pid_dir is None:
        return None
    try:
        pid_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = pid_dir / f"{pid}.pid"
        path.write_text(json.dumps({"pid": pid, "binary": binary}), encoding="utf-8")
        return path
    except OSError:
        log.warning("cannot write the harness pid file in %s", pid_dir, exc_info=True)
        return None


def kill_leftovers(pid_dir: Path) -> int:
    """At start-up: kill the process groups of harnesses a killed daemon left; how many."""
    killed = 0
    for path in sorted(pid_dir.glob("*.pid")) if pid_dir.is_dir() else ():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
            pid = int(recorded["pid"])
            binary = str(recorded["binary"])
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)
            continue
        if _is_harness(pid, binary) or _group_runs_harness(pid, binary):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
                killed += 1
        path.unlink(missing_ok=True)
    return killed


def _is_harness(pid: int, binary: str) -> bool:
    """The pid still runs the harness (not a recycled pid of something else)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    name = Path(binary).name.encode()
    return any(Path(part.decode("utf-8", "replace")).name.encode() == name for part in cmdline)


def _group_runs_harness(pgid: int, binary: str) -> bool:
    """A process of the harness's group (its first process gone) still runs the harness."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8", errors="replace").rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and _is_harness(int(stat.parent.name), binary):
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False
