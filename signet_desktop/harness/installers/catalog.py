"""The harnesses Signet installs into, their plans, and the check `install --status` runs.

One place for what the CLI (`signet install|uninstall`, `install --status`) and the
inspector's Settings pane both do: plan an install or uninstall of one harness, read what is
written (`status_rows`), and check that each written command starts (`check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from signet_desktop.harness.installers import claude_code, codex, opencode, probe
from signet_desktop.harness.installers.files import Locations, Plan

HARNESSES = ("claude-code", "codex", "opencode")
BINARIES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}  # its command
LABELS = {"claude-code": "Claude Code", "codex": "Codex", "opencode": "OpenCode"}
STATUS: Mapping[str, Callable[[Locations], dict[str, Any]]] = {
    "claude-code": claude_code.status,
    "codex": codex.status,
    "opencode": opencode.status,
}


def plan_install(
    name: str, locations: Locations, url: str, http_hooks: bool = False, wrapper: bool = True
) -> Plan:
    """The install plan of one harness; everything it writes calls the daemon at `url`."""
    if name == "claude-code":
        return claude_code.plan_install(locations, claude_code.Options(url, http_hooks))
    if name == "codex":
        return codex.plan_install(locations, url, wrapper=wrapper)
    return opencode.plan_install(locations, url)


def plan_uninstall(name: str, locations: Locations) -> Plan:
    """The uninstall plan of one harness."""
    if name == "claude-code":
        return claude_code.plan_uninstall(locations)
    if name == "codex":
        return codex.plan_uninstall(locations)
    return opencode.plan_uninstall(locations)


def status_rows(locations: Locations) -> list[tuple[str, dict[str, Any]]]:
    """(harness, facts) for every harness."""
    return [(name, STATUS[name](locations)) for name in HARNESSES]


def connected(facts: Mapping[str, Any]) -> bool:
    """Whether Signet's hooks or MCP server are written into the harness's files."""
    return "error" not in facts and (facts.get("hooks", "none") != "none" or bool(facts.get("mcp")))


@dataclass(frozen=True, slots=True)
class Check:
    """One harness checked: the lines `install --status` prints for it, and how many written
    commands fail to start."""

    lines: tuple[str, ...]
    broken: int


def check(name: str, facts: Mapping[str, Any], env: Mapping[str, str], url: str) -> Check:
    """What is written for `name` and whether each written command starts from `env`
    (hooks: `hook --help`; MCP: a real `initialize`)."""
    found = "found" if facts.get("found") else "not found"
    lines = [f"{name}: config {facts['config']} ({found})"]
    if "error" in facts:
        return Check((*lines, f"  error: {facts['error']}"), 0)
    broken = 0
    lines.append(f"  hooks: {facts.get('hooks', 'none')}")
    commands = [list(argv) for argv in facts.get("hook_commands", []) if argv]
    for program in dict.fromkeys(argv[0] for argv in commands):
        result = probe.command_starts([program], env)
        broken += not result.ok
        lines.append(f"    hook command: {'ok' if result.ok else 'FAILS'} ({result.detail})")
    targets = {target for argv in commands if (target := _url_of(argv)) is not None}
    for target in sorted(targets - {url}):
        lines.append(f"    note: the hooks call {target}, not {url}")
    if not facts.get("mcp"):
        lines.append("  MCP server signet: no")
    elif facts.get("mcp_argv"):
        result = probe.mcp_initialize(facts["mcp_argv"], env, facts.get("mcp_env"))
        broken += not result.ok
        state = "yes, starts" if result.ok else "written, but FAILS to start"
        lines.append(f"  MCP server signet: {state} ({result.detail})")
    else:
        lines.append("  MCP server signet: written, with no command")
        broken += 1
    if facts.get("note"):
        lines.append(f"  note: {facts['note']}")
    return Check(tuple(lines), broken)


def _url_of(argv: list[str]) -> str | None:
    """The `--url` a written command passes (None: the default resolution)."""
    for index, word in enumerate(argv[:-1]):
        if word == "--url":
            return argv[index + 1]
    return None
