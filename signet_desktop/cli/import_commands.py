"""`signet import claude-code|codex [PATH]`, `signet import signet-workspace PATH` and
`signet sources list|show|remove`, over HTTP.

`import` posts /api/sources/import and follows the run (GET /api/sources/{id}/runs/{run})
with a progress bar on stderr — files done of the total, sessions, turns and turns per
second — until it finishes, then says what became of every file and session, with reasons;
`--no-wait` prints the ids and returns at once. `sources remove ID` shows what would be purged
and purges only when asked again with `--yes`.
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

IMPORT_PATH = "/api/sources/import"
SOURCES_PATH = "/api/sources"
BAR_WIDTH = 24
HARNESS_KINDS = {
    "claude-code": "Claude Code's history (default ~/.claude/projects; CLAUDE_CONFIG_DIR moves it)",
    "codex": "Codex's sessions (default ~/.codex/sessions; CODEX_HOME moves it)",
}
# A Signet workspace's records are memories (with history) and transcripts, not files.
WORKSPACE_KIND = "signet-workspace"

IMPORT_EXAMPLES = """\
  signet import claude-code                      # ~/.claude/projects
  signet import codex ~/.codex/sessions/2026/11  # one month only
  signet import claude-code --json               # the finished run as JSON
  signet import signet-workspace ~/.agents       # switching from Signet: memories, history,
                                                 # transcripts (its memories.db is only read)
"""
SOURCES_EXAMPLES = """\
  signet sources list
  signet sources show src_0123...
  signet sources remove src_0123...              # what would be purged (nothing is)
  signet sources remove src_0123... --yes        # purge it
