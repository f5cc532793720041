"""`signet dream status|trigger|passes|show|revert`: Dreaming passes through the daemon."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.context import CliContext, ExitCode, Subparsers, add_command
from signet_desktop.cli.context import agent_and_json_options as scope_options

MODES = ("incremental", "compact", "incremental-hygiene", "incremental-content")
STATUSES = ("running", "completed", "failed", "cancelled")
EXAMPLES = """\
  signet dream status
  signet dream trigger --mode incremental-hygiene
  signet dream passes --status failed
  signet dream show 3f2a…
  signet dream revert 3f2a… --dry-run
"""


def register(subparsers: Subparsers) -> None:
    """Add the `dream` group to the `signet` parser."""
    group = add_command(
        subparsers,
        "dream",
        help="Dreaming: trigger, inspect and revert consolidation passes",
        description="Dreaming consolidates an agent's evidence into its knowledge graph in\n"
        "bounded, audited passes; every change cites its evidence and a pass can be undone.",
        examples=EXAMPLES,
        connects=False,
    )
    commands = group.add_subparsers(dest="dream_command", metavar="COMMAND", required=True)
    status = add_command(
        commands, "status", help="whether a pass runs, is due, or why Dreaming is idle",
        handler=run_status,
    )  # fmt: skip
    trigger = add_command(
        commands, "trigger", help="start a pass now (answers at once; see `show`)",
        handler=run_trigger,
    )  # fmt: skip
    trigger.add_argument("--mode", choices=MODES, default="incremental", help="pass mode")
    passes = add_command(commands, "passes", help="the agent's passes, newest first",
                         handler=run_passes)  # fmt: skip
    passes.add_argument("--status", choices=STATUSES, help="only passes in this status")
    passes.add_argument("--limit", type=int, default=20, help="at most this many (1-200)")
    show = add_command(
        commands, "show", help="one pass: window, runbook, tool calls, operations",
        handler=run_show,
    )  # fmt: skip
    show.add_argument("pass_id", metavar="PASS", help="the pass id")
    revert = add_command(
        commands, "revert", help="undo a pass's applied changes (refused when later work"
        " depends on them)", handler=run_revert,
    )  # fmt: skip
    revert.add_argument("pass_id", metavar="PASS", help="the pass id")
    revert.add_argument("--dry-run", action="store_true", help="show what would change")
    for parser in (status, trigger, passes, show, revert):
        scope_options(parser)


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
    with ctx.client(args) as client:
        answer = client.get("/api/dream/status", _params(args))
    ctx.print(output.to_json_text(answer) if args.json else status_text(answer))
    return ExitCode.OK


def run_trigger(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"mode": args.mode}
    if args.agent:
        body["agentId"] = args.agent
    with ctx.client(args) as client:
        answer = client.post("/api/dream/trigger", body)
    text = f"Started pass {answer.get('passId')} ({answer.get('mode')}); `signet dream show` it"
    ctx.print(output.to_json_text(answer) if args.json else text)
    return ExitCode.OK


def run_passes(args: argparse.Namespace, ctx: CliContext) -> int:
    with ctx.client(args) as client:
        answer = client.get(
            "/api/dream/passes", _params(args, status=args.status, limit=args.limit)
        )
    if args.json:
        ctx.print(output.to_json_text(answer))
    elif not answer.get("passes"):
        ctx.print("No passes.")
    else:
        ctx.print("\n".join(pass_line(p) for p in answer["passes"]))
    return ExitCode.OK


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    with ctx.client(args) as client:
        answer = client.get(f"/api/dream/passes/{args.pass_id}", _params(args))
    ctx.print(output.to_json_text(answer) if args.json else show_text(answer))
    return ExitCode.OK


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
    with ctx.client(args) as client:
        answer = client.post(f"/api/dream/passes/{args.pass_id}/revert", body)
    ctx.print(output.to_json_text(answer) if args.json else revert_text(answer))
    return ExitCode.OK
