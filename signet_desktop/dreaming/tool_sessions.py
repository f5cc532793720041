"""The passes whose tools a harness may call right now: one secret per pass, gone with it.

A harness pass (`dreaming/harness_pass.py`) opens a session before it starts the harness and
closes it when the harness is done; `/mcp/dream` (`api/mcp/dream_endpoint.py`) serves a call
only with a live session's secret. Each call runs through the pass's own `PassTools` (agent
scope, caps, the apply seam) and is recorded in `dreaming_tool_calls` in order, exactly as a
call from an HTTP provider's loop; the pass's tool-call bound holds here too.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from signet_desktop.dreaming.tools import PassTools, ToolOutcome
from signet_desktop.inference.types import ToolCall

DREAM_MCP_PATH = "/mcp/dream"  # where the daemon serves them
TOKEN_PREFIX = "sdp_"  # "signet dreaming pass"
# (call, outcome, duration in ms) -> recorded in the pass's trace
Recorder = Callable[[ToolCall, ToolOutcome, int], None]


class PassEnded(Exception):
    """No live pass holds this secret (never issued, or the pass is over)."""


@dataclass(slots=True)
class ToolSession:
    """One live pass's tools, as the harness reaches them."""

    tools: PassTools
    record: Recorder
    max_calls: int
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def agent_id(self) -> str:
        return self.tools.agent_id

    @property
    def pass_id(self) -> str:
        return self.tools.pass_id

    def call(self, name: str, arguments: object) -> ToolOutcome:
        """Run and record one call (one at a time per pass: the trace keeps their order)."""
        call = ToolCall(f"mcp_{uuid.uuid4().hex[:16]}", name, json.dumps(arguments))
        with self.lock:
            started = time.monotonic()
            if self.calls >= self.max_calls:
                message = (
                    f"the pass's {self.max_calls}-tool-call bound is reached; stop calling "
                    "tools and answer with your summary"
                )
                outcome = ToolOutcome("refused", {"refused": message}, message, arguments)
            else:
                self.calls += 1
                outcome = self.tools.call(call)
            self.record(call, outcome, int((time.monotonic() - started) * 1000))
            return outcome

    def refuse(self, name: str, arguments: object, message: str) -> None:
        """Record a call the harness made to a tool the pass never gave it."""
        call = ToolCall(f"harness_{uuid.uuid4().hex[:16]}", name, json.dumps(arguments))
        with self.lock:
            self.record(call, ToolOutcome("refused", {"refused": message}, message, arguments), 0)


class ToolSessions:
    """The live sessions by secret; thread-safe (the HTTP loop and pass threads share it)."""

    def __init__(self) -> None:
        self._live: dict[str, ToolSession] = {}
        self._lock = threading.Lock()

    def open(self, session: ToolSession) -> str:
        """Register `session`; the secret the harness must present."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self._lock:
            self._live[token] = session
        return token

    def close(self, token: str) -> None:
        with self._lock:
            self._live.pop(token, None)

    def get(self, token: str) -> ToolSession:
        """The live session holding `token`; PassEnded otherwise."""
        with self._lock:
            for secret, session in self._live.items():
                if secrets.compare_digest(secret, token):
                    return session
        raise PassEnded("no running Dreaming pass holds this token (the pass has ended)")
