"""`signet ontology proposals|apply|reject|contradictions|stream-apply`, over HTTP.

Proposals are review-only operations Dreaming (or a manual apply) left for a person;
`apply ID` puts one through the apply seam (re-validated), `reject ID --reason` records why
not. `stream-apply FILE.jsonl` sends one operation per line through the seam (in requests of
at most 100), `--dry-run` only validates; the exit code is non-zero when any operation was
skipped or failed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from signet_desktop.cli import output
from signet_desktop.cli.context import (
    CliContext,
    CliUsageError,
    ExitCode,
    Subparsers,
    add_command,
    add_group,
    agent_and_json_options,
)

PROPOSALS = "/api/ontology/proposals"
REQUEST_SIZE = 100
MAX_FILE_BYTES = 16 * 1024 * 1024

EXAMPLES = """\
  signet ontology proposals                       # pending, newest first
  signet ontology proposals --status all
  signet ontology apply 3f2c…                     # through the apply seam
  signet ontology reject 3f2c… --reason "not a company"
  signet ontology contradictions
  signet ontology stream-apply ops.jsonl --dry-run
"""


def register(subparsers: Subparsers) -> None:
    """Add the `ontology` group to the `signet` parser."""
    commands = add_group(
        subparsers,
        "ontology",
        help="review Dreaming's proposals and contradictions; apply operations",
        examples=EXAMPLES,
    )
    listing = add_command(commands, "proposals", help="list proposals", handler=run_proposals)
    listing.add_argument(
        "--status",
        default="pending",
        choices=("pending", "applied", "rejected", "failed", "all"),
    )
    listing.add_argument("--limit", type=int, default=50)
    agent_and_json_options(listing)
    apply = add_command(
        commands, "apply", help="apply a pending proposal through the seam", handler=run_apply
    )
    apply.add_argument("proposal_id", metavar="ID")
    agent_and_json_options(apply)
    reject = add_command(commands, "reject", help="reject a pending proposal", handler=run_reject)
    reject.add_argument("proposal_id", metavar="ID")
    reject.add_argument("--reason", required=True, help="why (kept with the proposal)")
    agent_and_json_options(reject)
    contradictions = add_command(
        commands, "contradictions", help="claim values that disagree", handler=run_contradictions
    )
    contradictions.add_argument("--status", default="active", choices=("active", "resolved", "all"))
    contradictions.add_argument("--limit", type=int, default=50)
    agent_and_json_options(contradictions)
    stream = add_command(
        commands,
        "stream-apply",
        help="apply operations from a JSONL file (one operation object per line)",
        handler=run_stream_apply,
    )
    stream.add_argument("file", metavar="FILE.jsonl", help="operations, one JSON object a line")
    stream.add_argument("--dry-run", action="store_true", help="validate only; write nothing")
    agent_and_json_options(stream)


# -- handlers ------------------------------------------------------------------------------


def run_proposals(args: argparse.Namespace, ctx: CliContext) -> int:
    params = {"status": args.status, "limit": args.limit}
    answer = ctx.request(args, "GET", PROPOSALS, params=params)
    none = f"no {args.status} proposals" if args.status != "all" else "no proposals"
    return ctx.emit(args, answer, lambda answer: proposal_list_lines(answer) or [none])


def proposal_list_lines(answer: Mapping[str, Any]) -> list[str]:
    """Every proposal's lines, one after the other."""
    return [line for proposal in answer.get("proposals", []) for line in proposal_lines(proposal)]


def proposal_lines(proposal: Mapping[str, Any]) -> list[str]:
    """`<id>  <status>  <operation>  {payload}` and its quotes, indented."""
    payload = json.dumps(proposal.get("payload", {}), ensure_ascii=False, sort_keys=True)
    lines = [f"{proposal['id']}  {proposal['status']}  {proposal['operation']}  {payload}"]
    if proposal.get("rationale"):
        lines.append(f"    why: {proposal['rationale']}")
    for item in proposal.get("evidence", []):
        lines.append(f'    "{item.get("quote", "")}"  ({item.get("source_ref", "")})')
    if proposal.get("error"):
        lines.append(f"    note: {proposal['error']}")
    return lines


def run_apply(args: argparse.Namespace, ctx: CliContext) -> int:
    answer = ctx.request(args, "POST", f"{PROPOSALS}/{args.proposal_id}/apply", body={})
    if args.json:
        ctx.print(output.to_json_text(answer))
    proposal = answer["proposal"]
    if not args.json:
        ctx.print(f"{proposal['status']} {proposal['id']} ({proposal['operation']})")
        if proposal["status"] != "applied" and proposal.get("error"):
            ctx.warn(f"not applied: {proposal['error']}")
    return ExitCode.OK if proposal["status"] == "applied" else ExitCode.FAILURE


def run_reject(args: argparse.Namespace, ctx: CliContext) -> int:
    path = f"{PROPOSALS}/{args.proposal_id}/reject"
    answer = ctx.request(args, "POST", path, body={"reason": args.reason})
    return ctx.emit(args, answer, lambda answer: f"rejected {answer['proposal']['id']}")


def run_contradictions(args: argparse.Namespace, ctx: CliContext) -> int:
    params = {"status": args.status, "limit": args.limit}
    answer = ctx.request(args, "GET", "/api/ontology/contradictions", params=params)
    return ctx.emit(args, answer, contradiction_lines)


def contradiction_lines(answer: Mapping[str, Any]) -> list[str]:
    """A line per contradiction: where, the claim key, and the two values."""
    lines = []
    for item in answer.get("contradictions", []):
        where = f"{item.get('entityName') or item.get('entityId')} / {item.get('aspectName')}"
        lines.append(
            f"{item['id']}  {where}  {item.get('claimKey')}: "
            f"{item['left']['content']!r} vs {item['right']['content']!r}"
        )
    return lines or ["no contradictions"]


def read_operations(path: Path) -> list[Any]:
    """One JSON value per non-blank line; a line that is not JSON is a usage error."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CliUsageError(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliUsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    operations = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            operations.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CliUsageError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    if not operations:
        raise CliUsageError(f"{path} has no operations")
    return operations


def run_stream_apply(args: argparse.Namespace, ctx: CliContext) -> int:
    operations = read_operations(Path(args.file).expanduser())
    reports = []
    with ctx.client(args) as client:
        for start in range(0, len(operations), REQUEST_SIZE):
            chunk = operations[start : start + REQUEST_SIZE]
            report = client.post(
                "/api/ontology/apply", {"operations": chunk, "dryRun": bool(args.dry_run)}
            )
            reports.append((start, report))
    answers = {"reports": [report for _, report in reports]}
    ctx.emit(args, answers, lambda _: stream_lines(reports, dry_run=bool(args.dry_run)))
    bad = sum(
        1
        for _, report in reports
        for result in report.get("results", [])
        if result.get("status") in ("skipped", "failed")
    )
    return ExitCode.FAILURE if bad else ExitCode.OK


def stream_lines(reports: Sequence[tuple[int, Mapping[str, Any]]], *, dry_run: bool) -> list[str]:
    """One line per operation (`line N: status operation — reason`) and the totals."""
    lines = []
    totals: dict[str, int] = {}
    for start, report in reports:
        for result in report.get("results", []):
            status = str(result.get("status"))
            totals[status] = totals.get(status, 0) + 1
            text = f"line {start + int(result['index']) + 1}: {status} {result.get('operation')}"
            if result.get("reason"):
                text += f" — {result['reason']}"
            lines.append(text)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(totals.items()))
    lines.append(("dry run: " if dry_run else "") + (summary or "nothing to do"))
    return lines
