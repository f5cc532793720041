"""OpenCode: the plugin file `plugins/signet.mjs` and its registration (`plugin`, `mcp.signet`)
in the first existing of `opencode.json`, `opencode.jsonc`, `config.json`.

OpenCode reads its config as JSONC (comments, trailing commas). The file is edited in place
(`json_edit`): only our entries' bytes are added or taken out, so the user's comments and
layout stay exactly as they were, and an uninstall restores the bytes it found.
"""

from __future__ import annotations

import copy
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from signet_desktop.harness.installers.files import (
    DEFAULT_URL,
    ConfigFileError,
    FileChange,
    Locations,
    Plan,
    commands_note,
    json_change,
    read_text,
)
from signet_desktop.harness.installers.json_edit import JsoncError, loads

NAME = "opencode"
CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")
PLUGIN_REF = "./plugins/signet.mjs"
PLUGIN_MARKER = "Signet Desktop plugin for OpenCode"
RESOURCE = Path("harness") / "opencode" / "signet.mjs"
MCP_NAME = "signet"


def config_dir(locations: Locations) -> Path:
    return locations.config_home / "opencode"


def config_path(locations: Locations) -> Path:
    """The first existing config file, else `opencode.json` (to be created)."""
    directory = config_dir(locations)
    found = next((directory / n for n in CONFIG_NAMES if (directory / n).is_file()), None)
    return found or directory / CONFIG_NAMES[0]


def plugin_path(locations: Locations) -> Path:
    return config_dir(locations) / "plugins" / "signet.mjs"


DEFAULT_URL_LITERAL = '"http://127.0.0.1:3850"'


def plugin_text(url: str) -> str:
    """The shipped plugin with `url` as its default daemon (SIGNET_DAEMON_URL still wins)."""
    source = plugin_source()
    if DEFAULT_URL_LITERAL not in source:
        raise FileNotFoundError("the shipped OpenCode plugin has no default daemon URL to set")
    return source.replace(DEFAULT_URL_LITERAL, json.dumps(url), 1)


def plugin_source() -> str:
    """The shipped plugin (`resources/harness/opencode/signet.mjs`)."""
    candidates = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.append(Path(frozen) / "resources")
    candidates.append(Path(str(resources.files("signet_desktop"))) / "_resources")
    candidates.append(Path(__file__).resolve().parents[3] / "resources")
    for root in candidates:
        if (root / RESOURCE).is_file():
            return (root / RESOURCE).read_text(encoding="utf-8")
    raise FileNotFoundError(f"the OpenCode plugin is not shipped with this build ({RESOURCE})")


def _load(path: Path, text: str | None) -> dict[str, Any]:
    """The config as OpenCode reads it: JSON with comments and trailing commas allowed."""
    if text is None or not text.strip():
        return {}
    try:
        value = loads(text)
    except JsoncError as exc:
        message = f"not valid JSON (line {exc.line}, column {exc.column}: {exc.msg})"
        raise ConfigFileError(path, message + "; fix or move it, nothing was changed") from None
    if not isinstance(value, dict):
        raise ConfigFileError(path, "holds JSON that is not an object; nothing was changed")
    return value


def _plugins(path: Path, config: dict[str, Any]) -> list[Any]:
    plugins = config.get("plugin", [])
    if not isinstance(plugins, list):
        raise ConfigFileError(path, "`plugin` is not a list; nothing was changed")
    return plugins


def _ours(ref: Any) -> bool:
    return isinstance(ref, str) and ref.replace("\\", "/").endswith("plugins/signet.mjs")


def mcp_entry(locations: Locations, url: str = DEFAULT_URL) -> dict[str, Any]:
    command = [locations.executable("signet-mcp"), "--url", url]
    return {"type": "local", "command": command, "enabled": True}


def merged(path: Path, config: dict[str, Any], entry: dict[str, Any] | None) -> dict[str, Any]:
    """The config with our plugin and MCP server in (entry) or out (None)."""
    result = copy.deepcopy(config)
    current = _plugins(path, result)
    plugins = [p for p in current if not _ours(p)]
    mcp = result.get("mcp", {})
    if not isinstance(mcp, dict):
        raise ConfigFileError(path, "`mcp` is not an object; nothing was changed")
    if entry is not None:
        first = next((i for i, p in enumerate(current) if _ours(p)), None)
        if first is None:  # ours keeps its place on a reinstall; a duplicate goes
            result["plugin"] = [*plugins, PLUGIN_REF]
        else:
            result["plugin"] = [p for i, p in enumerate(current) if i == first or not _ours(p)]
        mcp[MCP_NAME] = entry
        result["mcp"] = mcp
        return result
    _set_or_drop(result, "plugin", plugins, had_ours=any(map(_ours, _plugins(path, config))))
    ours = isinstance(mcp.get(MCP_NAME), dict) and "signet-mcp" in json.dumps(mcp[MCP_NAME])
    if ours:
        del mcp[MCP_NAME]
    _set_or_drop(result, "mcp", mcp, had_ours=ours)
    return result


def _set_or_drop(config: dict[str, Any], key: str, value: Any, *, had_ours: bool) -> None:
    if value or not had_ours:
        if key in config:
            config[key] = value
    else:
        config.pop(key, None)


def plan_install(locations: Locations, url: str = DEFAULT_URL) -> Plan:
    """The plugin file, and its registration plus the MCP server in the config (both calling
    the daemon at `url`)."""
    path = config_path(locations)
    before = read_text(path)
    config = _load(path, before)
    entry = mcp_entry(locations, url)
    after = merged(path, config, entry)
    plugin = plugin_path(locations)
    existing = read_text(plugin)
    foreign = existing is not None and PLUGIN_MARKER not in existing  # someone else's file
    plugin_change = FileChange(plugin, existing, plugin_text(url), mode=0o644, backup=foreign)
    config_change = json_change(path, before, after)
    notes = ("plugin + MCP server `signet`", commands_note(entry["command"][0]))
    return Plan(NAME, (plugin_change, config_change), notes)


def plan_uninstall(locations: Locations) -> Plan:
    """Plugin file (when it is ours) and our registration out; the rest as it is."""
    changes: list[FileChange] = []
    plugin = plugin_path(locations)
    current = read_text(plugin)
    if current is not None and PLUGIN_MARKER in current:
        changes.append(FileChange(plugin, current, None, backup=False))
    path = config_path(locations)
    before = read_text(path)
    if before is not None:
        config = _load(path, before)
        changes.append(json_change(path, before, merged(path, config, None)))
    return Plan(NAME, tuple(changes))


def status(locations: Locations) -> dict[str, Any]:
    """Config found, plugin installed and registered, MCP entry present."""
    path = config_path(locations)
    facts: dict[str, Any] = {"config": str(path), "found": config_dir(locations).is_dir()}
    plugin_file = read_text(plugin_path(locations)) or ""
    try:
        config = _load(path, read_text(path))
        registered = any(map(_ours, _plugins(path, config)))
        facts["hooks"] = "plugin" if registered and PLUGIN_MARKER in plugin_file else "none"
        mcp = config.get("mcp")
        entry = mcp.get(MCP_NAME) if isinstance(mcp, dict) else None
        facts["mcp"] = isinstance(entry, dict)
        command = entry.get("command") if isinstance(entry, dict) else None
        if isinstance(command, list) and command:
            facts["mcp_argv"] = [str(word) for word in command]
            env = entry.get("environment") if isinstance(entry, dict) else None
            facts["mcp_env"] = {str(k): str(v) for k, v in (env or {}).items()}
    except ConfigFileError as exc:
        facts["error"] = str(exc)
    return facts
