"""Codex CLI: the MCP server under `[mcp_servers.signet]` in `$CODEX_HOME/config.toml`, and
the session hooks through a `codex` wrapper first on PATH (`codex_wrapper.py`).

config.toml is edited with tomlkit, so the user's comments, order and formatting stay.
`wrapper=False` (`signet install codex --no-wrapper`) installs the MCP server alone and
leaves the shell start-up files as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from signet_desktop.harness.installers import codex_wrapper
from signet_desktop.harness.installers.files import (
    DEFAULT_URL,
    ConfigFileError,
    FileChange,
    Locations,
    Plan,
    commands_note,
    read_text,
)

NAME = "codex"
MCP_NAME = "signet"
NO_WRAPPER_NOTE = (
    "Codex session hooks are not installed (--no-wrapper): Codex has no hook settings; see"
    " docs/HOOKS.md for wrapping `codex` yourself"
)


def _wrapper_note(locations: Locations) -> str:
    return (
        f"session hooks: the wrapper {codex_wrapper.wrapper_path(locations)} runs first on"
        " PATH in new shells (this one: `export"
        f' PATH="{codex_wrapper.wrapper_dir(locations)}:$PATH"`)'
    )


def config_path(locations: Locations) -> Path:
    return locations.codex_dir / "config.toml"


def _parse(path: Path, text: str | None) -> TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise ConfigFileError(path, f"not valid TOML ({exc}); nothing was changed") from None


def _servers(path: Path, doc: TOMLDocument) -> Any:
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigFileError(path, "`mcp_servers` is not a table; nothing was changed")
    return servers


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and str(entry.get("command", "")).endswith("signet-mcp")


def plan_install(locations: Locations, url: str = DEFAULT_URL, wrapper: bool = True) -> Plan:
    """The MCP server, and (unless `wrapper` is False) the wrapper and its PATH block; both
    call the daemon at `url`."""
    mcp_change, notes = _mcp_install(locations, url)
    notes = (*notes, commands_note(locations.executable("signet-mcp")))
    if not wrapper:
        return Plan(NAME, (mcp_change,), (*notes, NO_WRAPPER_NOTE))
    changes = (mcp_change, *codex_wrapper.install_changes(locations, url))
    if not any(change.changed for change in changes):
        return Plan(NAME, changes)
    return Plan(NAME, changes, (*notes, _wrapper_note(locations)))


def _mcp_install(locations: Locations, url: str) -> tuple[FileChange, tuple[str, ...]]:
    """`[mcp_servers.signet]`: signet-mcp (absolute) with `--url` (replaced when it differs)."""
    path = config_path(locations)
    before = read_text(path)
    doc = _parse(path, before)
    servers = _servers(path, doc)
    command = locations.executable("signet-mcp")
    current = servers.get(MCP_NAME) if servers is not None else None
    args = ["--url", url]
    if (
        isinstance(current, dict)
        and current.get("command") == command
        and list(current.get("args") or []) == args
    ):
        return FileChange(path, before, before), ()
    entry = tomlkit.table()
    entry["command"] = command
    entry["args"] = tomlkit.array()
    entry["args"].extend(args)
    entry.add(tomlkit.nl())  # a blank line before whatever table follows
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    servers[MCP_NAME] = entry
    after = tomlkit.dumps(doc).rstrip("\n") + "\n"
    return FileChange(path, before, after), ("MCP server `signet`",)


def plan_uninstall(locations: Locations) -> Plan:
    """The MCP entry, the wrapper and the PATH blocks out; the rest of every file as it is."""
    wrapper = tuple(codex_wrapper.uninstall_changes(locations))
    mcp = _mcp_uninstall(locations)
    return Plan(NAME, wrapper if mcp is None else (mcp, *wrapper))


def _mcp_uninstall(locations: Locations) -> FileChange | None:
    """`[mcp_servers.signet]` out when it runs signet-mcp."""
    path = config_path(locations)
    before = read_text(path)
    if before is None:
        return None
    doc = _parse(path, before)
    servers = _servers(path, doc)
    if servers is None or not _is_ours(servers.get(MCP_NAME)):
        return FileChange(path, before, before)
    del servers[MCP_NAME]
    if not servers and isinstance(servers, Table) and servers.is_super_table():
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc).rstrip()
    # A file that held only our server (we created it) goes; the backup keeps a copy.
    return FileChange(path, before, text + "\n" if text else None)


def status(locations: Locations) -> dict[str, Any]:
    """Config found, MCP entry present, the wrapper installed and first on PATH."""
    path = config_path(locations)
    facts: dict[str, Any] = {"config": str(path), "found": locations.codex_dir.is_dir()}
    if not codex_wrapper.installed(locations):
        facts["hooks"] = "none"
        if facts["found"]:
            facts["note"] = NO_WRAPPER_NOTE.replace(" (--no-wrapper)", "")
    elif codex_wrapper.on_path(locations):
        facts["hooks"] = f"wrapper {codex_wrapper.wrapper_path(locations)}"
    else:
        facts["hooks"] = f"wrapper {codex_wrapper.wrapper_path(locations)}"
        facts["note"] = "the wrapper is not first on this shell's PATH; open a new shell"
    signet = codex_wrapper.signet_of(locations)
    if signet:
        facts["hook_commands"] = [(signet,)]
    try:
        servers = _servers(path, _parse(path, read_text(path)))
        entry = servers.get(MCP_NAME) if servers is not None else None
        facts["mcp"] = _is_ours(entry)
        if isinstance(entry, dict) and facts["mcp"]:
            args = entry.get("args") or []
            facts["mcp_argv"] = [str(entry["command"]), *map(str, args)]
            facts["mcp_env"] = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
    except ConfigFileError as exc:
        facts["error"] = str(exc)
    return facts
