"""`signet storage migrate`: copy the workspace's database into PostgreSQL, or back to SQLite.

Runs in this process, not through the daemon: the daemon must not be running on the workspace
(its lock, `.daemon/daemon.lock`, is taken for the whole copy, so it cannot start meanwhile
either). The work is `service/storage_transfer.py: migrate_storage`.
"""

from __future__ import annotations

import argparse

from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
)
from signet_desktop.config.workspace import WorkspacePaths, resolve_workspace
from signet_desktop.daemon.pidfile import AlreadyRunning, WorkspaceLock
from signet_desktop.service.storage_transfer import (
    Location,
    MoveRefused,
    MoveReport,
    migrate_storage,
    parse_location,
)

DEFAULT_BATCH = 1000
LOCK_WAIT_S = 0.5
EXAMPLES = """\
  signet storage migrate --to postgresql://db.internal:5432/signet
  signet storage migrate --to postgresql://localhost/signet --workspace ~/.agents-work
  signet storage migrate --from postgresql://localhost/signet --to sqlite:~/back/memories.db
"""
DESCRIPTION = """\
Copy a Signet database between SQLite and PostgreSQL, then verify the copy.

The source defaults to the workspace's own database (memory/memories.db under --workspace,
$SIGNET_WORKSPACE, $SIGNET_PATH, else ~/.agents) and is only read. Stop the daemon first: the
command refuses while it runs on that workspace, and holds its lock until done. The target gets
every migration and must be empty (a new SQLite file, or an empty PostgreSQL database; no
password in the URL: set PGPASSWORD or use ~/.pgpass).

Rows move in batches, each committed with its progress in the target: if the copy stops
(killed, connection lost), run the same command again and it continues where it stopped.
Derived data is rebuilt, not copied: full-text indexes, and each embedding generation's vector
index (HNSW on PostgreSQL, the vec0 mirror on SQLite). At the end every table's row count and
content hash are compared on both sides and printed; a mismatch exits 1 and names the table.

To serve the copy, set storage.url to the same postgresql:// URL in agent.yaml. PostgreSQL is a
preview: memories, recall, hooks, transcripts, documents, imports, the ontology and Dreaming
are tested on it; docs/TEAM.md lists what is not done yet.

exit status: 0 copied and verified, 1 refused or a table differs, 2 bad arguments"""


def _batch_size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError("must be between 1 and 100000")
    return value


def register(subparsers: Subparsers) -> None:
    """Add the `storage` group: `migrate`."""
    commands = add_group(
        subparsers,
        "storage",
        help="move the database between SQLite and PostgreSQL",
        description="The workspace's database: where it lives.",
        examples=EXAMPLES,
    )
    migrate = add_command(
        commands,
        "migrate",
        help="copy the database to PostgreSQL (or back to SQLite), resumable and verified",
        description=DESCRIPTION,
        examples=EXAMPLES,
        handler=run_migrate,
        connects=False,
    )
    migrate.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the target: postgresql://host[:port]/database or sqlite:PATH (a new file)",
    )
    migrate.add_argument(
        "--from",
        dest="source",
        metavar="URL",
        help="the source (default: the workspace's sqlite database)",
    )
    migrate.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace whose database is the default source "
        "(default: $SIGNET_WORKSPACE, $SIGNET_PATH, else ~/.agents)",
    )
    migrate.add_argument(
        "--batch-size",
        type=_batch_size,
        default=DEFAULT_BATCH,
        metavar="N",
        help=f"rows per target transaction (default {DEFAULT_BATCH})",
    )


def run_migrate(args: argparse.Namespace, ctx: CliContext) -> int:
    """Check the arguments and the daemon, copy, print the verification."""
    paths = WorkspacePaths.for_root(resolve_workspace(args.workspace, ctx.env))
    try:
        source = parse_location(args.source) if args.source else Location.sqlite(paths.db_path)
        target = parse_location(args.to)
    except ValueError as exc:
        raise CliUsageError(str(exc)) from None
    locks: list[WorkspaceLock] = []
    try:
        for end in (source, target):
            refusal = _take_workspace_lock(end, locks)
            if refusal:
                ctx.warn(f"signet storage migrate: {refusal}")
                return ExitCode.FAILURE
        ctx.warn(f"copying {source.describe()} -> {target.describe()}")
        report = migrate_storage(
            source,
            target,
            batch_size=args.batch_size,
            report=lambda table, done, total: ctx.warn(f"  {table}: {done}/{total} rows"),
            note=lambda text: ctx.warn(f"note: {text}"),
        )
    except MoveRefused as exc:
        ctx.warn(f"signet storage migrate: {exc}")
        return ExitCode.FAILURE
    finally:
        for lock in locks:
            lock.release()
    return _print_report(ctx, report)


def _take_workspace_lock(end: Location, locks: list[WorkspaceLock]) -> str | None:
    """Hold the daemon's lock of the workspace a SQLite end belongs to; why not, if refused."""
    if end.path is None or end.path.parent.name != "memory":
        return None
    root = end.path.parent.parent
    daemon_dir = root / ".daemon"
    if not daemon_dir.is_dir():
        return None  # no daemon ever ran there (it creates .daemon/ before taking the lock)
    lock = WorkspaceLock(daemon_dir, daemon_dir / "pid")
    try:
        lock.acquire(wait_for_pid=LOCK_WAIT_S)
    except AlreadyRunning as exc:
        return f"the daemon is running on {root} ({exc.describe()}); stop it first"
    locks.append(lock)
    return None


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def _print_report(ctx: CliContext, report: MoveReport) -> int:
    width = max((len(c.name) for c in report.checks), default=0)
    for check in report.checks:
        mark = "✓" if check.ok else "✗"
        rows = (
            _rows(check.target_rows)
            if check.source_rows == check.target_rows
            else f"{check.source_rows} rows in the source, {check.target_rows} in the target"
        )
        digest = (
            check.target_hash[:16]
            if check.source_hash == check.target_hash
            else f"{check.source_hash[:16]} != {check.target_hash[:16]}"
        )
        ctx.print(f"{mark} {check.name:<{width}}  {rows}  sha256 {digest}")
    for line in report.vectors:
        ctx.print(f"✓ {line}")
    if report.counter_drift:
        ctx.warn(
            "warning: counters differ from a recount ("
            + ", ".join(report.counter_drift)
            + "); the daemon's maintenance run repairs them"
        )
    if not report.ok:
        ctx.warn(
            "signet storage migrate: the copy differs from the source in "
            + ", ".join(report.mismatched)
        )
        return ExitCode.FAILURE
    ctx.print(f"copied and verified: {len(report.checks)} tables")
    return ExitCode.OK
