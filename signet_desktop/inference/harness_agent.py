"""`executor: acpx`: a Dreaming pass run by the user's own agent harness, headless.

The harness (Claude Code, Codex or OpenCode) runs the agent loop itself against the model
the user is logged in to; the daemon serves it Dreaming's tools over MCP for that one pass
(`dreaming/harness_pass.py` runs it, `api/mcp/dream_endpoint.py` serves the tools). This
module only says *which* harness and *how* it is started: the binary, the model, and the
command line that leaves the harness no tool but the pass's (no shell, no files, no web, no
hooks, no saved session).

Wire chosen: each harness's own headless mode (`claude -p --output-format stream-json`,
`codex exec --json` in `inference/harness_codex.py`, `opencode run --format json` in
`inference/harness_opencode.py`), not the Agent Client Protocol through an
npm bridge: it needs nothing installed beyond the harness the user has, its flags confine the
tool surface (`--tools ""`, `--strict-mcp-config`; Codex's `--disable` features; an OpenCode
agent whose only tools are the pass's), and its stream reports usage (and cost, where the
harness prices it) per pass.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from signet_desktop.inference.errors import ProviderNotConfigured
from signet_desktop.inference.harness_codex import TOKEN_ENV, codex_command
from signet_desktop.inference.harness_discovery import (
    KINDS_BY_NAME,
    HarnessKind,
    candidates,
    search_env,
)
from signet_desktop.inference.harness_opencode import opencode_command, opencode_environment
from signet_desktop.inference.types import ChatRequest, ChatResponse

MCP_SERVER_NAME = "signet-dreaming"  # Claude Code names its tools mcp__signet-dreaming__<tool>
MCP_TOOL_PREFIX = f"mcp__{MCP_SERVER_NAME}__"
SUPPORTED = {"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}
KNOWN = {**SUPPORTED, "gemini": "Gemini CLI"}
INSTALL = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "opencode": "npm install -g opencode-ai",
}
# Signet's own hook wrappers run the harness untouched with these (the pass is no session)
NO_HOOKS_ENV = {"SIGNET_NO_HOOKS": "1", "SIGNET_BYPASS": "1"}
# Claude Code (2.1) connects MCP servers in the background by default and starts the model
# at once: on a busy machine its first turn came before the pass's tools were listed ("pending"
# in its init event), and the pass failed. The pass's server is `alwaysLoad` and connections
# block, for at most CLAUDE_MCP_CONNECT_MS (a bound for a slow first /mcp/dream, not a wait).
CLAUDE_MCP_CONNECT_MS = 30_000
CLAUDE_ENV = {
    "MCP_CONNECTION_NONBLOCKING": "0",
    "MCP_CONNECT_TIMEOUT_MS": str(CLAUDE_MCP_CONNECT_MS),
}


@dataclass(frozen=True, slots=True)
class Launch:
    """One pass's start: the harness's argv and the variables it adds to its environment."""

    argv: list[str]
    env: dict[str, str]


@dataclass(frozen=True, slots=True)
class HarnessAgent:
    """The harness that runs Dreaming passes (not an HTTP chat provider: see `complete`)."""

    kind: str  # "claude" | "codex" | "opencode"
    binary: str  # absolute path
    target: str  # the inference target's name
    configured_model: str | None = None  # None: the harness's own default

    runs_agent_loop = True

    @property
    def name(self) -> str:
        return f"acpx:{self.kind}"

    @property
    def model(self) -> str:
        return self.configured_model or "harness default"

    @property
    def label(self) -> str:
        return SUPPORTED.get(self.kind, self.kind)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Single completions (prospective hints) do not run through a harness: each would
        start the user's agent and spend their subscription for a few words."""
        raise ProviderNotConfigured(
            f"the target '{self.target}' runs {self.label} (executor acpx), which serves "
            "Dreaming passes only; single completions need an HTTP provider"
        )

    def launch(
        self, *, system_prompt: str, tools_url: str, token: str, env: Mapping[str, str]
    ) -> Launch:
        """How one pass starts: its argv (the evidence prompt goes to stdin) and what it adds
        to the harness's environment (`env`, the environment it runs in, holds the user's
        config locations)."""
        if self.kind == "opencode":
            argv = opencode_command(self.binary, model=self.configured_model)
        elif self.kind == "codex":
            argv = codex_command(
                self.binary,
                server=MCP_SERVER_NAME,
                system_prompt=system_prompt,
                tools_url=tools_url,
                model=self.configured_model,
                env=env,
            )
        else:
            argv = self._claude_argv(system_prompt, tools_url, token)
        return Launch(argv, self._environment(system_prompt, tools_url, token, env))

    def forget_command(self, session_id: str) -> list[str] | None:
        """What deletes the session a harness kept of a pass (OpenCode keeps every run)."""
        if self.kind == "opencode":
            return [self.binary, "session", "delete", session_id, "--pure"]
        return None

    def _environment(
        self, system_prompt: str, tools_url: str, token: str, env: Mapping[str, str]
    ) -> dict[str, str]:
        """What the pass adds to the harness's environment (Codex reads its secret here,
        OpenCode its whole config layer)."""
        if self.kind == "codex":
            return {**NO_HOOKS_ENV, TOKEN_ENV: token}
        if self.kind == "opencode":
            layer = opencode_environment(
                server=MCP_SERVER_NAME,
                system_prompt=system_prompt,
                tools_url=tools_url,
                token=token,
                env=env,
            )
            return {**NO_HOOKS_ENV, **layer}
        return {**NO_HOOKS_ENV, **CLAUDE_ENV}

    def _claude_argv(self, system_prompt: str, tools_url: str, token: str) -> list[str]:
        """Claude Code's flags: its MCP server (with the secret as a header) on the command
        line, no built-in tool, none of the user's servers or hooks, no saved session."""
        servers = {
            MCP_SERVER_NAME: {
                "type": "http",
                "url": tools_url,
                "headers": {"Authorization": f"Bearer {token}"},
                "alwaysLoad": True,  # connected before the first turn (CLAUDE_ENV)
            }
        }
        argv = [
            self.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            system_prompt,
            "--tools",
            "",  # no built-in tool: no shell, no file reads or edits, no web
            "--mcp-config",
            json.dumps({"mcpServers": servers}),
            "--strict-mcp-config",  # none of the user's own MCP servers
            "--allowedTools",
            f"mcp__{MCP_SERVER_NAME}",
            "--settings",
            json.dumps({"disableAllHooks": True}),  # the pass is not a session to remember
            "--no-session-persistence",
        ]
        if self.configured_model:
            argv += ["--model", self.configured_model]
        return argv


