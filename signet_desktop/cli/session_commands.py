"""`signet sessions search QUERY`: what past sessions said, turn by turn, over HTTP.

Runs recall's `transcript` channel alone (`POST /api/memory/recall` with
`channels: ["transcript"]`): every hit is one turn of a captured or imported session, with its
session key, turn, speaker and time, through the same scope and content-safety gate as recall.
`signet recall` shows the same turns after the memories.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.argtypes import time_bound, unit_float
from signet_desktop.cli.context import (
    CliContext,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)
from signet_desktop.cli.memory_commands import add_query_arguments, query_text

MAX_LIMIT = 100
SESSIONS_EXAMPLES = """\
  signet sessions search "which database does billing use"
  signet sessions search "flaky test" --project ~/src/shop --since 7d -l 5
  signet sessions search "deploy" --expand        # the turns around each hit
"""


def register(subparsers: Subparsers) -> None:
    """Add the `sessions` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "sessions",
        help="search what past sessions said (captured and imported transcripts)",
        description="Search retained session transcripts turn by turn.",
        examples=SESSIONS_EXAMPLES,
    )
    search = add_command(
        commands,
        "search",
        help="find the turns of past sessions that match a query",
        description="BM25 over every retained turn of the agent's sessions (hook captures and\n"
        "imports), best first; prompt-injection turns are never shown, secrets redacted.",
        examples=SESSIONS_EXAMPLES,
        handler=run_search,
    )
    add_query_arguments(search, most=MAX_LIMIT, noun="turns")
    search.add_argument("--project", help="only sessions of this project")
    search.add_argument("--since", metavar="WHEN", type=time_bound, help="turns at or after WHEN")
    search.add_argument("--until", metavar="WHEN", type=time_bound, help="turns at or before WHEN")
    search.add_argument("--min-score", type=unit_float, metavar="X", help="drop hits scoring < X")
    search.add_argument("--expand", action="store_true", help="show the turns around each hit")
    agent_and_json_options(search)


def search_body(args: argparse.Namespace) -> dict[str, Any]:
    """The recall request for parsed `sessions search` arguments."""
    body: dict[str, Any] = {
        "query": query_text(args),
        "limit": args.limit,
        "channels": ["transcript"],
        "project": args.project,
        "since": args.since,
        "until": args.until,
        "min_score": args.min_score,
        "expand": True if args.expand else None,
        "agentId": args.agent,
    }
    return {key: value for key, value in body.items() if value is not None}


def run_search(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/memory/recall with the transcript channel only."""
    answer = ctx.request(args, "POST", "/api/memory/recall", body=search_body(args))
    return ctx.emit(args, answer, turn_lines)


def turn_lines(answer: Mapping[str, Any]) -> list[str]:
    """The matching turns as recall shows them, or a line saying there were none."""
    if not answer.get("results"):
        return ["No session turns matched."]
    return output.recall_lines(answer)
