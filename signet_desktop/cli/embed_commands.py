"""`signet embed audit|backfill` and `signet repair resync-vec`: the vector side, over HTTP.

`audit` reads GET /api/embeddings/status; `backfill` posts /api/embeddings/backfill (once, or
in rounds until nothing is missing with `--all`); `resync-vec` posts /api/repair/resync-vec.
The rendering lives in `embed_output`; this module owns the parsers and the calls.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli import embed_output
from signet_desktop.cli.argtypes import bounded_int
from signet_desktop.cli.context import (
    CliContext,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
    json_option,
)
from signet_desktop.client.daemon import DaemonClient, DaemonResponseError

STATUS_PATH = "/api/embeddings/status"
BACKFILL_PATH = "/api/embeddings/backfill"
RESYNC_PATH = "/api/repair/resync-vec"

# The daemon's bounds for one backfill request (service/embeddings/service.py); checked here
# too so a bad --limit is refused before anything is sent.
MAX_BACKFILL_LIMIT = 10_000
DEFAULT_BACKFILL_LIMIT = 500
DEFAULT_ROUND_LIMIT = 100  # --all: smaller rounds, so progress shows every few seconds
# Embedding hundreds of texts or refilling a large mirror takes longer than a recall; used
# unless --timeout is given.
LONG_TIMEOUT_S = 300.0
# --all gives up after this many rounds in a row that embedded nothing (one empty round can
# just be the daemon's scan cursor wrapping around).
MAX_IDLE_ROUNDS = 2

EMBED_EXAMPLES = """\
  signet embed audit
  signet embed backfill --dry-run
  signet embed backfill --all
"""
AUDIT_EXAMPLES = """\
  signet embed audit
  signet embed audit --json | jq '.coverage'
"""
BACKFILL_EXAMPLES = """\
  signet embed backfill --dry-run          # how many memories lack a vector
  signet embed backfill                    # embed up to 500 now
  signet embed backfill --all              # rounds of 100 until nothing is missing
  signet embed backfill --all --limit 500  # bigger rounds
"""
REPAIR_EXAMPLES = """\
  signet repair resync-vec --dry-run
  signet repair resync-vec
  signet repair resync-vec --full --generation 2
"""
RESYNC_EXAMPLES = """\
  signet repair resync-vec --dry-run   # report what is missing, change nothing
  signet repair resync-vec             # add missing rows, drop orphan rows
  signet repair resync-vec --full      # drop the vec0 table and refill it
  signet repair resync-vec --generation 1
"""


def register(subparsers: Subparsers) -> None:
    """Add the `embed` group to the `signet` parser (`repair` is `cli/repair_commands.py`'s,
    which declares `resync-vec` through `add_resync_command`)."""
    _register_embed(subparsers)


def _register_embed(subparsers: Subparsers) -> None:
    commands = add_group(
        subparsers,
        "embed",
        help="embedding coverage and backfill",
        description="Inspect and complete the vectors behind semantic recall.",
        examples=EMBED_EXAMPLES,
    )
    audit = add_command(
        commands,
        "audit",
        help="show embedding generations, coverage, vec0 mirror health and queued jobs",
        description="One row per embedding generation (model, dimensions): its status, the\n"
        "share of live memories with a current vector, canonical vectors vs rows in the\n"
        "vec0 mirror, and queued backfill jobs; then what to run if something is missing.",
        examples=AUDIT_EXAMPLES,
        handler=run_audit,
    )
    json_option(audit)
    backfill = add_command(
        commands,
        "backfill",
        help="embed memories that have no current vector",
        description="Ask the daemon to embed live memories that lack a vector in the\n"
        "configured model's generation. Memories are never lost while the embedder is\n"
        "down; this fills their vectors once it is back (the daemon's worker does too).\n"
        f"Requests wait up to {LONG_TIMEOUT_S:g} s for the daemon unless --timeout is given.",
        examples=BACKFILL_EXAMPLES,
        handler=run_backfill,
    )
    backfill.add_argument(
        "-l",
        "--limit",
        type=bounded_int(1, MAX_BACKFILL_LIMIT),
        metavar="N",
        help=f"memories per request, 1..{MAX_BACKFILL_LIMIT} (default {DEFAULT_BACKFILL_LIMIT};"
        f" {DEFAULT_ROUND_LIMIT} per round with --all)",
    )
    backfill.add_argument(
        "--dry-run", action="store_true", help="only count what is missing; embed nothing"
    )
    backfill.add_argument(
        "--all", action="store_true", help="repeat until every live memory has a vector"
    )
    backfill.add_argument("--json", action="store_true", help="print the daemon's JSON answers")


def add_resync_command(commands: Subparsers) -> None:
    """Declare `resync-vec` under the `repair` group's subparsers."""
    resync = add_command(
        commands,
        "resync-vec",
        help="rebuild the sqlite-vec mirror from the canonical vectors",
        description="Bring a generation's vec0 table (the ANN mirror used by vector recall)\n"
        "back in step with the canonical `embeddings` rows: add missing rows and drop orphan\n"
        "rows, or drop and refill the whole table with --full. Needs sqlite-vec in the daemon.\n"
        f"The HTTP timeout is {LONG_TIMEOUT_S:g} s unless --timeout is given.",
        examples=RESYNC_EXAMPLES,
        handler=run_resync,
    )
    resync.add_argument(
        "--generation",
        type=bounded_int(1, 2**31),
        metavar="N",
        help="generation id (default: the configured model's; see `signet embed audit`)",
    )
    resync.add_argument("--full", action="store_true", help="drop and refill the whole table")
    resync.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    json_option(resync)


