"""`signet remember`, `signet recall` and `signet memory get|list|history|forget|recover`."""

from __future__ import annotations

import argparse
from typing import Any
from urllib.parse import quote

from signet_desktop.cli import output
from signet_desktop.cli.argtypes import (
    bounded_int,
    iso_time,
    non_empty,
    tag_list,
    time_bound,
    unit_float,
)
from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)
from signet_desktop.domain.memory import MEMORY_TYPES as ALL_MEMORY_TYPES
from signet_desktop.domain.recall import AS_OF_HELP

MAX_RECALL_LIMIT = 100
MAX_HISTORY_LIMIT = 1000
MAX_LIST_LIMIT = 1000
FORGET_REASON = "forgotten with signet memory forget"
RECOVER_REASON = "recovered with signet memory recover"
# document_chunk rows are written by document ingest, never by hand.
MEMORY_TYPES = tuple(sorted(ALL_MEMORY_TYPES - {"document_chunk"}))
TYPES = ", ".join(MEMORY_TYPES)

REMEMBER_EXAMPLES = """\
  signet remember "We deploy billing with blue-green releases"
  signet remember "critical: never force-push main"        # pinned, importance 1.0
  signet remember "[infra,db]: Postgres 16 in production"  # tags from the prefix
  signet remember -t infra,db -i 0.8 --type decision "Use Postgres 16"
  echo "long note" | signet remember -
"""
RECALL_EXAMPLES = """\
  signet recall "which database does billing use"
  signet recall "deploy" -l 5 --type decision --since 2025-01-01
  signet recall "postgres" --json | jq '.results[0].id'
  signet recall "what did I deploy last week" --as-of 2025-03-12
"""
MEMORY_EXAMPLES = """\
  signet memory get 3f0c9a2e-...
  signet memory history 3f0c9a2e-...
  signet memory forget 3f0c9a2e-... --reason "outdated"
  signet memory recover 3f0c9a2e-... --reason "deleted by mistake"
"""


def register(subparsers: Subparsers) -> None:
    """Add remember, recall and the memory group to the `signet` parser."""
    _register_remember(subparsers)
    _register_recall(subparsers)
    _register_memory(subparsers)


def _register_remember(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "remember",
        help="save a memory",
        description="Save a memory in the running daemon. Identical content is deduplicated\n"
        "within an agent scope. Prefixes: `critical:` pins it, `[t1,t2]:` adds tags.",
        examples=REMEMBER_EXAMPLES,
        handler=run_remember,
    )
    parser.add_argument("content", nargs="+", help="the text to remember (`-` reads stdin)")
    parser.add_argument("-w", "--who", help="who this memory is about or from")
    parser.add_argument(
        "-t", "--tags", type=tag_list, action="extend", help="comma-separated tags (repeatable)"
    )
    parser.add_argument("-i", "--importance", type=unit_float, help="importance 0..1 (default 0.5)")
    parser.add_argument("--critical", action="store_true", help="pin it and set importance 1.0")
    parser.add_argument(
        "--type", choices=MEMORY_TYPES, metavar="TYPE", help=f"memory type (default fact): {TYPES}"
    )
    parser.add_argument("--project", help="project this memory belongs to (e.g. a repo path)")
    parser.add_argument(
        "--private", action="store_true", help="visibility private (default global)"
    )
    agent_and_json_options(parser)


def _register_recall(subparsers: Subparsers) -> None:
    parser = add_command(
        subparsers,
        "recall",
        help="search memories (hybrid keyword + vector)",
        description="Search memories in the running daemon and print a ranked list.",
        examples=RECALL_EXAMPLES,
        handler=run_recall,
    )
    add_query_arguments(parser, most=MAX_RECALL_LIMIT, noun="results")
    parser.add_argument(
        "-t", "--type", choices=MEMORY_TYPES, metavar="TYPE", help=f"only this type: {TYPES}"
    )
    parser.add_argument("--tags", type=tag_list, action="extend", help="only memories with tags")
    parser.add_argument("--who", help="only memories with this `who`")
    parser.add_argument("--project", help="only memories of this project")
    parser.add_argument(
        "--since",
        metavar="WHEN",
        type=time_bound,
        help="created at or after WHEN: 2025-01-31, 2025-01-31T12:00, today, yesterday, 2h, 7d",
    )
    parser.add_argument(
        "--until", metavar="WHEN", type=time_bound, help="created at or before WHEN (same formats)"
    )
    parser.add_argument("--as-of", metavar="WHEN", type=iso_time, help=AS_OF_HELP)
    parser.add_argument("--keyword-query", metavar="TEXT", help="separate text for keyword search")
    parser.add_argument("--pinned", action="store_true", help="only pinned memories")
    parser.add_argument("--importance-min", type=unit_float, metavar="X", help="importance >= X")
    parser.add_argument("--min-score", type=unit_float, metavar="X", help="drop hits scoring < X")
    parser.add_argument(
        "--expand", action="store_true", help="also show the conversation around each result"
    )
    agent_and_json_options(parser)


def add_query_arguments(parser: argparse.ArgumentParser, *, most: int, noun: str) -> None:
    """The words to look for and `-l/--limit` (default 10): recall and `sessions search`."""
    parser.add_argument("query", nargs="+", help="what to look for")
    parser.add_argument(
        "-l",
        "--limit",
        type=bounded_int(1, most),
        default=10,
        help=f"maximum {noun}, 1..{most} (default 10)",
    )


