"""Claude Code: hooks in `settings.json` (`signet hook` commands) and the MCP entry in
`.claude.json`.

Every event runs a command hook by default. Claude Code does not run HTTP hooks for
SessionStart at all, and when the daemon is down it prints every failed HTTP hook to the user
("SessionEnd hook … failed: connect ECONNREFUSED"), while `signet hook` always exits 0 and stays
quiet. `http_hooks` (`--http-hooks`) makes the events that Claude Code does POST (prompt,
compaction, session end) HTTP hooks, for a daemon that is always up; SessionStart stays a
command. Every command is written as an absolute path with the daemon URL the installer was
given (`--url`), so the hooks and the MCP server reach the same daemon from any PATH.

Our hooks are recognised by what they run (a URL under `/api/hooks/claude-code/`, a command
running `signet hook`), so a reinstall replaces them in place, Signet's own older command
hooks (millisecond timeouts) are rewritten, and every other hook and matcher group stays.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from typing import Any

from signet_desktop.harness.installers.files import (
    DEFAULT_URL,
    ConfigFileError,
    FileChange,
    Locations,
    Plan,
    commands_note,
    json_change,
    load_json_object,
    read_text,
)

NAME = "claude-code"
# Claude Code event -> (native HTTP route, `signet hook` event, timeout in seconds)
EVENTS = {
    "SessionStart": ("session-start", "session-start", 5),
    "UserPromptSubmit": ("user-prompt-submit", "user-prompt-submit", 5),
    "PreCompact": ("pre-compact", "pre-compaction", 10),
    "SessionEnd": ("session-end", "session-end", 60),
}
# A command hook also pays for a process start, and its own fail-open timeout (5 s, 60 s at
# session end) must fire before Claude Code gives up on it.
COMMAND_GRACE_S = 2
COMMAND_ONLY = frozenset({"SessionStart"})  # Claude Code skips HTTP hooks for these
LEGACY_KEY = "PreCompaction"  # an event name Signet once wrote; Claude Code has no such event
HTTP_PATH = "/api/hooks/claude-code/"
COMMAND_RE = re.compile(r"(^|[\s/\\\"'])signet(\.exe)?[\"']?\s+hook\s")
MCP_NAME = "signet"


@dataclass(frozen=True, slots=True)
class Options:
    url: str
    http_hooks: bool = False  # HTTP hooks for the events Claude Code POSTs (not SessionStart)


def is_ours(hook: Any) -> bool:
    """A hook this installer (or Signet's own installer) wrote."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "http":
        return HTTP_PATH in str(hook.get("url", ""))
    if hook.get("type") == "command":
        return bool(COMMAND_RE.search(str(hook.get("command", ""))))
    return False


def wanted_hook(event: str, options: Options, signet: str) -> dict[str, Any]:
    route, hook_event, seconds = EVENTS[event]
    if options.http_hooks and event not in COMMAND_ONLY:
        return {"type": "http", "url": f"{options.url}{HTTP_PATH}{route}", "timeout": seconds}
    words = [signet, "hook", hook_event, "-H", NAME, "--url", options.url]
    command = " ".join(shlex.quote(word) for word in words)
    return {"type": "command", "command": command, "timeout": seconds + COMMAND_GRACE_S}


def _groups(path: Any, hooks: dict[str, Any], event: str) -> list[Any]:
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise ConfigFileError(path, f"hooks.{event} is not a list; nothing was changed")
    return groups


def _strip_ours(groups: list[Any], replacement: dict[str, Any] | None) -> tuple[list[Any], bool]:
    """Our hooks out of every group (the first replaced in place); empty groups dropped."""
    placed = False
    kept: list[Any] = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_ours(h) for h in inner):
            kept.append(group)
            continue
        new_inner = []
        for hook in inner:
            if not is_ours(hook):
                new_inner.append(hook)
            elif replacement is not None and not placed:
                new_inner.append(replacement)
                placed = True
        if new_inner:
            kept.append({**group, "hooks": new_inner})
    return kept, placed


