"""`signet repair …`: the repair group (`resync-vec`, `queue`), over the daemon's HTTP API.

`signet repair queue status` prints GET /api/diagnostics/queue; `signet repair queue
requeue|release|cancel|prune [filters]` posts /api/diagnostics/queue/repair as a dry run and
lists the jobs it would change; only `--apply` sends `dryRun: false`, and then the same
filters change exactly those jobs (unless the queue moved in between).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.argtypes import bounded_int, non_empty
from signet_desktop.cli.context import (
    CliContext,
    Subparsers,
    add_command,
    add_group,
    json_option,
)
from signet_desktop.cli.embed_commands import REPAIR_EXAMPLES, add_resync_command

DIAGNOSTICS_PATH = "/api/diagnostics/queue"
REPAIR_PATH = "/api/diagnostics/queue/repair"
ACTIONS = {
    "requeue": "dead jobs back to pending, attempts reset",
    "release": "expired leases back to pending (dead when their attempts are spent)",
    "cancel": "pending jobs cancelled",
    "prune": "finished jobs (completed, dead, cancelled) deleted",
}
MAX_BATCH = 1000  # the daemon's bound (queue/repair.py); checked before anything is sent
UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^(\d{1,12})(ms|s|m|h|d)?$")
QUEUE_EXAMPLES = """\
  signet repair queue status
  signet repair queue requeue                        # dry run: which dead jobs would go back
  signet repair queue requeue --error timeout --apply
  signet repair queue release --apply                # expired leases
  signet repair queue prune --older-than 14d         # dry run
  signet repair queue cancel --id 9f1c… --apply
"""


def duration_ms(text: str) -> int:
    """`500ms`, `30s`, `15m`, `2h`, `14d`, or a bare number of milliseconds."""
    match = _DURATION.match(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration (e.g. 30m, 2h, 14d): {text!r}")
    return int(match.group(1)) * UNITS_MS[match.group(2) or "ms"]


def register(subparsers: Subparsers) -> None:
    """Add the `repair` group: `resync-vec` (embed_commands) and `queue`."""
    commands = add_group(
        subparsers,
        "repair",
        help="rebuild derived data (vector index) and repair the job queue",
        description="Repair derived, rebuildable data and the durable job queue. Canonical\n"
        "rows (memories, embeddings) are never changed by these commands; queue repairs\n"
        "are dry runs unless --apply is given.",
        examples=REPAIR_EXAMPLES + QUEUE_EXAMPLES,
    )
    add_resync_command(commands)
    _add_queue_command(commands)


def _add_queue_command(commands: Subparsers) -> None:
    queue = add_command(
        commands,
        "queue",
        help="queue diagnostics, and requeue / release / cancel / prune jobs (dry run first)",
        description="Show the job queue's health, or repair it. Every action is a dry run\n"
        "listing the jobs it would change unless --apply is given. Only the agent's own jobs\n"
        "are touched; retired `extract` rows of old databases are left alone.\n"
        + "\n".join(f"  {name:<8} {what}" for name, what in ACTIONS.items()),
        examples=QUEUE_EXAMPLES,
        handler=run_queue,
    )
    queue.add_argument("action", choices=("status", *ACTIONS), help="status, or a repair action")
    queue.add_argument("--apply", action="store_true", help="change the jobs (default: dry run)")
    queue.add_argument(
        "--id",
        dest="ids",
        action="append",
        type=non_empty,
        metavar="JOB",
        default=None,
        help="only this job (repeatable)",
    )
    queue.add_argument("--type", dest="job_type", type=non_empty, help="only jobs of this type")
    queue.add_argument(
        "--older-than",
        type=duration_ms,
        metavar="AGE",
        help="only jobs unchanged for at least AGE (30m, 2h, 14d)",
    )
    queue.add_argument(
        "--error",
        dest="error_pattern",
        type=non_empty,
        metavar="TEXT",
        help="only jobs whose error contains TEXT (any case)",
    )
    queue.add_argument(
        "--max-batch",
        type=bounded_int(1, MAX_BATCH),
        metavar="N",
        help=f"at most N jobs, 1..{MAX_BATCH} (default 50)",
    )
    queue.add_argument("--reason", help="why (recorded on cancelled jobs)")
    queue.add_argument("--agent", metavar="ID", help="agent scope (default: `default`)")
    json_option(queue)


def run_queue(args: argparse.Namespace, ctx: CliContext) -> int:
    """`status`: GET the diagnostics; an action: POST the repair (dry run unless --apply)."""
    if args.action == "status":
        return ctx.emit(args, ctx.request(args, "GET", DIAGNOSTICS_PATH), status_lines)
    answer = ctx.request(args, "POST", REPAIR_PATH, body=repair_body(args))
    return ctx.emit(args, answer, repair_lines)


def repair_body(args: argparse.Namespace) -> dict[str, Any]:
    """The POST body: only what was given, and `dryRun` always explicit."""
    body: dict[str, Any] = {"action": args.action, "dryRun": not args.apply}
    optional = {
        "ids": args.ids,
        "jobType": args.job_type,
        "olderThanMs": args.older_than,
        "errorPattern": args.error_pattern,
        "maxBatch": args.max_batch,
        "reason": args.reason,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def repair_lines(answer: Mapping[str, Any]) -> list[str]:
    """The message, the jobs (before → after) and, after a dry run, how to apply it."""
    lines = [str(answer.get("message", ""))]
    jobs = answer.get("jobs") or []
    if jobs:
        rows = [
            (
                job.get("id"),
                job.get("jobType"),
                f"{job.get('attempts')}/{job.get('maxAttempts')}",
                f"{job.get('status')} -> {job.get('toStatus')}",
                job.get("error"),
            )
            for job in jobs
        ]
        lines += ["", *output.table(("job", "type", "attempts", "state", "error"), rows)]
    if answer.get("dryRun") and jobs:
        lines += ["", "run the same command with --apply to change these jobs"]
    return lines


def status_lines(answer: Mapping[str, Any]) -> list[str]:
    """Counts per state and type, the health signals against their thresholds, oldest dead."""
    limits = answer.get("thresholds") or {}
    counts = (answer.get("queues") or {}).get("memory") or {}
    age = answer.get("oldestAgeSec")
    lines = [
        f"queue          {answer.get('status')} (score {answer.get('score')})",
        "jobs           " + " · ".join(f"{state} {n}" for state, n in counts.items()),
        f"pending        {answer.get('depth')} (threshold {limits.get('depth')})",
        f"oldest pending {'-' if age is None else output.duration_text(age)}"
        f" (threshold {output.duration_text(limits.get('oldestAgeSec'))})",
        f"dead rate      {float(answer.get('deadRate') or 0):.1%} over the last day"
        f" (threshold {float(limits.get('deadRate') or 0):.0%})",
        f"lease anomalies {answer.get('leaseAnomalies')}",
    ]
    types = answer.get("jobTypes") or {}
    if types:
        states = list(counts)
        rows = [(kind, *(c.get(s, 0) for s in states)) for kind, c in sorted(types.items())]
        lines += ["", *output.table(("type", *states), rows)]
    dead = answer.get("oldestDead") or []
    if dead:
        rows = [(j.get("id"), j.get("job_type"), j.get("failed_at"), j.get("error")) for j in dead]
        lines += ["", "oldest dead jobs:", *output.table(("job", "type", "died", "error"), rows)]
        lines += ["", "hint: signet repair queue requeue  (a dry run; add --apply to requeue)"]
    return lines
