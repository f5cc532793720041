"""`signet install <harness>`, `signet uninstall <harness>`, `signet install --status`.

Each harness has one installer module (`harness/installers/`) that plans whole-file changes;
this module prints the diff (`--dry-run`) or applies the plan (backup, atomic write), and
shows per harness what is connected and whether the daemon answers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from signet_desktop.cli.context import CliContext, ExitCode, Subparsers, add_command
from signet_desktop.client.daemon import DaemonClient, DaemonResponseError, DaemonUnreachable
from signet_desktop.harness.installers import claude_code, codex, opencode
from signet_desktop.harness.installers.files import (
    ConfigFileError,
    Locations,
    ManualEditRequired,
    Plan,
    apply,
    diff,
)

HARNESSES = ("claude-code", "codex", "opencode")
ALIASES = {"claude": "claude-code", "claudecode": "claude-code", "open-code": "opencode"}
STATUS_TIMEOUT_S = 2.0
STATUS: Mapping[str, Callable[[Locations], dict[str, Any]]] = {
    "claude-code": claude_code.status,
    "codex": codex.status,
    "opencode": opencode.status,
}

INSTALL_EXAMPLES = """\
  signet install claude-code --dry-run   # show the diff, write nothing
  signet install claude-code             # HTTP hooks + MCP server
  signet install claude-code --command-hooks
  signet install codex                   # MCP server + the codex wrapper (session hooks)
  signet install codex --no-wrapper      # MCP server only; shell files untouched
  signet install opencode
  signet install --status
"""
UNINSTALL_EXAMPLES = """\
  signet uninstall claude-code --dry-run
  signet uninstall opencode