def query_text(args: argparse.Namespace) -> str:
    """The query words as one string; CliUsageError when they are blank."""
    query = " ".join(args.query)
    if not query.strip():
        raise CliUsageError("the query is empty")
    return query


def _register_memory(subparsers: Subparsers) -> None:
    commands = add_group(
        subparsers,
        "memory",
        help="inspect and manage single memories",
        description="Show, list, audit, forget and recover memories by id.",
        examples=MEMORY_EXAMPLES,
    )
    get = add_command(commands, "get", help="show one memory", handler=run_get)
    get.add_argument("id", type=non_empty, help="memory id")
    listing = add_command(commands, "list", help="list memories, newest first", handler=run_list)
    listing.add_argument("-l", "--limit", type=bounded_int(1, MAX_LIST_LIMIT), default=20)
    listing.add_argument("--offset", type=bounded_int(0, 10_000_000), default=0)
    history = add_command(commands, "history", help="show a memory's history", handler=run_history)
    history.add_argument("id", type=non_empty, help="memory id")
    history.add_argument("-l", "--limit", type=bounded_int(1, MAX_HISTORY_LIMIT), default=200)
    forget = add_command(
        commands,
        "forget",
        help="soft-delete a memory (recoverable for 30 days)",
        handler=run_forget,
    )
    recover = add_command(commands, "recover", help="undo a forget", handler=run_recover)
    for parser, reason in ((forget, FORGET_REASON), (recover, RECOVER_REASON)):
        parser.add_argument("id", type=non_empty, help="memory id")
        parser.add_argument(
            "--reason",
            type=non_empty,
            default=reason,
            help=f"why, kept in the history (default: {reason!r})",
        )
    forget.add_argument("--force", action="store_true", help="required to forget a pinned memory")
    for parser in (forget, recover):
        parser.add_argument(
            "--if-version",
            type=bounded_int(1, 2**62),
            metavar="N",
            help="refuse unless the memory is still at version N",
        )
    for parser in (get, listing, history, forget, recover):
        agent_and_json_options(parser)


def _content(args: argparse.Namespace, ctx: CliContext) -> str:
    text = ctx.stdin.read() if args.content == ["-"] else " ".join(args.content)
    if not text.strip():
        raise CliUsageError("nothing to remember: the content is empty")
    if "\x00" in text:
        raise CliUsageError("the content contains a NUL byte")
    return text


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if value is not None}


def run_remember(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/memory/remember."""
    body = _drop_none(
        {
            "content": _content(args, ctx),
            "who": args.who,
            "tags": args.tags,
            "importance": 1.0 if args.critical else args.importance,
            "pinned": True if args.critical else None,
            "type": args.type,
            "project": args.project,
            "visibility": "private" if args.private else None,
            "agentId": args.agent,
        }
    )
    answer = ctx.request(args, "POST", "/api/memory/remember", body=body)
    return ctx.emit(args, answer, output.remember_lines)


def recall_body(args: argparse.Namespace) -> dict[str, Any]:
    """The /api/memory/recall request for parsed recall arguments."""
    return _drop_none(
        {
            "query": query_text(args),
            "limit": args.limit,
            "type": args.type,
            "tags": args.tags,
            "who": args.who,
            "project": args.project,
            "since": args.since,
            "until": args.until,
            "asOf": args.as_of,
            "keywordQuery": args.keyword_query,
            "pinned": True if args.pinned else None,
            "importance_min": args.importance_min,
            "min_score": args.min_score,
            "expand": True if args.expand else None,
            "agentId": args.agent,
        }
    )


def run_recall(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/memory/recall."""
    answer = ctx.request(args, "POST", "/api/memory/recall", body=recall_body(args))
    return ctx.emit(args, answer, output.recall_lines)


def _memory_path(memory_id: str, suffix: str = "") -> str:
    return f"/api/memory/{quote(memory_id, safe='')}{suffix}"


def run_get(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /api/memory/{id}."""
    answer = ctx.request(args, "GET", _memory_path(args.id))
    memory = answer.get("memory", answer) if isinstance(answer, dict) else {}
    return ctx.emit(args, answer, output.memory_lines(memory))


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /api/memories."""
    params = {"limit": args.limit, "offset": args.offset}
    answer = ctx.request(args, "GET", "/api/memories", params=params)
    return ctx.emit(args, answer, output.memory_page_lines)


def run_history(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /api/memory/{id}/history."""
    path = _memory_path(args.id, "/history")
    answer = ctx.request(args, "GET", path, params={"limit": args.limit})
    return ctx.emit(args, answer, output.history_lines)


def run_forget(args: argparse.Namespace, ctx: CliContext) -> int:
    """DELETE /api/memory/{id} with reason, force and if_version."""
    body = _drop_none(
        {
            "reason": args.reason,
            "force": True if args.force else None,
            "if_version": args.if_version,
        }
    )
    answer = ctx.request(args, "DELETE", _memory_path(args.id), body=body)
    line = f"Forgot {args.id} (recoverable for 30 days: signet memory recover {args.id})"
    return ctx.emit(args, answer, line)


def run_recover(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/memory/{id}/recover."""
    body = _drop_none({"reason": args.reason, "if_version": args.if_version})
    answer = ctx.request(args, "POST", _memory_path(args.id, "/recover"), body=body)
    return ctx.emit(args, answer, f"Recovered {args.id}")
