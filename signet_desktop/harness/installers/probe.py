"""Does what an installer wrote actually start? For `signet install --status`.

A config entry that names a command is not proof that the harness can run it: a bare name
resolves only on some PATHs, a virtualenv can move. These checks run the written command the
way the harness would (no shell, the user's environment): a hook command must start and
answer `--help`; an MCP server must answer a real MCP `initialize` over stdio.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PROBE_TIMEOUT_S = 15.0
PROTOCOL_VERSION = "2025-06-18"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """`ok` and one line a person can act on."""

    ok: bool
    detail: str


def _resolve(program: str, env: Mapping[str, str]) -> str | None:
    if os.path.isabs(program):
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program, path=env.get("PATH"))


def command_starts(argv: Sequence[str], env: Mapping[str, str]) -> ProbeResult:
    """Run `argv[0] hook --help` (what a hook command runs, without touching the daemon)."""
    if not argv:
        return ProbeResult(False, "no command")
    program = _resolve(argv[0], env)
    if program is None:
        return ProbeResult(False, f"{argv[0]} not found from this PATH")
    try:
        done = subprocess.run(
            [program, "hook", "--help"],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ProbeResult(False, f"{program} did not start ({exc})")
    if done.returncode != 0:
        first = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        return ProbeResult(
            False, f"{program} exited {done.returncode}: {first[0] if first else ''}"
        )
    return ProbeResult(True, f"{program} starts")


def mcp_initialize(
    argv: Sequence[str], env: Mapping[str, str], extra_env: Mapping[str, str] | None = None
) -> ProbeResult:
    """Start the MCP server as a harness would and complete an `initialize` handshake."""
    if not argv:
        return ProbeResult(False, "no command")
    program = _resolve(argv[0], env)
    if program is None:
        return ProbeResult(False, f"{argv[0]} not found from this PATH")
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "signet-install-status", "version": "1"},
        },
    }
    try:
        proc = subprocess.Popen(
            [program, *argv[1:]],
            env={**env, **(extra_env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError as exc:
        return ProbeResult(False, f"{program} did not start ({exc})")
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        line = _read_line(proc, time.monotonic() + PROBE_TIMEOUT_S)
    except OSError as exc:
        return ProbeResult(False, f"{program} closed its input ({exc})")
    finally:
        _stop(proc)
    if line is None:
        return ProbeResult(False, f"{program} gave no MCP answer within {PROBE_TIMEOUT_S:g} s")
    try:
        answer = json.loads(line)
        server = answer["result"]["serverInfo"]
    except (ValueError, KeyError, TypeError):
        return ProbeResult(False, f"{program} answered something other than MCP initialize")
    return ProbeResult(True, f"answers MCP initialize ({server.get('name', '?')})")


def _read_line(proc: subprocess.Popen[bytes], deadline: float) -> bytes | None:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    while b"\n" not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return buffer or None
        buffer += chunk
    return buffer.split(b"\n", 1)[0]


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=3)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