def merged_settings(path: Any, settings: dict[str, Any], wanted: dict[str, Any] | None) -> Any:
    """`settings` with our hooks set to `wanted` ({event: hook}) or removed (None)."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigFileError(path, "`hooks` is not an object; nothing was changed")
    for event in (*EVENTS, LEGACY_KEY):
        if event not in hooks and (wanted is None or event not in wanted):
            continue
        replacement = None if wanted is None else wanted.get(event)
        groups, placed = _strip_ours(_groups(path, hooks, event), replacement)
        if replacement is not None and not placed:
            groups.append({"hooks": [replacement]})
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks", None)
    return result


def mcp_entry(locations: Locations, url: str = DEFAULT_URL) -> dict[str, Any]:
    command = locations.executable("signet-mcp")
    return {"type": "stdio", "command": command, "args": ["--url", url], "env": {}}


def _is_our_mcp(entry: Any) -> bool:
    return isinstance(entry, dict) and str(entry.get("command", "")).endswith("signet-mcp")


def merged_claude_json(path: Any, data: dict[str, Any], entry: dict[str, Any] | None) -> Any:
    """`.claude.json` with `mcpServers.signet` set to `entry` or removed (only if ours)."""
    result = copy.deepcopy(data)
    servers = result.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigFileError(path, "`mcpServers` is not an object; nothing was changed")
    if entry is not None:
        servers[MCP_NAME] = entry
        result["mcpServers"] = servers
    elif _is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        if servers:
            result["mcpServers"] = servers
        else:  # it held only ours: the key goes with it
            result.pop("mcpServers", None)
    return result


def plan_install(locations: Locations, options: Options) -> Plan:
    """Hooks into settings.json, the MCP server into .claude.json."""
    settings_path = locations.claude_dir / "settings.json"
    signet = locations.executable("signet")
    wanted = {event: wanted_hook(event, options, signet) for event in EVENTS}
    before = read_text(settings_path)
    settings = merged_settings(settings_path, load_json_object(settings_path, before), wanted)
    mcp_path = locations.claude_json
    mcp_before = read_text(mcp_path)
    data = load_json_object(mcp_path, mcp_before)
    changes = (
        json_change(settings_path, before, settings),
        json_change(
            mcp_path,
            mcp_before,
            merged_claude_json(mcp_path, data, mcp_entry(locations, options.url)),
        ),
    )
    if options.http_hooks:
        http = [event for event in EVENTS if event not in COMMAND_ONLY]
        kind = f"a command hook for SessionStart, HTTP hooks for {', '.join(http)}"
    else:
        kind = f"command hooks (`signet hook`) for {', '.join(EVENTS)}"
    note = f"{kind}; MCP server `signet`; daemon {options.url}"
    return Plan(NAME, changes, (note, commands_note(signet)))


def plan_uninstall(locations: Locations) -> Plan:
    """Our hooks and our MCP entry out; everything else as it is."""
    changes: list[FileChange] = []
    settings_path = locations.claude_dir / "settings.json"
    before = read_text(settings_path)
    if before is not None:
        settings = merged_settings(settings_path, load_json_object(settings_path, before), None)
        changes.append(json_change(settings_path, before, settings))
    mcp_path = locations.claude_json
    mcp_before = read_text(mcp_path)
    if mcp_before is not None:
        data = merged_claude_json(mcp_path, load_json_object(mcp_path, mcp_before), None)
        changes.append(json_change(mcp_path, mcp_before, data))
    return Plan(NAME, tuple(changes))


def status(locations: Locations) -> dict[str, Any]:
    """Config found, which hooks are installed, the MCP entry, and the commands they run
    (`hook_commands`, `mcp_argv`: for `signet install --status` to start them)."""
    settings_path = locations.claude_dir / "settings.json"
    facts: dict[str, Any] = {"config": str(settings_path)}
    facts["found"] = locations.claude_dir.is_dir() or locations.claude_json.is_file()
    try:
        settings = load_json_object(settings_path, read_text(settings_path))
        raw_hooks = settings.get("hooks")
        hooks: dict[str, Any] = raw_hooks if isinstance(raw_hooks, dict) else {}
        ours = [
            hook
            for event in EVENTS
            for group in (hooks.get(event) or [])
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for hook in group["hooks"]
            if is_ours(hook)
        ]
        events = [e for e in EVENTS if _has_ours(hooks.get(e))]
        kinds = {str(hook.get("type")) for hook in ours}
        facts["hooks"] = ", ".join(sorted(kinds)) if events else "none"
        facts["hook_events"] = events
        facts["hook_commands"] = sorted(
            {tuple(_split(str(h.get("command", "")))) for h in ours if h.get("type") == "command"}
        )
        data = load_json_object(locations.claude_json, read_text(locations.claude_json))
        servers = data.get("mcpServers")
        entry = servers.get(MCP_NAME) if isinstance(servers, dict) else None
        facts["mcp"] = _is_our_mcp(entry)
        if isinstance(entry, dict) and facts["mcp"]:
            args = entry.get("args")
            words = args if isinstance(args, list) else []
            facts["mcp_argv"] = [str(entry["command"]), *map(str, words)]
            env = entry.get("env")
            pairs = env.items() if isinstance(env, dict) else ()
            facts["mcp_env"] = {str(k): str(v) for k, v in pairs}
    except ConfigFileError as exc:
        facts["error"] = str(exc)
    return facts


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _has_ours(groups: Any) -> bool:
    return isinstance(groups, list) and any(
        isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(map(is_ours, g["hooks"]))
        for g in groups
    )