def long_client(args: argparse.Namespace, ctx: CliContext) -> DaemonClient:
    """A client whose timeout is LONG_TIMEOUT_S unless --timeout was given."""
    if getattr(args, "timeout", None) is None:
        args = argparse.Namespace(**{**vars(args), "timeout": LONG_TIMEOUT_S})
    return ctx.client(args)


def run_audit(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /api/embeddings/status; print the generations table and hints."""
    return ctx.emit(args, ctx.request(args, "GET", STATUS_PATH), embed_output.audit_lines)


def run_backfill(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/embeddings/backfill once (or in rounds with --all)."""
    limit = args.limit or (DEFAULT_ROUND_LIMIT if args.all else DEFAULT_BACKFILL_LIMIT)
    with long_client(args, ctx) as client:
        if args.all and not args.dry_run:
            return _backfill_all(client, args, ctx, limit)
        answer = client.post(BACKFILL_PATH, {"limit": limit, "dryRun": args.dry_run})
    if args.dry_run:
        return ctx.emit(args, answer, embed_output.backfill_dry_run_lines)
    return ctx.emit(args, answer, embed_output.backfill_lines)


def _backfill_all(
    client: DaemonClient, args: argparse.Namespace, ctx: CliContext, limit: int
) -> int:
    progress = embed_output.BackfillProgress(started=time.monotonic())
    rounds: list[Any] = []
    idle_rounds = 0
    while True:
        try:
            answer = client.post(BACKFILL_PATH, {"limit": limit, "dryRun": False})
        except DaemonResponseError:
            if progress.embedded and not args.json:
                ctx.print(progress.stopped_line())
            raise
        rounds.append(answer)
        progress.add(answer if isinstance(answer, Mapping) else {}, now=time.monotonic())
        if progress.total and not args.json:
            ctx.print(progress.line())
        if progress.missing == 0:
            break
        idle_rounds = 0 if progress.last_embedded else idle_rounds + 1
        if idle_rounds >= MAX_IDLE_ROUNDS:
            break
    ctx.emit(args, progress.summary_json(rounds), progress.final_lines())
    return ExitCode.OK if progress.missing == 0 else ExitCode.FAILURE


def run_resync(args: argparse.Namespace, ctx: CliContext) -> int:
    """POST /api/repair/resync-vec."""
    body: dict[str, Any] = {"full": bool(args.full), "dryRun": bool(args.dry_run)}
    if args.generation is not None:
        body["generation"] = args.generation
    with long_client(args, ctx) as client:
        answer = client.post(RESYNC_PATH, body)
    return ctx.emit(args, answer, embed_output.resync_lines)
