"""`signet dream status|trigger|passes|show|revert`: Dreaming passes through the daemon.

`signet dream setup` is the one local command: it finds the agent harnesses on this machine
and, with the user's consent, binds Dreaming to one in the workspace's agent.yaml.
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
)
from signet_desktop.cli.context import agent_and_json_options as scope_options
from signet_desktop.config.inference_binding import (
    BindingError,
    BindingResult,
    bind_memory_extraction,
)
from signet_desktop.config.workspace import WorkspacePaths, resolve_workspace
from signet_desktop.inference import harness_discovery
from signet_desktop.inference.harness_discovery import Harness

MODES = ("incremental", "compact", "incremental-hygiene", "incremental-content")
STATUSES = ("running", "completed", "failed", "cancelled")
EXAMPLES = """\
  signet dream status
  signet dream trigger --mode incremental-hygiene
  signet dream passes --status failed
  signet dream show 3f2a…
  signet dream revert 3f2a… --dry-run
  signet dream setup --list
  signet dream setup --agent ~/.local/bin/claude --yes
"""
SETUP_EXAMPLES = """\
  signet dream setup                 # list, then ask before using Claude Code
  signet dream setup --agent codex   # Codex instead (or --agent opencode)
  signet dream setup --list          # only list what is installed
  signet dream setup --yes           # agree without a prompt (scripts)
  signet dream setup --agent /opt/claude/bin/claude --replace
"""
INSTALL_CLAUDE = "npm install -g @anthropic-ai/claude-code"
INSTALL_CODEX = "npm install -g @openai/codex"
# What a pass spends, per harness, for the consent question
INSTALL_OPENCODE = "npm install -g opencode-ai"
SPENDS = {
    "claude": "Claude subscription or API credit",
    "codex": "ChatGPT plan or OpenAI credit",
    "opencode": "model provider's credit or plan",
}
TARGETS = {"claude": "claude-code", "codex": "codex", "opencode": "opencode"}  # targets.<name>
RESTART_NOTE = (
    "The daemon reads agent.yaml only when it starts: restart it (quit and reopen Signet"
    " Desktop, or stop and start `signet-desktop --headless`) for Dreaming to use this."
)


def register(subparsers: Subparsers) -> None:
    """Add the `dream` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "dream",
        help="Dreaming: trigger, inspect and revert consolidation passes",
        description="Dreaming consolidates an agent's evidence into its knowledge graph in\n"
        "bounded, audited passes; every change cites its evidence and a pass can be undone.",
        examples=EXAMPLES,
    )
    status = add_command(
        commands,
        "status",
        help="whether a pass runs, is due, or why Dreaming is idle",
        handler=run_status,
    )
    trigger = add_command(
        commands,
        "trigger",
        help="start a pass now (answers at once; see `show`)",
        handler=run_trigger,
    )
    trigger.add_argument("--mode", choices=MODES, default="incremental", help="pass mode")
    passes = add_command(
        commands, "passes", help="the agent's passes, newest first", handler=run_passes
    )
    passes.add_argument("--status", choices=STATUSES, help="only passes in this status")
    passes.add_argument("--limit", type=int, default=20, help="at most this many (1-200)")
    show = add_command(
        commands,
        "show",
        help="one pass: window, runbook, tool calls, operations",
        handler=run_show,
    )
    show.add_argument("pass_id", metavar="PASS", help="the pass id")
    revert = add_command(
        commands,
        "revert",
        help="undo a pass's applied changes (refused when later work depends on them)",
        handler=run_revert,
    )
    revert.add_argument("pass_id", metavar="PASS", help="the pass id")
    revert.add_argument("--dry-run", action="store_true", help="show what would change")
    for parser in (status, trigger, passes, show, revert):
        scope_options(parser)
    _register_setup(commands)


