"""`signet memory-md rebuild` and `signet memory-md status`: the MEMORY.md projection."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli.context import CliContext, Subparsers, add_command, add_group

REBUILD_EXAMPLES = """\
  signet memory-md rebuild
  signet memory-md rebuild --agent reviewer
  signet memory-md rebuild --now 2026-12-01T00:00:00Z   # the ledger's 30 days end here
"""


def register(subparsers: Subparsers) -> None:
    """Add the `memory-md` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "memory-md",
        help="rebuild or inspect MEMORY.md (the generated memory summary)",
        description="MEMORY.md is rebuilt by the daemon a few seconds after memories change;\n"
        "`rebuild` does it now, `status` says where it is and how the last write went.",
        examples=REBUILD_EXAMPLES,
    )
    rebuild = add_command(
        commands,
        "rebuild",
        help="rebuild the agent's MEMORY.md now (the daemon also rebuilds it after changes)",
        examples=REBUILD_EXAMPLES,
        handler=run_rebuild,
    )
    rebuild.add_argument("--now", metavar="TIME", help="ISO-8601 time the ledger counts back from")
    status = add_command(
        commands,
        "status",
        help="where MEMORY.md is and how its last rebuild went",
        handler=run_status,
    )
    for parser in (rebuild, status):
        parser.add_argument("--agent", metavar="ID", help="agent scope (default: `default`)")
        parser.add_argument("--json", action="store_true", help="print the daemon's raw answer")


def rebuild_text(answer: Mapping[str, Any]) -> str:
    """`Rebuilt /ws/MEMORY.md (2,345 bytes; backup memory/MEMORY.backup-….md)` or unchanged."""
    if not answer.get("changed"):
        return f"Unchanged {answer.get('path')} ({answer.get('bytes', 0):,} bytes)"
    facts = [f"{answer.get('bytes', 0):,} bytes"]
    if answer.get("withheld"):
        facts.append(f"{answer['withheld']} withheld by the safety policy")
    if answer.get("backup"):
        facts.append(f"backup {answer['backup']}")
    return f"Rebuilt {answer.get('path')} ({'; '.join(facts)})"


def run_rebuild(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/memory-md/rebuild; an unwritable target is the daemon's 503 message, exit 1."""
    body: dict[str, Any] = {}
    if args.agent:
        body["agentId"] = args.agent
    if args.now:
        body["now"] = args.now
    answer = ctx.request(args, "POST", "/api/memory-md/rebuild", body=body)
    return ctx.emit(args, answer, rebuild_text)


def run_status(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /api/memory-md."""
    params = {"agentId": args.agent} if args.agent else None
    answer = ctx.request(args, "GET", "/api/memory-md", params=params)
    return ctx.emit(args, answer, status_lines)


def status_lines(answer: Mapping[str, Any]) -> list[str]:
    """Where MEMORY.md is, whether it exists, and how the last rebuild went."""
    last = answer.get("last") or {}
    state = last.get("state", "not rebuilt since the daemon started")
    exists = "exists" if answer.get("exists") else "missing"
    lines = [f"{answer.get('path')} ({exists}); last rebuild: {state}"]
    if last.get("error"):
        lines.append(f"error: {last['error']}")
    return lines
