"""OpenCode: the plugin file `plugins/signet.mjs` and its registration (`plugin`, `mcp.signet`)
in the first existing of `opencode.json`, `opencode.jsonc`, `config.json`.

OpenCode reads its config as JSONC. A file without comments or trailing commas is edited as
JSON; one with them is never rewritten (a round trip through a parser would drop the
comments): the installer refuses and says exactly what to add or remove by hand.
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
    ManualEditRequired,
    Plan,
    json_change,
    load_json_object,
    read_text,
)

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


def strip_jsonc(text: str) -> str:
    """JSON from JSONC: comments and trailing commas out, strings untouched."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(char)
            i += 1
    joined = "".join(out)
    result: list[str] = []
    for index, char in enumerate(joined):  # drop a comma whose next non-space is } or ]
        if char == ",":
            rest = joined[index + 1 :].lstrip()
            if rest[:1] in ("}", "]"):
                continue
        result.append(char)
    return "".join(result)


def _load(path: Path, text: str | None) -> tuple[dict[str, Any], bool]:
    """(config, is plain JSON) — JSONC with comments parses but must not be rewritten."""
    try:
        return load_json_object(path, text), True
    except ConfigFileError:
        if text is None:
            raise
        try:
            return load_json_object(path, strip_jsonc(text)), False
        except ConfigFileError:
            pass
        raise


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


def _manual(path: Path, what: str, snippet: dict[str, Any]) -> ManualEditRequired:
    text = json.dumps(snippet, indent=2)
    return ManualEditRequired(
        f"{path} has comments or trailing commas, which rewriting it would lose; nothing was"
        f" changed. {what} by hand:\n{text}"
    )


def plan_install(locations: Locations, url: str = DEFAULT_URL) -> Plan:
    """The plugin file, and its registration plus the MCP server in the config (both calling
    the daemon at `url`)."""
    path = config_path(locations)
    before = read_text(path)
    config, plain = _load(path, before)
    entry = mcp_entry(locations, url)
    after = merged(path, config, entry)
    plugin = plugin_path(locations)
    existing = read_text(plugin)
    foreign = existing is not None and PLUGIN_MARKER not in existing  # someone else's file
    plugin_change = FileChange(plugin, existing, plugin_text(url), mode=0o644, backup=foreign)
    if not plain:
        if after != config:
            snippet = {"plugin": [PLUGIN_REF], "mcp": {MCP_NAME: entry}}
            raise _manual(path, "Add (merging with what is there)", snippet)
        config_change = FileChange(path, before, before)
    else:
        config_change = json_change(path, before, after)
    return Plan(NAME, (plugin_change, config_change), ("plugin + MCP server `signet`",))


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
        config, plain = _load(path, before)
        after = merged(path, config, None)
        if after != config and not plain:
            snippet = {"plugin": [PLUGIN_REF], "mcp": {MCP_NAME: "…"}}
            raise _manual(path, "Remove these entries", snippet)
        changes.append(
            json_change(path, before, after) if plain else FileChange(path, before, before)
        )
    return Plan(NAME, tuple(changes))


def status(locations: Locations) -> dict[str, Any]:
    """Config found, plugin installed and registered, MCP entry present."""
    path = config_path(locations)
    facts: dict[str, Any] = {"config": str(path), "found": config_dir(locations).is_dir()}
    plugin_file = read_text(plugin_path(locations)) or ""
    try:
        config, _ = _load(path, read_text(path))
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
