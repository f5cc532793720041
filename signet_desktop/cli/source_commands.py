"""`signet source add folder PATH` and `signet source list|show|sync|remove`, over HTTP.

A *source* here is a connector (`/api/connectors`): a folder of Markdown/text files kept in
step with document ingest — every file a document, re-read when its content changes,
dropped when it is deleted. This is not `signet sources` (plural), which lists the harness
histories imported with `signet import`. `add folder` registers the folder and waits for the
first sync, polling the connector; `--no-wait` returns once it started.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.context import (
    CliContext,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)
from signet_desktop.client.daemon import DaemonClient

CONNECTORS_PATH = "/api/connectors"

SOURCE_EXAMPLES = """\
  signet source add folder ~/notes                       # **/*.md, **/*.markdown, **/*.txt
  signet source add folder ~/vault --exclude 'archive/**' --watch
  signet source add folder ~/docs --glob '**/*.md' --glob '**/*.rst'
  signet source list
  signet source sync con_0123...                         # only changed files are re-read
  signet source sync con_0123... --full                  # re-read every file
  signet source remove con_0123...                       # its documents go; the folder stays
"""
DIFFERENCE = (
    "Connected folders are re-indexed as documents when their files change. To import a\n"
    "harness's session history instead (Claude Code, Codex, a Signet workspace), use\n"
    "`signet import`; those imports are listed by `signet sources`."
)


def register(subparsers: Subparsers) -> None:
    """Add the `source` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "source",
        help="connect a folder of notes as a source kept in step (connectors)",
        description=DIFFERENCE,
        examples=SOURCE_EXAMPLES,
    )
    kinds = add_group(commands, "add", help="connect a source", dest="source_kind", metavar="KIND")
    folder = add_command(
        kinds,
        "folder",
        help="connect a folder of Markdown/text files",
        description="Every matching file becomes a document (chunked into searchable\n"
        "memories). The folder is only read, never written.\n\n" + DIFFERENCE,
        handler=run_add_folder,
    )
    folder.add_argument("path", help="the folder (absolute or relative to here)")
    folder.add_argument(
        "--glob",
        action="append",
        default=[],
        metavar="PATTERN",
        help="files to include (repeatable; default **/*.md, **/*.markdown, **/*.txt)",
    )
    folder.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="paths to leave out, e.g. 'archive/**' (repeatable; default .git, node_modules, …)",
    )
    folder.add_argument("--name", help="a display name (default: the folder's name)")
    folder.add_argument(
        "--watch", action="store_true", help="re-sync by polling every 30 s while it runs"
    )
    folder.add_argument("--no-wait", action="store_true", help="return once the sync started")
    agent_and_json_options(folder)

    listing = add_command(commands, "list", help="the agent's connected sources", handler=run_list)
    agent_and_json_options(listing)
    show = add_command(commands, "show", help="a source's health and last sync", handler=run_show)
    show.add_argument("connector_id", metavar="ID")
    agent_and_json_options(show)
    sync = add_command(commands, "sync", help="bring a source up to date", handler=run_sync)
    sync.add_argument("connector_id", metavar="ID")
    sync.add_argument("--full", action="store_true", help="re-read every file, not only changed")
    sync.add_argument("--no-wait", action="store_true", help="return once the sync started")
    agent_and_json_options(sync)
    remove = add_command(
        commands,
        "remove",
        help="disconnect a source: its documents are deleted, the folder is left as it is",
        handler=run_remove,
    )
    remove.add_argument("connector_id", metavar="ID")
    agent_and_json_options(remove)


# -- handlers ------------------------------------------------------------------------------