def _register_setup(commands: Subparsers) -> None:
    setup = add_command(
        commands,
        "setup",
        help="run Dreaming through your own agent harness (Claude Code, Codex or OpenCode);"
        " edits agent.yaml",
        description="Find the agent harnesses installed here (claude, codex, opencode) and, when\n"
        "you agree, bind Dreaming (inference.workloads.memoryExtraction) to an executor: acpx\n"
        "target in the workspace's agent.yaml. Needs no running daemon.",
        examples=SETUP_EXAMPLES,
        handler=run_setup,
        connects=False,
    )
    setup.add_argument(
        "--agent",
        metavar="claude|codex|PATH",
        help="the harness to use: a name found here, or the path of its binary",
    )
    setup.add_argument("--yes", action="store_true", help="agree without asking")
    setup.add_argument(
        "--replace",
        action="store_true",
        help="replace a memoryExtraction binding (or same-named target) set to something else",
    )
    setup.add_argument("--list", action="store_true", help="only list the harnesses found")
    setup.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace to configure (default: $SIGNET_WORKSPACE, $SIGNET_PATH, else ~/.agents)",
    )


def _params(args: argparse.Namespace, **extra: Any) -> dict[str, Any] | None:
    params = {k: v for k, v in extra.items() if v is not None}
    if args.agent:
        params["agentId"] = args.agent
    return params or None


def _mutations(p: Mapping[str, Any]) -> str:
    m = p.get("mutations") or {}
    return (
        f"{m.get('applied', 0)} applied, {m.get('skipped', 0)} skipped, {m.get('failed', 0)} failed"
    )


def pass_line(p: Mapping[str, Any]) -> str:
    """`<id>  completed  incremental  (manual)  2026-…  1,234 tokens  3 applied, …`."""
    usage = p.get("usage") or {}
    return (
        f"{p.get('id')}  {p.get('status'):<9}  {p.get('mode')}  ({p.get('triggerReason')})"
        f"  {p.get('startedAt')}  {usage.get('totalTokens', 0):,} tokens  {_mutations(p)}"
    )


def status_text(answer: Mapping[str, Any]) -> str:
    lines = []
    if answer.get("running"):
        lines.append(f"Running: pass {answer.get('runningPassId')}")
    else:
        idle = answer.get("idle")
        lines.append(
            f"Idle ({idle}): {answer.get('detail')}" if idle else str(answer.get("detail"))
        )
    if answer.get("until"):
        lines.append(f"next attempt after {answer['until']}")
    pending = answer.get("pending") or {}
    lines.append(
        f"pending: {pending.get('sources', 0)} sources, {pending.get('tokens', 0):,} of"
        f" {pending.get('tokenThreshold', 0):,} tokens, {pending.get('attention', 0)} attention"
    )
    inference = answer.get("inference") or {}
    if not inference.get("configured"):
        lines.append(f"no inference provider: set {inference.get('key')}")
    last = answer.get("lastPass")
    if last:
        lines.append("last pass: " + pass_line(last))
    return "\n".join(lines)


def show_text(p: Mapping[str, Any]) -> str:
    lines = [pass_line(p)]
    if p.get("summary"):
        lines.append(f"summary: {p['summary']}")
    if p.get("error"):
        lines.append(f"error: {p['error']}")
    window = p.get("evidenceWindow") or {}
    lines.append(
        f"evidence: {len(window.get('items', []))} sources, {window.get('tokens', 0):,} tokens;"
        f" {len(window.get('leftOut', []))} left out; {len(p.get('exclusions', []))} excluded"
    )
    lines.append("tool calls:")
    for call in p.get("toolCalls", []):
        error = f" — {call['error']}" if call.get("error") else ""
        lines.append(
            f"  {call['seq']:>3} {call['tool']} {call['status']} {call['durationMs']} ms{error}"
        )
    lines.append("operations:")
    for op in p.get("operations", []):
        reason = f" ({op.get('code')}: {op.get('reason')})" if op.get("code") else ""
        lines.append(f"  {op.get('seq'):>3} {op.get('operation')} {op.get('status')}{reason}")
    return "\n".join(lines)


def run_status(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "GET", "/api/dream/status", params=_params(args))
    return ctx.emit(args, answer, status_text)


