"""Run one Dreaming pass through the user's agent harness (`executor: acpx`), bounded.

The harness is started headless in an empty temporary folder with the pass's system prompt
and runbook, the evidence window on stdin, and one MCP server: the daemon's `/mcp/dream`,
which serves this pass's tools to the holder of its secret (`dreaming/tool_sessions.py`).
Its stream-json output is read as it comes: the model it ran, every tool it asked for (one
the pass never gave it is recorded as refused), its turns, and its final result with usage
and cost as the harness reports them. The pass's bounds hold: at the deadline, on cancel or
past the turn bound the harness's whole process group is killed; the harness dies with the
daemon (a parent-death signal), and a pid file lets start-up recovery kill what a `kill -9`
of the daemon left (`kill_leftovers`).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from signet_desktop.domain.dreaming import PassUsage
from signet_desktop.inference.harness_agent import MCP_TOOL_PREFIX, HarnessAgent

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 4 * 1024 * 1024  # one stream-json event; longer is garbage
STDERR_TAIL = 2_000
POLL_S = 0.2
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


@dataclass(slots=True)
class _Stream:
    """What has been read from the harness's stdout so far."""

    model: str | None = None
    tools_connected: bool | None = None
    turns: int = 0
    result: dict[str, Any] | None = None
    garbage: list[str] = field(default_factory=list)
    garbage_count: int = 0


RefuseTool = Callable[[str, object], None]  # (tool name, input) -> recorded as refused


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
    argv = agent.command(system_prompt=system_prompt, tools_url=tools_url, token=token)
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="signet-dream-") as cwd:
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env if env is not None else dict(os.environ),
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
        stream = _Stream()
        stderr: list[bytes] = []
        readers = [
            threading.Thread(
                target=_read_stream,
                args=(process.stdout, stream, refuse_tool),
                name="harness-stdout",
                daemon=True,
            ),
            threading.Thread(
                target=_read_tail, args=(process.stderr, stderr), name="harness-stderr", daemon=True
            ),
            threading.Thread(
                target=_feed, args=(process.stdin, prompt), name="harness-stdin", daemon=True
            ),
        ]
        for reader in readers:
            reader.start()
        try:
            ended = _wait(process, stream, deadline, max_turns, cancel)
        finally:
            _kill_group(process)
            for reader in readers:
                reader.join(timeout=5)
            for pipe in (process.stdin, process.stdout, process.stderr):
                with contextlib.suppress(OSError, ValueError):
                    if pipe is not None:
                        pipe.close()
            if pid_file is not None:
                pid_file.unlink(missing_ok=True)
    return _outcome(agent, ended, stream, process.returncode, b"".join(stderr), timeout_s)


def _wait(
    process: subprocess.Popen[bytes],
    stream: _Stream,
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
    stream: _Stream,
    returncode: int | None,
    stderr: bytes,
    timeout_s: float,
) -> HarnessResult:
    usage = _usage(stream.result)
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
    result = stream.result
    if result is None:
        told = _tail(stderr) or "; ".join(stream.garbage) or "nothing"
        raise HarnessFailed(
            f"{agent.label} ended without a result (exit {returncode}; "
            f"{stream.garbage_count} unreadable output lines): {told}"
        )
    text = result.get("result")
    if result.get("is_error") or result.get("subtype") != "success":
        reason = text if isinstance(text, str) and text.strip() else result.get("subtype")
        raise HarnessFailed(f"{agent.label} reported an error: {str(reason)[:500]}")
    if stream.tools_connected is False:
        raise HarnessFailed(f"{agent.label} could not connect to the pass's tools (/mcp/dream)")
    summary = text.strip() if isinstance(text, str) else ""
    return HarnessResult("completed", summary, usage, stream.model, stream.turns)


def _usage(result: dict[str, Any] | None) -> PassUsage:
    if result is None:
        return PassUsage()
    raw = result.get("usage")
    usage = raw if isinstance(raw, dict) else {}
    cost = result.get("total_cost_usd")

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    return PassUsage(
        count("input_tokens"),
        count("output_tokens"),
        count("cache_read_input_tokens"),
        count("cache_creation_input_tokens"),
        float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
    )


# -- the stream ------------------------------------------------------------------------------


def _read_stream(pipe: IO[bytes] | None, stream: _Stream, refuse_tool: RefuseTool) -> None:
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        while line := pipe.readline(MAX_LINE_BYTES):
            _take(line, stream, refuse_tool)


def _take(line: bytes, stream: _Stream, refuse_tool: RefuseTool) -> None:
    """Fold one stream-json line into `stream` (a line that is not an event is counted)."""
    if not line.strip():
        return
    try:
        event = json.loads(line)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        stream.garbage_count += 1
        if len(stream.garbage) < 3:
            stream.garbage.append(line[:200].decode("utf-8", "replace").strip())
        return
    kind = event.get("type")
    if kind == "system" and event.get("subtype") == "init":
        model = event.get("model")
        stream.model = model if isinstance(model, str) else None
        servers = event.get("mcp_servers")
        if isinstance(servers, list):
            stream.tools_connected = any(
                isinstance(s, dict) and s.get("status") == "connected" for s in servers
            )
    elif kind == "assistant":
        stream.turns += 1
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name = block.get("name")
            if isinstance(name, str) and not name.startswith(MCP_TOOL_PREFIX):
                try:
                    refuse_tool(name, block.get("input"))
                except Exception:  # recording must not stop the reader
                    log.exception("recording a refused harness tool call failed")
    elif kind == "result":
        stream.result = event


def _read_tail(pipe: IO[bytes] | None, into: list[bytes]) -> None:
    if pipe is None:
        return
    with contextlib.suppress(OSError, ValueError):
        while chunk := pipe.read(65_536):
            into.append(chunk)
            while sum(len(c) for c in into) > 4 * STDERR_TAIL and len(into) > 1:
                into.pop(0)


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
        if _is_harness(pid, binary):
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