"""


def register(subparsers: Subparsers) -> None:
    """Add the `import` and `sources` groups to the `signet` parser."""
    kinds = add_group(
        subparsers,
        "import",
        help="import a harness's session history as a source",
        description="Bring completed sessions from a harness's own history into Signet as\n"
        "evidence (a source). Running it again imports only what is new; an interrupted\n"
        "import resumes. Sessions already captured live are reported as duplicates.",
        examples=IMPORT_EXAMPLES,
        dest="import_kind",
        metavar="KIND",
    )
    for kind, what in HARNESS_KINDS.items():
        parser = add_command(kinds, kind, help=f"import {what}", handler=run_import)
        parser.set_defaults(kind=kind)
        parser.add_argument("path", nargs="?", help="history directory (default: the harness's)")
        _import_options(parser)
    workspace = add_command(
        kinds,
        WORKSPACE_KIND,
        help="import a Signet workspace's memories, their history and its transcripts",
        handler=run_import,
    )
    workspace.set_defaults(kind=WORKSPACE_KIND)
    workspace.add_argument("path", help="the Signet workspace directory, or its memories.db")
    _import_options(workspace)
    _register_sources(subparsers)


def _import_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reimport", action="store_true", help="import a root whose source was removed"
    )
    parser.add_argument(
        "--no-wait", action="store_true", help="start the import and return its ids"
    )
    agent_and_json_options(parser)


def _register_sources(subparsers: Subparsers) -> None:
    commands = add_group(
        subparsers,
        "sources",
        help="list, inspect and remove import sources",
        description="Sources are the history roots imported so far, per agent.",
        examples=SOURCES_EXAMPLES,
    )
    listing = add_command(commands, "list", help="the agent's sources", handler=run_list)
    agent_and_json_options(listing)
    show = add_command(commands, "show", help="a source, its runs and totals", handler=run_show)
    show.add_argument("source_id", metavar="ID")
    agent_and_json_options(show)
    remove = add_command(
        commands,
        "remove",
        help="purge what a source imported and remove it (a preview unless --yes)",
        description="Shows what removing the source would purge. With --yes it deletes the\n"
        "source's imported sessions, staged copies and bookkeeping, keeps a small tombstone,\n"
        "and marks graph rows derived from them unsupported. Importing the same root again\n"
        "then needs --reimport.",
        handler=run_remove,
    )
    remove.add_argument("source_id", metavar="ID")
    confirm = remove.add_mutually_exclusive_group()
    confirm.add_argument("--yes", action="store_true", help="purge (after the preview)")
    confirm.add_argument(
        "--dry-run", action="store_true", help="only the preview (the default without --yes)"
    )
    remove.add_argument("--reason", help="why (kept on the tombstone)")
    agent_and_json_options(remove)


# -- handlers ------------------------------------------------------------------------------


def run_import(args: argparse.Namespace, ctx: CliContext) -> int:
    body: dict[str, Any] = {"kind": args.kind, "reimport": bool(args.reimport)}
    if args.path:
        body["path"] = str(Path(args.path).expanduser().absolute())
    with ctx.client(args) as client:
        ticket = client.post(IMPORT_PATH, body)
        if args.no_wait:
            return ctx.emit(args, ticket, started_line)
        records = args.kind == WORKSPACE_KIND
        run = follow(
            client, ctx, ticket["sourceId"], ticket["runId"], bar=not args.json, records=records
        )
        detail = None if args.json else client.get(f"{SOURCES_PATH}/{ticket['sourceId']}")
    if detail is None:
        ctx.print(output.to_json_text(run))
    elif records:
        ctx.print("\n".join(workspace_summary_lines(ticket["sourceId"], run)))
    else:
        ctx.print("\n".join(run_summary_lines(ticket["sourceId"], run)))
        skipped = detail.get("totals", {}).get("linesSkipped", 0)
        if skipped:
            ctx.print(f"{skipped} unreadable lines (torn or not JSON) were skipped")
    return ExitCode.OK if run.get("status") == "completed" else ExitCode.FAILURE


def started_line(ticket: Mapping[str, Any]) -> str:
    """`--no-wait`: the run and source ids."""
    return f"started {ticket['runId']} over {ticket['sourceId']}"


def follow(
    client: DaemonClient,
    ctx: CliContext,
    source_id: str,
    run_id: str,
    *,
    bar: bool,
    records: bool = False,
) -> Mapping[str, Any]:
    """Poll the run until it finishes, drawing the progress bar on stderr."""
    path = f"{SOURCES_PATH}/{source_id}/runs/{run_id}"
    tty = bool(getattr(ctx.err, "isatty", lambda: False)())
    last_line = ""
    for run, elapsed in client.poll(path):
        if bar:
            line = records_line(run, elapsed) if records else progress_line(run, elapsed)
            if tty:
                ctx.err.write("\r" + line.ljust(len(last_line)))
                ctx.err.flush()
            elif line != last_line:
                ctx.warn(line)
            last_line = line
        if run.get("status") != "running":
            if bar and tty:
                ctx.err.write("\n")
            return run
    raise AssertionError("poll() never ends")


def progress_line(run: Mapping[str, Any], elapsed: float) -> str:
    """`[#####.....] 12/40 files · 10 sessions · 1,204 turns · 3,010 turns/s · 0.4 s`."""
    counts = run.get("counts", {})
    done, total = int(counts.get("filesSeen", 0)), run.get("filesTotal")
    turns = int(counts.get("turnsImported", 0))
    if isinstance(total, int) and total > 0:
        filled = min(BAR_WIDTH, BAR_WIDTH * done // total)
        head = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} files"
    else:
        head = f"{done} files"
    rate = turns / elapsed if elapsed > 0 else 0.0
    return (
        f"{head} · {int(counts.get('recordsImported', 0)):,} sessions · {turns:,} turns · "
        f"{rate:,.0f} turns/s · {elapsed:.1f} s"
    )


def records_line(run: Mapping[str, Any], elapsed: float) -> str:
    """`5,000 records read · 4,990 imported · 2 duplicate · 812 records/s · 6.2 s`."""
    counts = run.get("counts", {})
    seen = int(counts.get("recordsSeen", 0))
    rate = seen / elapsed if elapsed > 0 else 0.0
    return (
        f"{seen:,} records read · {int(counts.get('recordsImported', 0)):,} imported · "
        f"{int(counts.get('recordsDuplicate', 0)):,} duplicate · {rate:,.0f} records/s · "
        f"{elapsed:.1f} s"
    )


def workspace_summary_lines(source_id: str, run: Mapping[str, Any]) -> list[str]:
    """A Signet-workspace run: records are memories and transcripts."""
    counts = run.get("counts", {})
    lines = [
        f"import {run.get('status')}: {counts.get('recordsImported', 0)} memories and "
        f"transcripts imported ({counts.get('turnsImported', 0)} transcript turns); "
        f"{counts.get('recordsDuplicate', 0)} duplicate, {counts.get('recordsSkipped', 0)} "
        f"already imported, {counts.get('recordsFailed', 0)} could not be mapped",
        f"source {source_id} · run {run.get('id')} · unmapped rows and unknown columns: "
        f"memory/imports/{source_id}/report.json in the workspace",
    ]
    if run.get("error"):
        lines.append(f"error: {run['error']}")
    return lines


def run_summary_lines(source_id: str, run: Mapping[str, Any]) -> list[str]:
    """What the run did with every file and session, with the reasons for what it left."""
    counts = run.get("counts", {})
    account = run.get("account") or {}
    subagents = int(account.get("subagents", 0))
    of_them = f" ({subagents} of them subagent transcripts)" if subagents else ""
    lines = [
        f"import {run.get('status')}: {counts.get('recordsImported', 0)} sessions imported"
        f"{of_them}, {counts.get('turnsImported', 0)} turns; "
        f"{counts.get('recordsDuplicate', 0)} duplicate, {counts.get('recordsSkipped', 0)} "
        f"skipped, {counts.get('recordsFailed', 0)} failed",
        files_line(counts, account.get("files", {})),
    ]
    lines += _reasons("files left", account.get("fileReasons", {}))
    lines += _reasons("sessions left", account.get("sessionReasons", {}))
    lines += _reasons(
        "messages kept out of turns (still in the staged copies)", account.get("keptOut", {})
    )
    lines.append(f"source {source_id} · run {run.get('id')}")
    if run.get("error"):
        lines.append(f"error: {run['error']}")
    return lines


def files_line(counts: Mapping[str, Any], files: Mapping[str, int]) -> str:
    """`files: 24 seen — 14 imported, 3 unchanged, 5 skipped, 2 in progress (read again next
    run), 0 to retry, 0 failed`."""
    seen, changed = int(counts.get("filesSeen", 0)), int(counts.get("filesChanged", 0))
    parts = [
        f"{files.get('imported', 0)} imported",
        f"{seen - changed} unchanged",
        f"{files.get('skipped', 0)} skipped",
        f"{files.get('inProgress', 0)} in progress (read again next run)",
        f"{files.get('pending', 0) + files.get('importing', 0)} to retry",
        f"{files.get('failed', 0)} failed",
    ]
    return f"files: {seen} seen — " + ", ".join(parts)


def _reasons(title: str, reasons: Mapping[str, int]) -> list[str]:
    if not reasons:
        return []
    ordered = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    return [f"  {title}: " + "; ".join(f"{n} {why}" for why, n in ordered)]


def run_list(args: argparse.Namespace, ctx: CliContext) -> int:
    return ctx.emit(args, ctx.request(args, "GET", SOURCES_PATH), source_list_lines)


def source_list_lines(answer: Mapping[str, Any]) -> list[str]:
    """A table of the agent's sources, or the kinds it could import."""
    empty = f"no sources yet (import kinds: {', '.join(answer.get('kinds', []))})"
    headers = ("id", "kind", "status", "root", "updated")
    return output.listing(answer.get("sources", []), headers, _source_row, empty)


