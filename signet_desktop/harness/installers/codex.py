"""Codex CLI: the MCP server under `[mcp_servers.signet]` in `$CODEX_HOME/config.toml`.

Edited with tomlkit, so the user's comments, order and formatting stay. Session hooks are not
installed: Codex has no hook settings, and Signet's way (a `codex` wrapper first on PATH plus
a block in the shell rc files) rewrites the user's shell setup; `signet hook ... -H codex`
is there for anyone who wraps Codex themselves (docs/HOOKS.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from signet_desktop.harness.installers.files import (
    ConfigFileError,
    FileChange,
    Locations,
    Plan,
    read_text,
)

NAME = "codex"
MCP_NAME = "signet"
SESSION_NOTE = (
    "Codex session hooks are not installed (Codex has no hook settings); see docs/HOOKS.md"
    " for wrapping `codex` with `signet hook session-start|session-end -H codex`"
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


def plan_install(locations: Locations) -> Plan:
    """`[mcp_servers.signet]` with `command` = signet-mcp (replaced when it differs)."""
    path = config_path(locations)
    before = read_text(path)
    doc = _parse(path, before)
    servers = _servers(path, doc)
    command = locations.executable("signet-mcp")
    current = servers.get(MCP_NAME) if servers is not None else None
    if isinstance(current, dict) and current.get("command") == command and not current.get("args"):
        return Plan(NAME, (FileChange(path, before, before),), (SESSION_NOTE,))
    entry = tomlkit.table()
    entry["command"] = command
    entry["args"] = tomlkit.array()
    entry.add(tomlkit.nl())  # a blank line before whatever table follows
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    servers[MCP_NAME] = entry
    after = tomlkit.dumps(doc).rstrip("\n") + "\n"
    return Plan(NAME, (FileChange(path, before, after),), ("MCP server `signet`", SESSION_NOTE))


def plan_uninstall(locations: Locations) -> Plan:
    """`[mcp_servers.signet]` out when it runs signet-mcp; the rest of the file as it is."""
    path = config_path(locations)
    before = read_text(path)
    if before is None:
        return Plan(NAME)
    doc = _parse(path, before)
    servers = _servers(path, doc)
    if servers is None or not _is_ours(servers.get(MCP_NAME)):
        return Plan(NAME, (FileChange(path, before, before),))
    del servers[MCP_NAME]
    if not servers and isinstance(servers, Table) and servers.is_super_table():
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc).rstrip()
    # A file that held only our server (we created it) goes; the backup keeps a copy.
    return Plan(NAME, (FileChange(path, before, text + "\n" if text else None),))


def status(locations: Locations) -> dict[str, Any]:
    """Config found, MCP entry present; hooks are never installed for Codex."""
    path = config_path(locations)
    facts: dict[str, Any] = {"config": str(path), "found": locations.codex_dir.is_dir()}
    facts["hooks"] = "none"
    facts["note"] = SESSION_NOTE
    try:
        servers = _servers(path, _parse(path, read_text(path)))
        facts["mcp"] = servers is not None and _is_ours(servers.get(MCP_NAME))
    except ConfigFileError as exc:
        facts["error"] = str(exc)
    return facts