"""


def _harness(text: str) -> str:
    name = ALIASES.get(text.strip().lower(), text.strip().lower())
    if name not in HARNESSES:
        raise argparse.ArgumentTypeError(
            f"unknown harness {text!r} (one of {', '.join(HARNESSES)})"
        )
    return name


def register(subparsers: Subparsers) -> None:
    """Add `install` and `uninstall` to the `signet` parser."""
    install = add_command(
        subparsers,
        "install",
        help="connect a harness (claude-code, codex, opencode): hooks and the MCP server",
        description="Merge Signet's hooks and MCP server into a harness's own config files.\n"
        "Every changed file is backed up first (<file>.signet-backup-<UTC time>); your own\n"
        "hooks and MCP servers stay. --url is the daemon address the hooks call.",
        examples=INSTALL_EXAMPLES,
        handler=run_install,
    )
    install.add_argument("harness", nargs="?", type=_harness, help=", ".join(HARNESSES))
    install.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    install.add_argument(
        "--command-hooks",
        action="store_true",
        help="claude-code: `signet hook` command hooks instead of HTTP hooks (older versions)",
    )
    install.add_argument(
        "--no-wrapper",
        action="store_true",
        help="codex: the MCP server only, no `codex` wrapper or PATH block in shell files",
    )
    install.add_argument(
        "--status", action="store_true", help="show what is connected, per harness"
    )
    uninstall = add_command(
        subparsers,
        "uninstall",
        help="disconnect a harness: remove exactly what `signet install` added",
        examples=UNINSTALL_EXAMPLES,
        handler=run_uninstall,
    )
    uninstall.add_argument("harness", type=_harness, help=", ".join(HARNESSES))
    uninstall.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")


def plan_install(
    name: str, locations: Locations, url: str, command_hooks: bool, wrapper: bool = True
) -> Plan:
    """The install plan of one harness."""
    if name == "claude-code":
        return claude_code.plan_install(locations, claude_code.Options(url, command_hooks))
    if name == "codex":
        return codex.plan_install(locations, wrapper=wrapper)
    return opencode.plan_install(locations)


def plan_uninstall(name: str, locations: Locations) -> Plan:
    """The uninstall plan of one harness."""
    if name == "claude-code":
        return claude_code.plan_uninstall(locations)
    if name == "codex":
        return codex.plan_uninstall(locations)
    return opencode.plan_uninstall(locations)


def run_install(args: argparse.Namespace, ctx: CliContext) -> int:
    """`signet install`."""
    if args.status:
        return run_status(args, ctx)
    if args.harness is None:
        ctx.warn("signet: name a harness (claude-code, codex, opencode) or use --status")
        return ExitCode.USAGE
    if args.command_hooks and args.harness != "claude-code":
        ctx.warn("signet: --command-hooks applies to claude-code only")
        return ExitCode.USAGE
    if args.no_wrapper and args.harness != "codex":
        ctx.warn("signet: --no-wrapper applies to codex only")
        return ExitCode.USAGE
    locations = Locations.from_env(ctx.env)
    url = ctx.daemon_url(args)
    wrapper = not args.no_wrapper
    return _carry_out(
        ctx,
        lambda: plan_install(args.harness, locations, url, args.command_hooks, wrapper),
        args.dry_run,
    )


def run_uninstall(args: argparse.Namespace, ctx: CliContext) -> int:
    """`signet uninstall`."""
    locations = Locations.from_env(ctx.env)
    return _carry_out(ctx, lambda: plan_uninstall(args.harness, locations), args.dry_run)


def _carry_out(ctx: CliContext, make_plan: Callable[[], Plan], dry_run: bool) -> int:
    try:
        plan = make_plan()
    except ConfigFileError as exc:
        ctx.warn(f"signet: {exc}")
        return ExitCode.FAILURE
    except ManualEditRequired as exc:
        ctx.warn(f"signet: {exc}")
        return ExitCode.FAILURE
    if dry_run:
        text = diff(plan)
        ctx.print(text.rstrip("\n") if text else f"{plan.harness}: nothing would change")
        return ExitCode.OK
    if not plan.pending:
        ctx.print(f"{plan.harness}: nothing to change")
    else:
        backups = {b.name.split(".signet-backup-")[0]: b for b in apply(plan)}
        for change in plan.pending:
            verb = "removed" if change.after is None else "updated"
            if change.before is None:
                verb = "created"
            backup = backups.get(change.path.name)
            ctx.print(f"{verb} {change.path}" + (f" (backup {backup.name})" if backup else ""))
    for note in plan.notes:
        ctx.print(f"  {note}")
    return ExitCode.OK


def status_rows(locations: Locations) -> list[tuple[str, dict[str, Any]]]:
    """(harness, facts) for every harness."""
    return [(name, STATUS[name](locations)) for name in HARNESSES]


def _daemon_state(client: DaemonClient) -> str:
    try:
        health = client.get("/health")
    except DaemonUnreachable as exc:
        return f"not reachable ({exc.reason})"
    except DaemonResponseError as exc:
        return f"answered HTTP {exc.status}"
    state = health.get("status", "?") if isinstance(health, dict) else "?"
    return f"reachable ({state})"


def run_status(args: argparse.Namespace, ctx: CliContext) -> int:
    """`signet install --status`."""
    url = ctx.daemon_url(args)
    with DaemonClient(url, timeout=STATUS_TIMEOUT_S, token=ctx.env.get("SIGNET_TOKEN")) as client:
        ctx.print(f"daemon {url}: {_daemon_state(client)}")
    for name, facts in status_rows(Locations.from_env(ctx.env)):
        found = "found" if facts.get("found") else "not found"
        ctx.print(f"{name}: config {facts['config']} ({found})")
        if "error" in facts:
            ctx.print(f"  error: {facts['error']}")
            continue
        ctx.print(f"  hooks: {facts.get('hooks', 'none')}")
        ctx.print(f"  MCP server signet: {'yes' if facts.get('mcp') else 'no'}")
        if facts.get("note"):
            ctx.print(f"  note: {facts['note']}")
    return ExitCode.OK