def find_binary(agent: str, env: Mapping[str, str] | None = None) -> str | None:
    """The harness binary `agent` names: a path, or a name on PATH or in the usual install
    places (`inference/harness_discovery.py`, the same search `signet dream setup` makes)."""
    environ = os.environ if env is None else env
    if "/" in agent or agent.startswith("~"):
        path = Path(agent).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    path_var, home = search_env(environ)
    kind = KINDS_BY_NAME.get(agent) or HarnessKind(agent, agent, False)
    for candidate in candidates(kind, path_var or os.defpath, home):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def harness_kind(agent: str) -> str:
    """`claude` for `claude`, `/opt/x/claude` or `claude.exe`; the name otherwise."""
    name = Path(agent).name.lower()
    return name.removesuffix(".exe").removesuffix(".cmd")


def resolve_harness(
    where: str,
    acpx: Mapping[str, object] | None,
    target: str,
    model: str | None,
    env: Mapping[str, str] | None = None,
) -> HarnessAgent:
    """The harness a target names in `acpx.agent`; ProviderNotConfigured says what to fix."""
    agent = (acpx or {}).get("agent")
    if not isinstance(agent, str) or not agent.strip():
        raise ProviderNotConfigured(
            f"{where}.acpx.agent: name the harness (claude, codex or opencode) or its binary's "
            "path; "
            "`signet dream setup` finds it and writes this for you"
        )
    agent = agent.strip()
    kind = harness_kind(agent)
    if kind not in SUPPORTED:
        known = KNOWN.get(kind)
        if known is not None:
            raise ProviderNotConfigured(
                f"{where}.acpx.agent: {known} does not run Dreaming passes yet; use claude "
                "(Claude Code), codex (Codex) or opencode (OpenCode)"
            )
        raise ProviderNotConfigured(
            f"{where}.acpx.agent: '{agent}' is not a harness Dreaming can run; use claude "
            "(Claude Code), codex (Codex), opencode (OpenCode) or the path of one's binary"
        )
    binary = find_binary(agent, env)
    if binary is None:
        raise ProviderNotConfigured(
            f"{where}.acpx.agent: {SUPPORTED[kind]} ('{agent}') was not found on this machine; "
            f"install it ({INSTALL[kind]}) or set acpx.agent to the path of its binary"
        )
    return HarnessAgent(kind=kind, binary=binary, target=target, configured_model=model)
