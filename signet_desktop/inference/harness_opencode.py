"""The launch of a Dreaming pass run by OpenCode (`opencode run --format json`), tools confined.

OpenCode loads the user's own config (their providers, model and login stay theirs); the pass
adds one more config layer through `OPENCODE_CONFIG_CONTENT` (the environment, so the pass
secret is never on the command line): the daemon's `/mcp/dream` as a remote MCP server with
the secret as its Bearer header, each of the user's own MCP servers switched off by name (so
none is started), and an agent, `signet-dreaming`, whose prompt is the pass's system prompt
(in place of OpenCode's coding prompt) and whose only tools are the pass's
(`"*": false`, `"signet-dreaming_*": true`: no shell, no file reads or edits, no web).
`--pure` loads no plugin (Signet's own OpenCode plugin would record the pass as a session) and
`--title` spares the extra model call OpenCode makes to title a session. OpenCode keeps every
run in its session store; the pass deletes its session after the run
(`dreaming/harness_pass.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signet_desktop.config import jsonc

log = logging.getLogger(__name__)

CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
AGENT = "signet-dreaming"
TITLE = "Signet Dreaming pass"
CONFIG_FILES = ("opencode.json", "opencode.jsonc", "config.json")


def opencode_command(binary: str, *, model: str | None) -> list[str]:
    """The argv of one pass through OpenCode; the evidence prompt goes to stdin."""
    argv = [binary, "run", "--format", "json", "--pure", "--agent", AGENT, "--title", TITLE]
    if model:
        argv += ["--model", model]
    return argv


def opencode_environment(
    *, server: str, system_prompt: str, tools_url: str, token: str, env: Mapping[str, str]
) -> dict[str, str]:
    """The config layer of one pass, as OpenCode reads it from its environment."""
    servers: dict[str, Any] = {
        name: {"enabled": False} for name in user_mcp_servers(env) if name != server
    }
    servers[server] = {
        "type": "remote",
        "url": tools_url,
        "headers": {"Authorization": f"Bearer {token}"},
        "enabled": True,
    }
    agent = {
        "mode": "primary",
        "description": "Signet Desktop's Dreaming pass: only the pass's tools",
        "prompt": system_prompt,
        "tools": {"*": False, f"{server}_*": True},
    }
    layer = {"mcp": servers, "agent": {AGENT: agent}, "autoupdate": False, "share": "disabled"}
    return {CONFIG_ENV: json.dumps(layer)}


def user_mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers the user's OpenCode config files name (an unreadable file: none)."""
    home = Path(env.get("HOME") or "~").expanduser()
    folder = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
    files = [folder / name for name in CONFIG_FILES]
    if env.get("OPENCODE_CONFIG"):
        files.append(Path(env["OPENCODE_CONFIG"]).expanduser())
    names: list[str] = []
    for path in files:
        config = _read_jsonc(path)
        servers = config.get("mcp") if isinstance(config, dict) else None
        if isinstance(servers, dict):
            names.extend(str(name) for name in servers if str(name) not in names)
    return names


def _read_jsonc(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        log.warning("cannot read %s; its MCP servers are not switched off", path)
        return None
    try:
        return jsonc.loads(text)  # the user's config may be JSON with comments
    except ValueError:
        log.warning("cannot parse %s; its MCP servers are not switched off", path)
        return None
