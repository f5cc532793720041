"""`signet status` (what the daemon reports) and `signet doctor` (a pass/fail checklist)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from signet_desktop.cli import doctor, output
from signet_desktop.cli.context import CliContext, ExitCode, Subparsers, add_command
from signet_desktop.client.daemon import DaemonResponseError, DaemonUnreachable

STATUS_EXAMPLES = """\
  signet status
  signet status --json
  SIGNET_PORT=3851 signet status
"""
DOCTOR_EXAMPLES = """\
  signet doctor
  signet doctor --workspace ~/.agents-test
"""


def register(subparsers: Subparsers) -> None:
    """Add `status` and `doctor` to the `signet` parser."""
    status = add_command(
        subparsers,
        "status",
        help="show the daemon's health, memory count and vector/embedding state",
        examples=STATUS_EXAMPLES,
        handler=run_status,
    )
    status.add_argument("--agent", metavar="ID", help="count memories of this agent scope")
    status.add_argument("--json", action="store_true", help="print the raw answers as JSON")
    doc = add_command(
        subparsers,
        "doctor",
        help="check workspace, config, database and daemon; non-zero exit on any failure",
        description="Run a checklist (✓ ok, ! warning, ✗ failure) over the local workspace\n"
        "(config file, database header; no database connection is opened) and the\n"
        "running daemon. Exits 1 if any check fails.",
        examples=DOCTOR_EXAMPLES,
        handler=run_doctor,
    )
    doc.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace to check (default: $SIGNET_WORKSPACE, $SIGNET_PATH, else ~/.agents)",
    )


def _memory_stats(client: Any) -> Mapping[str, Any]:
    page = client.get("/api/memories", {"limit": 1, "offset": 0})
    stats = page.get("stats") if isinstance(page, Mapping) else None
    return stats if isinstance(stats, Mapping) else {}


def status_lines(
    url: str, health: Mapping[str, Any], status: Mapping[str, Any], stats: Mapping[str, Any]
) -> list[str]:
    """Human summary of /health, /api/status and the memory counts."""
    rows: list[tuple[str, str]] = [("daemon", url)]
    rows.append(
        (
            "health",
            f"{health.get('status', '?')} (version {health.get('version', '?')}, "
            f"pid {health.get('pid', '?')}, up {output.duration_text(health.get('uptime'))})",
        )
    )
    if health.get("agentsDir"):
        rows.append(("workspace", str(health["agentsDir"])))
    if stats:
        # Embedded counts come from one source, the embedding row's coverage: the listing's
        # `withEmbeddings` counts differently (any vector of the active generation).
        pinned = f" ({stats['critical']} pinned)" if stats.get("critical") is not None else ""
        rows.append(("memories", f"{stats.get('total', '?')}{pinned}"))
    # imported here: the embedding types load numpy, which only status and doctor need
    from signet_desktop.cli.status_wire import embedding_from_wire, vector_from_wire

    vector = doctor.vector_check(vector_from_wire(status))
    rows.append(("sqlite-vec", vector.text.removeprefix("sqlite-vec ")))
    embedding = embedding_from_wire(status)
    if embedding is not None:
        text = doctor.embedding_check(embedding).text
        rows.append(("embedding", text.removeprefix("embedding ")))
    for check in doctor.startup_checks(status):
        rows.append(("startup", check.text.removeprefix("startup task ")))
    workers = status.get("workers")
    for name, worker in sorted(workers.items() if isinstance(workers, Mapping) else []):
        if isinstance(worker, Mapping) and worker.get("detail"):  # e.g. why hints are idle
            rows.append((f"worker {name}", f"{worker.get('state', '?')}, {worker['detail']}"))
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {value}" for label, value in rows]


def run_status(args: argparse.Namespace, ctx: CliContext) -> int:
    """GET /health, /api/status and /api/memories?limit=1; print a summary."""
    url = ctx.daemon_url(args)
    with ctx.client(args) as client:
        health = client.get("/health")
        status = client.get("/api/status")
        stats = _memory_stats(client)
    if args.json:
        combined = {"url": url, "health": health, "status": status, "memories": stats}
        ctx.print(output.to_json_text(combined))
    else:
        ctx.print("\n".join(status_lines(url, health, status, stats)))
    return ExitCode.OK


def _daemon_checks(
    args: argparse.Namespace, ctx: CliContext, url: str, root: Any
) -> list[doctor.Check]:
    try:
        with ctx.client(args) as client:
            health = client.get("/health")
            status = client.get("/api/status")
            safety = _safety(client)
    except DaemonUnreachable as exc:
        return [doctor.Check(doctor.Level.FAIL, exc.user_message())]
    except DaemonResponseError as exc:
        return [doctor.Check(doctor.Level.FAIL, f"daemon at {url}: {exc.user_message()}")]
    from signet_desktop.cli.status_wire import embedding_from_wire, vector_from_wire

    checks = doctor.daemon_check(url, health, root)
    checks.append(doctor.vector_check(vector_from_wire(status)))
    embedding = embedding_from_wire(status)
    if embedding is not None:
        checks.append(doctor.embedding_check(embedding))
    checks.extend(doctor.startup_checks(status))
    checks.extend(doctor.memory_md_checks(status))
    safety_line = None if safety is None else doctor.safety_check(safety)
    if safety_line is not None:
        checks.append(safety_line)
    return checks


def _safety(client: Any) -> Mapping[str, Any] | None:
    """The content-safety counts, or None from a daemon without the route."""
    try:
        answer = client.get("/api/diagnostics/memory-safety")
    except DaemonResponseError:
        return None
    return answer if isinstance(answer, Mapping) else None


def run_doctor(args: argparse.Namespace, ctx: CliContext) -> int:
    """Print the checklist; exit 1 if any check failed."""
    from signet_desktop.config.workspace import WorkspacePaths, resolve_workspace

    root = resolve_workspace(args.workspace, ctx.env)
    checks = [doctor.workspace_check(root)]
    if root.is_dir():
        checks.extend(doctor.config_checks(root))
        checks.append(doctor.database_check(WorkspacePaths.for_root(root).db_path))
    url = ctx.daemon_url(args)
    checks.extend(_daemon_checks(args, ctx, url, root))
    ctx.print("\n".join(doctor.render(checks)))
    if doctor.failed(checks):
        ctx.print("Some checks failed.")
        return ExitCode.FAILURE
    return ExitCode.OK