def run_trigger(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"mode": args.mode}
    if args.agent:
        body["agentId"] = args.agent
    answer = ctx.request(args, "POST", "/api/dream/trigger", body=body)
    text = f"Started pass {answer.get('passId')} ({answer.get('mode')}); `signet dream show` it"
    return ctx.emit(args, answer, text)


def run_passes(args: argparse.Namespace, ctx: CliContext) -> int:
    params = _params(args, status=args.status, limit=args.limit)
    answer = ctx.request(args, "GET", "/api/dream/passes", params=params)
    return ctx.emit(args, answer, passes_lines)


def passes_lines(answer: Mapping[str, Any]) -> list[str]:
    """A line per pass, or `No passes.`."""
    return [pass_line(p) for p in answer.get("passes") or []] or ["No passes."]


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "GET", f"/api/dream/passes/{args.pass_id}", params=_params(args))
    return ctx.emit(args, answer, show_text)


def revert_text(answer: Mapping[str, Any]) -> str:
    """`Would revert pass P: 2 change(s)` then one line per change and per blocker."""
    if answer.get("alreadyReverted"):
        return f"Pass {answer.get('passId')} is already reverted"
    verb = "Would revert" if answer.get("dryRun") else "Reverted"
    changes = answer.get("changes") or []
    lines = [f"{verb} pass {answer.get('passId')}: {len(changes)} change(s)"]
    for change in changes:
        lines.append(
            f"  {change.get('action')} {change.get('targetTable')} {change.get('targetId')}"
        )
    for blocker in answer.get("blockers") or []:
        by = f" (by pass {blocker['byPassId']})" if blocker.get("byPassId") else ""
        lines.append(
            f"  blocked: {blocker.get('targetTable')} {blocker.get('targetId')}:"
            f" {blocker.get('reason')}{by}"
        )
    return "\n".join(lines)


def run_revert(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"dryRun": bool(args.dry_run)}
    if args.agent:
        body["agentId"] = args.agent
    answer = ctx.request(args, "POST", f"/api/dream/passes/{args.pass_id}/revert", body=body)
    return ctx.emit(args, answer, revert_text)


def harness_lines(found: tuple[Harness, ...]) -> list[str]:
    """One aligned line per harness: label, version, path, whether Dreaming can use it."""
    rows = [
        (
            h.label,
            h.version or "version unknown",
            str(h.path),
            "supported" if h.supported else "not supported by Dreaming yet",
        )
        for h in found
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        "  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3]
        for row in rows
    ]


def _nothing_found(home: Path) -> str:
    names = ", ".join(kind.name for kind in harness_discovery.KINDS)
    places = ", ".join(harness_discovery.looked_in(home))
    return (
        f"No agent harness found: looked for {names} on PATH and in {places}.\n"
        f"To dream through Claude Code, install it ({INSTALL_CLAUDE}) and sign in once by"
        f" running `claude`; for Codex, {INSTALL_CODEX} and `codex login`; for OpenCode,"
        f" {INSTALL_OPENCODE} and `opencode auth login`. Then run `signet dream setup` again."
    )


def _chosen(args: argparse.Namespace, found: tuple[Harness, ...]) -> Harness:
    """The harness `--agent` names, else the first supported one found; CliUsageError if none."""
    wanted = args.agent
    if not wanted:
        usable = [h for h in found if h.supported]
        if not usable:
            raise CliUsageError(
                "no harness Dreaming supports was found; Dreaming runs through Claude Code"
                f" ({INSTALL_CLAUDE}), Codex ({INSTALL_CODEX}) or OpenCode ({INSTALL_OPENCODE})"
            )
        return usable[0]
    if wanted in harness_discovery.KINDS_BY_NAME:
        match = next((h for h in found if h.name == wanted), None)
        if match is None:
            raise CliUsageError(f"{wanted} was not found here; pass --agent PATH to its binary")
        return match
    if os.sep not in wanted and "/" not in wanted and not wanted.startswith("~"):
        known = "|".join(harness_discovery.KINDS_BY_NAME)
        raise CliUsageError(f"--agent takes {known} or the path of a harness binary")
    inspected = harness_discovery.inspect(Path(os.path.expanduser(wanted)))
    if inspected is None:
        raise CliUsageError(f"{wanted} is not an executable file")
    return inspected