def run_add_folder(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {
        "provider": "filesystem",
        "path": str(Path(args.path).expanduser().absolute()),
        "globs": list(args.glob),
        "excludes": list(args.exclude),
        "watch": bool(args.watch),
        "sync": True,
    }
    if args.name:
        body["displayName"] = args.name
    with ctx.client(args) as client:
        connector = client.post(CONNECTORS_PATH, body)
        if args.no_wait:
            return ctx.emit(args, connector, connected_line)
        health = follow(client, ctx, connector["id"], bar=not args.json)
    return _report(ctx, args, connector["id"], health)


def run_sync(args: argparse.Namespace, ctx: CliContext) -> int:
    path = f"{CONNECTORS_PATH}/{args.connector_id}/sync"
    params = {"confirm": "true"} if args.full else None
    with ctx.client(args) as client:
        client.request("POST", f"{path}/full" if args.full else path, params=params)
        if args.no_wait:
            ctx.print(f"syncing {args.connector_id}")
            return ExitCode.OK
        health = follow(client, ctx, args.connector_id, bar=not args.json)
    return _report(ctx, args, args.connector_id, health)


def connected_line(connector: Mapping[str, Any]) -> str:
    """`--no-wait`: the new connector and its folder."""
    return f"connected {connector['id']} ({connector['settings']['rootPath']}); syncing"


def follow(
    client: DaemonClient, ctx: CliContext, connector_id: str, *, bar: bool
) -> Mapping[str, Any]:
    """Poll the connector's health until its sync ended; a files line on stderr meanwhile."""
    last = ""
    for health, elapsed in client.poll(f"{CONNECTORS_PATH}/{connector_id}/health"):
        if health.get("status") != "syncing":
            return health
        line = f"{health.get('files', 0):,} files indexed · {elapsed:.1f} s"
        if bar and line != last:
            ctx.warn(line)
            last = line
    raise AssertionError("poll() never ends")


def _report(
    ctx: CliContext, args: argparse.Namespace, connector_id: str, health: Mapping[str, Any]
) -> int:
    ctx.emit(args, health, summary_lines(connector_id, health))
    return ExitCode.OK if health.get("status") == "idle" else ExitCode.FAILURE


def summary_lines(connector_id: str, health: Mapping[str, Any]) -> list[str]:
    """`synced con_…: 3 added, 1 changed, …` plus documents per state and the last error."""
    sync = health.get("lastSync") or {}
    counts = ", ".join(
        f"{sync.get(name, 0)} {name}" for name in ("added", "changed", "removed", "unchanged")
    )
    lines = [f"{health.get('status')} {connector_id}: {counts or 'no sync yet'}"]
    if sync.get("skipped"):
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(sync.get("skippedReasons", {}).items()))
        lines.append(f"skipped {sync['skipped']} files ({reasons})")
    documents = ", ".join(f"{n} {s}" for s, n in sorted(health.get("documents", {}).items()))
    lines.append(f"{health.get('files', 0)} files · documents: {documents or 'none'}")
    if health.get("lastError"):
        lines.append(f"error: {health['lastError']}")
    return lines


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    return ctx.emit(args, ctx.request(args, "GET", CONNECTORS_PATH), connector_list_lines)


def connector_list_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of the connected sources, or how to connect one."""
    headers = ("id", "name", "status", "files", "folder", "last sync")
    empty = "no connected sources (signet source add folder PATH)"
    return output.listing(answer.get("connectors", []), headers, _connector_row, empty)


def _connector_row(connector: Mapping[str, Any]) -> tuple[Any, ...]:
    settings = connector["settings"]
    return (
        connector["id"],
        connector["displayName"],
        connector["status"] + (" (watch)" if settings.get("watch") else ""),
        connector["files"],
        settings.get("rootPath"),
        connector.get("lastSyncAt") or "never",
    )


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    health = ctx.request(args, "GET", f"{CONNECTORS_PATH}/{args.connector_id}/health")
    lines = summary_lines(args.connector_id, health)
    if not health.get("rootReadable"):
        lines.append("the folder is missing or unreadable")
    return ctx.emit(args, health, lines)


def run_remove(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "DELETE", f"{CONNECTORS_PATH}/{args.connector_id}")
    return ctx.emit(args, answer, removed_line)


def removed_line(answer: Mapping[str, Any]) -> str:
    """What disconnecting deleted (the folder itself is never touched)."""
    return (
        f"removed {answer['id']}: {answer['documentsDeleted']} documents deleted, "
        f"{answer['chunksForgotten']} chunk memories forgotten (the folder is untouched)"
    )