def _source_row(source: Mapping[str, Any]) -> tuple[Any, ...]:
    return (source["id"], source["kind"], source["status"], source["rootPath"], source["updatedAt"])


def run_show(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "GET", f"{SOURCES_PATH}/{args.source_id}")
    return ctx.emit(args, answer, source_lines)


def source_lines(answer: Mapping[str, Any]) -> list[str]:
    """A source, what it holds, and a table of its runs."""
    totals = answer.get("totals", {})
    records = ", ".join(f"{n} {k}" for k, n in sorted(totals.get("records", {}).items()))
    lines = [
        f"{answer['id']}  {answer['kind']}  {answer['status']}  {answer['rootPath']}",
        f"holds: {records or 'nothing'}; {totals.get('turns', 0)} turns; "
        f"{totals.get('linesSkipped', 0)} unreadable lines skipped",
    ]
    rows = [
        (
            r["id"],
            r["status"],
            r["counts"]["recordsImported"],
            r["counts"]["turnsImported"],
            r["startedAt"],
        )
        for r in answer.get("runs", [])
    ]
    return [*lines, *output.table(("run", "status", "sessions", "turns", "started"), rows)]


def run_remove(args: argparse.Namespace, ctx: CliContext) -> int:
    """A preview of the purge; the purge itself only with --yes."""
    purge = bool(args.yes)
    params: dict[str, Any] = {"dryRun": "false" if purge else "true"}
    if args.reason:
        params["reason"] = args.reason
    answer = ctx.request(args, "DELETE", f"{SOURCES_PATH}/{args.source_id}", params=params)
    return ctx.emit(args, answer, lambda answer: removal_lines(answer, args))


def removal_lines(answer: Mapping[str, Any], args: argparse.Namespace) -> list[str]:
    """What was (or would be) purged, and the tombstone or how to purge."""
    verb = "would purge" if answer.get("dryRun") else "purged"
    rows = sorted(answer.get("purged", {}).items())
    lines = [f"{answer['sourceId']}: {verb}", *output.table(("what", "count"), rows)]
    if answer.get("tombstoneId"):
        lines.append(f"tombstone {answer['tombstoneId']}")
    elif not args.dry_run:
        lines.append(f"nothing was purged; to purge: signet sources remove {args.source_id} --yes")
    return lines
