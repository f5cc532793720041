"""`signet install <harness>`, `signet uninstall <harness>`, `signet install --status`.

Each harness has one installer module (`harness/installers/`) that plans whole-file changes;
this module prints the diff (`--dry-run`) or applies the plan (one backup per file, atomic
write, noted in the install ledger so an uninstall gives back the bytes it found), and shows
per harness what is connected and whether the daemon answers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from signet_desktop.cli.context import CliContext, ExitCode, Subparsers, add_command
from signet_desktop.client.daemon import DaemonClient, DaemonResponseError, DaemonUnreachable
from signet_desktop.harness.installers.catalog import (
    HARNESSES,
    check,
    plan_install,
    plan_uninstall,
    status_rows,
)
from signet_desktop.harness.installers.files import (
    BACKUP_SUFFIX,
    ConfigFileError,
    Locations,
    ManualEditRequired,
    Plan,
    apply,
    diff,
)
from signet_desktop.harness.installers.ledger import InstallLedger

ALIASES = {"claude": "claude-code", "claudecode": "claude-code", "open-code": "opencode"}
STATUS_TIMEOUT_S = 2.0
INSTALL_EXAMPLES = """\
  signet install claude-code --dry-run   # show the diff, write nothing
  signet install claude-code             # `signet hook` command hooks + MCP server
  signet install claude-code --url http://127.0.0.1:3851   # a daemon on another port
  signet install claude-code --http-hooks   # HTTP hooks where Claude Code runs them
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
        "The first time a file changes it is backed up (<file>.signet-backup, one per file);\n"
        "your own hooks, MCP servers, comments and layout stay. Every command is written as\n"
        "an absolute path, so the harness finds it from its own PATH. --url (else\n"
        "SIGNET_DAEMON_URL, else\n"
        "http://127.0.0.1:3850) is the daemon every hook, wrapper, plugin and MCP server calls.",
        examples=INSTALL_EXAMPLES,
        handler=run_install,
    )
    install.add_argument("harness", nargs="?", type=_harness, help=", ".join(HARNESSES))
    install.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    hooks = install.add_mutually_exclusive_group()
    hooks.add_argument(
        "--command-hooks",
        action="store_true",
        help="claude-code: `signet hook` command hooks for every event (the default)",
    )
    hooks.add_argument(
        "--http-hooks",
        action="store_true",
        help="claude-code: HTTP hooks for the prompt, compaction and session end (SessionStart"
        " stays a command: Claude Code runs no HTTP hook there); a daemon that is down then"
        " shows as a hook error in Claude Code",
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
        description="A file nobody changed since `signet install` wrote it gets back the bytes\n"
        "it had before (or is removed when install created it); a file changed since has\n"
        "only Signet's entries taken out, in place, and its backup is kept.",
        examples=UNINSTALL_EXAMPLES,
        handler=run_uninstall,
    )
    uninstall.add_argument("harness", type=_harness, help=", ".join(HARNESSES))
    uninstall.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")


def run_install(args: argparse.Namespace, ctx: CliContext) -> int:
    """`signet install`."""
    if args.status:
        return run_status(args, ctx)
    if args.harness is None:
        ctx.warn("signet: name a harness (claude-code, codex, opencode) or use --status")
        return ExitCode.USAGE
    if (args.command_hooks or args.http_hooks) and args.harness != "claude-code":
        flag = "--command-hooks" if args.command_hooks else "--http-hooks"
        ctx.warn(f"signet: {flag} applies to claude-code only")
        return ExitCode.USAGE
    if args.no_wrapper and args.harness != "codex":
        ctx.warn("signet: --no-wrapper applies to codex only")
        return ExitCode.USAGE
    locations = Locations.from_env(ctx.env)
    url = ctx.daemon_url(args)
    wrapper = not args.no_wrapper
    return _carry_out(
        ctx,
        lambda: plan_install(args.harness, locations, url, args.http_hooks, wrapper),
        args.dry_run,
        InstallLedger.of(locations),
    )


def run_uninstall(args: argparse.Namespace, ctx: CliContext) -> int:
    """`signet uninstall`."""
    locations = Locations.from_env(ctx.env)
    ledger = InstallLedger.of(locations)
    return _carry_out(
        ctx,
        lambda: ledger.restoring(plan_uninstall(args.harness, locations)),
        args.dry_run,
        ledger,
        uninstall=True,
    )


def _carry_out(
    ctx: CliContext,
    make_plan: Callable[[], Plan],
    dry_run: bool,
    ledger: InstallLedger,
    *,
    uninstall: bool = False,
) -> int:
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
        made = apply(plan, ledger, uninstall=uninstall)
        backups = {b.name.removesuffix(BACKUP_SUFFIX): b for b in made}
        for change in plan.pending:
            verb = "removed" if change.after is None else "updated"
            if change.before is None:
                verb = "created"
            backup = backups.get(change.path.name)
            ctx.print(f"{verb} {change.path}" + (f" (backup {backup.name})" if backup else ""))
    for note in plan.notes:
        ctx.print(f"  {note}")
    return ExitCode.OK


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
    """`signet install --status`: per harness what is written, and whether each written
    command starts from this environment (hooks: `hook --help`; MCP: a real `initialize`)."""
    url = ctx.daemon_url(args)
    with DaemonClient(url, timeout=STATUS_TIMEOUT_S, token=ctx.env.get("SIGNET_TOKEN")) as client:
        ctx.print(f"daemon {url}: {_daemon_state(client)}")
    broken = 0
    for name, facts in status_rows(Locations.from_env(ctx.env)):
        result = check(name, facts, ctx.env, url)
        broken += result.broken
        for line in result.lines:
            ctx.print(line)
    if broken:
        ctx.print(f"{broken} written command(s) do not start: run `signet install <harness>` again")
        return ExitCode.FAILURE
    return ExitCode.OK