def _consented(args: argparse.Namespace, ctx: CliContext, harness: Harness) -> bool | None:
    """True on --yes or a typed yes, False on anything else, None when no one can be asked."""
    if args.yes:
        return True
    if not ctx.stdin.isatty():
        return None
    ctx.out.write(
        f"Use {harness.label} ({harness.path}) for Dreaming? Each pass runs it headless and"
        f" spends your {SPENDS.get(harness.name, 'subscription or API credit')}. [y/N] "
    )
    ctx.out.flush()
    answer = ctx.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def setup_result_lines(result: BindingResult, harness: Harness) -> list[str]:
    """What was written where, the backup, and when the daemon sees it."""
    if result.action == "unchanged":
        return [
            f"{result.path} already sends Dreaming to {harness.label} ({harness.path});"
            " nothing written.",
            "(A daemon started before it was written needs a restart to use it.)",
        ]
    verb = {"created": "Created", "appended": "Added to", "merged": "Updated"}[result.action]
    lines = [
        f"{verb} {result.path}: inference.targets.{result.target} (executor acpx, agent"
        f" {harness.path}) serves inference.workloads.memoryExtraction."
    ]
    if result.previous:
        lines.append(f"Dreaming used {result.previous} before.")
    if result.backup is not None:
        lines.append(
            f"The file was rewritten through YAML, which does not keep comments; the previous"
            f" file is {result.backup}."
        )
    lines.append(RESTART_NOTE)
    return lines


def _yes_command(args: argparse.Namespace) -> str:
    words = ["signet dream setup"]
    if args.agent:
        words.append(f"--agent {shlex.quote(args.agent)}")
    if args.replace:
        words.append("--replace")
    if args.workspace:
        words.append(f"--workspace {shlex.quote(args.workspace)}")
    return " ".join([*words, "--yes"])


def run_setup(args: argparse.Namespace, ctx: CliContext) -> int:
    """List the harnesses here; with consent, bind memoryExtraction to the chosen one."""
    path_var, home = harness_discovery.search_env(ctx.env)
    found = harness_discovery.discover(path_var=path_var, home=home)
    if found:
        ctx.print("Agent harnesses found:")
        ctx.print("\n".join(harness_lines(found)))
    elif args.list or not args.agent:
        ctx.print(_nothing_found(home))
        return ExitCode.OK if args.list else ExitCode.FAILURE
    if args.list:
        return ExitCode.OK
    harness = _chosen(args, found)
    if harness.name not in harness_discovery.KINDS_BY_NAME:
        raise CliUsageError(
            f"{harness.path} is not a harness Dreaming knows: it tells them apart by file name,"
            " and Claude Code's binary is named `claude`, Codex's `codex`, OpenCode's `opencode`"
        )
    if not harness.supported:
        raise CliUsageError(
            f"{harness.label} ({harness.path}) is not supported by Dreaming yet; Claude Code,"
            " Codex and OpenCode are"
        )
    consent = _consented(args, ctx, harness)
    if consent is None:
        ctx.warn(
            f"Not changed: there is no terminal to ask whether {harness.label} may run Dreaming"
            f" passes (each spends your {SPENDS.get(harness.name, 'subscription or API credit')})."
            " Run"
            f" `{_yes_command(args)}` to agree."
        )
        return ExitCode.USAGE
    if not consent:
        ctx.print("Not changed.")
        return ExitCode.FAILURE
    paths = WorkspacePaths.for_root(resolve_workspace(args.workspace, ctx.env))
    try:
        result = bind_memory_extraction(
            paths,
            str(harness.path),
            target=TARGETS.get(harness.name, "claude-code"),
            replace=args.replace,
        )
    except BindingError as exc:  # refused (see --replace), unreadable, or would not load
        ctx.warn(f"Not changed: {exc}")
        return ExitCode.FAILURE
    ctx.print("\n".join(setup_result_lines(result, harness)))
    return ExitCode.OK
