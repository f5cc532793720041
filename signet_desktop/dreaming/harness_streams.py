"""Reading a harness's structured output during a Dreaming pass, one reader per harness.

Each harness reports its run as JSON lines on stdout: Claude Code as `stream-json` events
(`system/init` with the model and MCP status, `assistant` turns, one `result` with usage and
cost), Codex as `codex exec --json` events (`item.completed` items such as `mcp_tool_call`
and `agent_message`, `turn.completed` with usage, `turn.failed` / `error`), OpenCode as
`opencode run --format json` events (`step_start`, `tool_use`, `text`, `step_finish` with
tokens and cost per step, `error`). A reader folds
those lines into one `StreamState` the pass reads at the end; a line that is not an event is
counted as garbage. A tool the pass never gave the harness is reported through `refuse`:
Claude Code shows such a call in its stream, Codex only on stderr (`unsupported call: NAME`),
so Codex's stderr is read line by line too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from signet_desktop.domain.dreaming import PassUsage

log = logging.getLogger(__name__)

RefuseTool = Callable[[str, object], None]  # (tool name, input) -> recorded as refused
_CODEX_UNSUPPORTED = re.compile(rb"unsupported call: ([A-Za-z0-9_.:\-]+)")


@dataclass(slots=True)
class StreamState:
    """What a harness has reported so far, whichever harness it is."""

    model: str | None = None
    tools_connected: bool | None = None  # None: the harness did not say
    tools_status: str | None = None  # ...and what it said of the pass's server, its words
    turns: int = 0
    finished: bool = False  # the harness reported the end of its run
    error: str | None = None  # ...with this error (its own words)
    summary: str = ""
    usage: PassUsage = field(default_factory=PassUsage)
    session_id: str | None = None  # the harness's own session (OpenCode keeps one per run)
    garbage: list[str] = field(default_factory=list)
    garbage_count: int = 0


class StreamReader:
    """Folds one harness's stdout lines (and stderr lines, where it reports there)."""

    def __init__(self, refuse: RefuseTool) -> None:
        self.state = StreamState()
        self._refuse = refuse

    def take(self, line: bytes) -> None:
        """Fold one stdout line (an event, or garbage)."""
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except ValueError:
            event = None
        if not isinstance(event, dict):
            self.state.garbage_count += 1
            if len(self.state.garbage) < 3:
                self.state.garbage.append(line[:200].decode("utf-8", "replace").strip())
            return
        self.event(event)

    def event(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def take_stderr(self, line: bytes) -> None:
        """Fold one stderr line (most harnesses report nothing there)."""

    def refuse(self, name: str, arguments: object) -> None:
        try:
            self._refuse(name, arguments)
        except Exception:  # recording must not stop the reader
            log.exception("recording a refused harness tool call failed")


class ClaudeStream(StreamReader):
    """Claude Code's `--output-format stream-json --verbose`."""

    def __init__(self, refuse: RefuseTool, mcp_tool_prefix: str) -> None:
        super().__init__(refuse)
        self._prefix = mcp_tool_prefix

    def event(self, event: dict[str, Any]) -> None:
        state = self.state
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            model = event.get("model")
            state.model = model if isinstance(model, str) else None
            servers = event.get("mcp_servers")
            if isinstance(servers, list):
                said = [str(s.get("status")) for s in servers if isinstance(s, dict)]
                state.tools_connected = "connected" in said
                state.tools_status = ", ".join(said) or "no server"
        elif kind == "assistant":
            state.turns += 1
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                name = block.get("name")
                if isinstance(name, str) and not name.startswith(self._prefix):
                    self.refuse(name, block.get("input"))
        elif kind == "result":
            self._result(event)

    def _result(self, event: dict[str, Any]) -> None:
        state = self.state
        state.finished = True
        text = event.get("result")
        if event.get("is_error") or event.get("subtype") != "success":
            reason = text if isinstance(text, str) and text.strip() else event.get("subtype")
            state.error = str(reason)[:500]
        state.summary = text.strip() if isinstance(text, str) else ""
        raw = event.get("usage")
        usage = raw if isinstance(raw, dict) else {}
        cost = event.get("total_cost_usd")
        state.usage = PassUsage(
            _count(usage, "input_tokens"),
            _count(usage, "output_tokens"),
            _count(usage, "cache_read_input_tokens"),
            _count(usage, "cache_creation_input_tokens"),
            float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
        )


class CodexStream(StreamReader):
    """Codex's `codex exec --json`: one turn, its items, then `turn.completed` (or a failure).

    Codex reports tokens but no cost (cost stays unknown) and not the model it ran. Its
    input tokens include the cached ones; they are split here as Claude Code's are.
    """

    def __init__(self, refuse: RefuseTool, mcp_server: str) -> None:
        super().__init__(refuse)
        self._server = mcp_server

    def event(self, event: dict[str, Any]) -> None:
        state = self.state
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            self._item(item)
        elif kind == "turn.completed":
            state.finished = True
            state.error = None  # an error event before it was retried past
            raw = event.get("usage")
            usage = raw if isinstance(raw, dict) else {}
            cached = _count(usage, "cached_input_tokens")
            state.usage = PassUsage(
                max(0, _count(usage, "input_tokens") - cached),
                _count(usage, "output_tokens") + _count(usage, "reasoning_output_tokens"),
                cached,
                _count(usage, "cache_write_input_tokens"),
                None,
            )
        elif kind == "turn.failed":
            state.finished = True
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            state.error = str(message or "the turn failed")[:500]
        elif kind == "error":  # fatal unless a turn.completed follows
            message = event.get("message")
            state.error = str(message or "error")[:500]

    def _item(self, item: dict[str, Any]) -> None:
        state = self.state
        kind = item.get("type")
        if kind == "mcp_tool_call":
            state.turns += 1
            server = item.get("server")
            if server != self._server:  # a server the pass did not configure
                self.refuse(f"{server}:{item.get('tool')}", item.get("arguments"))
        elif kind == "agent_message":
            text = item.get("text")
            if isinstance(text, str) and text.strip():
                state.summary = text.strip()
        elif kind in {"command_execution", "file_change", "web_search"}:
            # tools the pass's flags take away; reported if a harness ran one anyway
            state.turns += 1
            self.refuse(str(kind), item.get("command") or item.get("changes") or item)

    def take_stderr(self, line: bytes) -> None:
        if found := _CODEX_UNSUPPORTED.search(line):
            self.state.turns += 1
            self.refuse(found.group(1).decode("utf-8", "replace"), None)


class OpenCodeStream(StreamReader):
    """OpenCode's `opencode run --format json`: steps (one model request each), their tool
    calls and texts, and per-step tokens and cost, summed here.

    OpenCode prices a step from its model catalogue and reports 0 for a model it has no
    price for; a pass whose steps all cost 0 records the cost as unknown, not as free.
    """

    def __init__(self, refuse: RefuseTool, mcp_server: str) -> None:
        super().__init__(refuse)
        self._prefix = f"{mcp_server}_"
        self._cost = 0.0

    def event(self, event: dict[str, Any]) -> None:
        state = self.state
        session = event.get("sessionID")
        if isinstance(session, str) and state.session_id is None:
            state.session_id = session
        kind = event.get("type")
        raw = event.get("part")
        part = raw if isinstance(raw, dict) else {}
        if kind == "step_start":
            state.turns += 1
        elif kind == "tool_use":
            name = part.get("tool")
            if isinstance(name, str) and not name.startswith(self._prefix):
                tool_state = part.get("state")
                arguments = tool_state.get("input") if isinstance(tool_state, dict) else None
                self.refuse(name, arguments)
        elif kind == "text":
            text = part.get("text")
            if isinstance(text, str) and text.strip():
                state.summary = text.strip()
        elif kind == "step_finish":
            self._step(part)
        elif kind == "error":
            state.finished = True
            state.error = _opencode_error(event.get("error"))

    def _step(self, part: dict[str, Any]) -> None:
        state = self.state
        raw = part.get("tokens")
        tokens = raw if isinstance(raw, dict) else {}
        raw_cache = tokens.get("cache")
        cache = raw_cache if isinstance(raw_cache, dict) else {}
        cost = part.get("cost")
        if isinstance(cost, int | float) and cost > 0:
            self._cost += float(cost)
        used = state.usage
        state.usage = PassUsage(
            used.input_tokens + _count(tokens, "input"),
            used.output_tokens + _count(tokens, "output") + _count(tokens, "reasoning"),
            used.cache_read + _count(cache, "read"),
            used.cache_write + _count(cache, "write"),
            self._cost if self._cost > 0 else None,
        )
        if part.get("reason") not in {"tool-calls", None}:
            state.finished = True  # the last step: the model stopped


def _opencode_error(error: object) -> str:
    if not isinstance(error, dict):
        return "error"
    data = error.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return str(message or error.get("name") or "error")[:500]


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and value >= 0 else 0
