"""Per-caller rate limits on the destructive and administrative routes, as Signet applies them.

Signet limits forget, modify, batch forget, forced deletes and admin routes per caller in its
`team` and `hybrid` modes (never in `local`), answering 429 with `Retry-After`. The caller is
who the request gate authenticated (`security.rate_key`): a scoped token by its id, the
configured `auth.token`, or else the peer address; never `x-signet-actor`, which a caller
chooses freely (it stays attribution only). Windows are fixed (Signet's sliding-window limiter
resets per window too) and live in memory only.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

# Bound on remembered (rule, caller) windows: peers and tokens are many on a busy LAN.
MAX_WINDOWS = 10_000
_ACTOR_CHARS = 128
_MEMORY_ID = re.compile(r"^/api/memory/[^/]+$")
_TRUE = ("1", "true", "yes")
MCP_PATH = "/mcp"
REPAIR_PATHS = frozenset({"/api/embeddings/backfill", "/api/diagnostics/queue/repair"})
MCP_TOOL_RULES = {"memory_forget": "forget", "memory_modify": "modify"}


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most `max` calls per `window_seconds`, per actor."""

    window_seconds: float
    max: int


@dataclass(slots=True)
class _Window:
    started: float
    count: int


def route_rules(method: str, path: str, query: bytes, body: bytes) -> tuple[str, ...]:
    """The limits (agent.yaml names) a request counts against; empty for unlimited routes."""
    if method == "DELETE" and _MEMORY_ID.match(path):
        return ("forget", "forceDelete") if _forced(query, body) else ("forget",)
    if method == "PATCH" and _MEMORY_ID.match(path):
        return ("modify",)
    if method != "POST":
        return ()
    if path == "/api/memory/modify":
        return ("modify",)
    if path == "/api/memory/forget":
        return ("batchForget",)
    if path in ("/api/pipeline/pause", "/api/pipeline/resume"):
        return ("admin",)
    if path.startswith("/api/repair/") or path in REPAIR_PATHS:
        return ("repair",)
    if path.rstrip("/") == MCP_PATH:
        return _mcp_rules(body)
    return ()


def _mcp_rules(body: bytes) -> tuple[str, ...]:
    """The limits MCP tool calls in a JSON-RPC body count against (one per call, batches too).

    The MCP tools run in-process behind this gate, so the same per-actor limits as the HTTP
    routes apply to `memory_forget` and `memory_modify` called over /mcp.
    """
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return ()  # the MCP endpoint answers the bad body
    messages = parsed if isinstance(parsed, list) else [parsed]
    rules: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            continue
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        rule = MCP_TOOL_RULES.get(name) if isinstance(name, str) else None
        if rule is not None:
            rules.append(rule)
    return tuple(dict.fromkeys(rules))


def _forced(query: bytes, body: bytes) -> bool:
    """`force` set in the query string or the JSON body (the route accepts either)."""
    values = parse_qs(query.decode("latin-1")).get("force", [])
    if any(value.strip().lower() in _TRUE for value in values):
        return True
    if not body:
        return False
    try:
        parsed = json.loads(body)
    except ValueError:
        return False  # the route answers the bad body; it is not a forced delete
    return isinstance(parsed, dict) and parsed.get("force") is True


class RateLimiter:
    """Counts calls per (rule, actor) in fixed windows; thread-compatible on one event loop."""

    def __init__(
        self, limits: Mapping[str, RateLimit], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = dict(limits)
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}

    def acquire(self, rules: tuple[str, ...], actor: str) -> tuple[str, float] | None:
        """Count one call against every rule; the first exhausted rule and seconds to wait.

        A refused call is not counted, so waiting `Retry-After` is always enough.
        """
        now = self._clock()
        windows = []
        for name in rules:
            limit = self.limits.get(name)
            if limit is None:
                continue
            window = self._window(name, actor[:_ACTOR_CHARS], now, limit)
            if window.count >= limit.max:
                return name, window.started + limit.window_seconds - now
            windows.append(window)
        for window in windows:
            window.count += 1
        return None

    def _window(self, name: str, actor: str, now: float, limit: RateLimit) -> _Window:
        key = (name, actor)
        window = self._windows.get(key)
        if window is None or now - window.started >= limit.window_seconds:
            if len(self._windows) >= MAX_WINDOWS:
                self._prune(now)
            window = self._windows[key] = _Window(now, 0)
        return window

    def _prune(self, now: float) -> None:
        longest = max((limit.window_seconds for limit in self.limits.values()), default=0.0)
        stale = [key for key, w in self._windows.items() if now - w.started >= longest]
        for key in stale or list(self._windows)[: MAX_WINDOWS // 2]:
            del self._windows[key]


def retry_after(seconds: float) -> str:
    """Whole seconds for the `Retry-After` header, at least 1."""
    return str(max(1, math.ceil(seconds)))
