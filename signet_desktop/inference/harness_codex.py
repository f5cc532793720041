"""The command line of a Dreaming pass run by Codex (`codex exec --json`), tools confined.

Codex loads the user's `$CODEX_HOME/config.toml` (their model, provider and login stay
theirs) and the pass adds, as `-c` overrides: the pass's system prompt as developer
instructions, the daemon's `/mcp/dream` as the only enabled MCP server (each of the user's
own servers is switched off by name, since an override of the table is merged, not
replaced), its secret read from an environment variable (never on the command line), and
its tools run without an approval prompt (`codex exec` has no one to ask and would refuse
them), and every built-in tool Codex would otherwise offer switched off: the shell (`shell_tool`,
`unified_exec`), images, web search, sub-agents, goals, apps, plugins and hooks. The sandbox
is read-only and the session ephemeral (no rollout file, so nothing to import later).

What Codex 0.171 still offers the model: `list_mcp_resources`, `list_mcp_resource_templates`
and `read_mcp_resource` (over enabled servers only: the pass's, which serves no resources) and
`request_user_input` (which `codex exec` refuses by itself).
"""

from __future__ import annotations

import json
import logging
import tomllib
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

TOKEN_ENV = "SIGNET_DREAM_TOKEN"
DISABLED_FEATURES = (
    "shell_tool",
    "unified_exec",
    "view_image",
    "multi_agent",
    "goals",
    "apps",
    "plugins",
    "hooks",
)


def codex_command(
    binary: str,
    *,
    server: str,
    system_prompt: str,
    tools_url: str,
    model: str | None,
    env: Mapping[str, str],
) -> list[str]:
    """The argv of one pass through Codex; the evidence prompt goes to stdin (`-`)."""
    argv = [
        binary,
        "exec",
        "--json",
        "--color",
        "never",
        "--skip-git-repo-check",  # the pass runs in an empty temporary folder
        "--ephemeral",  # no session file: the pass is not a session to remember
        "--sandbox",
        "read-only",
    ]
    for feature in DISABLED_FEATURES:
        argv += ["--disable", feature]
    overrides = {
        "web_search": _toml("disabled"),
        "notify": "[]",
        "developer_instructions": _toml(system_prompt),
    }
    for name in user_mcp_servers(env):
        if name != server:
            overrides[f"mcp_servers.{_key(name)}.enabled"] = "false"
    overrides[f"mcp_servers.{_key(server)}"] = (
        f"{{url = {_toml(tools_url)}, bearer_token_env_var = {_toml(TOKEN_ENV)},"
        # wait for the pass's tools (and fail the run if they cannot start), and run them
        # without asking: `codex exec` has no one to ask, so it would refuse every call
        ' required = true, default_tools_approval_mode = "approve"}'
    )
    for key, value in overrides.items():
        argv += ["-c", f"{key}={value}"]
    if model:
        argv += ["--model", model]
    return [*argv, "-"]


def user_mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers the user's Codex config names (unreadable config: none)."""
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or "~").expanduser() / ".codex")
    path = Path(home) / "config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError, UnicodeDecodeError):
        log.warning("cannot read %s; its MCP servers are not switched off", path)
        return []
    servers = config.get("mcp_servers")
    return [str(name) for name in servers] if isinstance(servers, dict) else []


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def _key(name: str) -> str:
    """A dotted-path segment: bare when TOML allows it, else quoted."""
    bare = name.replace("-", "").replace("_", "")
    return name if bare.isascii() and bare.isalnum() else _toml(name)
