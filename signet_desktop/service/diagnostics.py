"""The health checks `signet doctor` prints and the inspector's Health pane shows.

Local checks read files only (workspace, `agent.yaml`, the database header; no connection is
opened). Status checks judge the service's own values (`ServiceStatus`: `DatabaseInfo`,
`VecStatus`, `EmbeddingStatus`) and the facts the daemon posts on its status board (start-up
tasks, workers, MEMORY.md: `ServiceStatus.process`). The Health pane passes them in-process;
`signet doctor` reads them back from `/api/status` (`cli/status_wire.py`), so both say the
same thing about the same facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from signet_desktop.domain.vector_search import VecStatus
    from signet_desktop.service.embeddings.service import EmbeddingStatus
    from signet_desktop.service.facade import DatabaseInfo, ServiceStatus


class Level(Enum):
    """A check's outcome; only FAIL makes doctor exit non-zero."""

    OK = "✓"
    WARN = "!"
    FAIL = "✗"


@dataclass(frozen=True, slots=True)
class Check:
    """One checklist line plus indented detail lines."""

    level: Level
    text: str
    details: tuple[str, ...] = ()


# -- local checks (files only) -------------------------------------------------------------


def workspace_check(root: Path) -> Check:
    """The workspace directory exists."""
    if root.is_dir():
        return Check(Level.OK, f"workspace {root}")
    if root.exists():
        return Check(Level.FAIL, f"workspace {root} exists but is not a directory")
    return Check(
        Level.FAIL,
        f"workspace {root} does not exist (`signet-desktop --headless` creates it on first start)",
    )


def config_checks(root: Path) -> list[Check]:
    """agent.yaml parses; ignored Signet keys are listed, unknown keys warned about."""
    from signet_desktop.config.describe import ignored_keys
    from signet_desktop.config.loader import ConfigError, load_config
    from signet_desktop.config.workspace import WorkspacePaths

    try:
        loaded = load_config(WorkspacePaths.for_root(root))
    except ConfigError as exc:
        return [Check(Level.FAIL, f"config: {exc}")]
    text = f"config {loaded.path} parsed" if loaded.path else "no agent.yaml: using defaults"
    details: tuple[str, ...] = ()
    ignored = ignored_keys(loaded)
    if ignored:
        details = ("ignored (Signet keys this build does not apply): " + ", ".join(ignored),)
    checks = [Check(Level.OK, text, details)]
    checks.extend(Check(Level.WARN, f"config: {warning}") for warning in loaded.warnings)
    return checks


def database_check(db_path: Path) -> Check:
    """The database file, if present, starts with the SQLite header (read-only check)."""
    from signet_desktop.service.preflight import database_file_problem

    if not db_path.exists():
        return Check(Level.WARN, f"database {db_path} not created yet (the daemon creates it)")
    problem = database_file_problem(db_path)
    if problem is not None:
        return Check(Level.FAIL, f"database: {problem}")
    size_mb = db_path.stat().st_size / 1_048_576
    return Check(Level.OK, f"database {db_path} is SQLite ({size_mb:.1f} MB)")


# -- status checks (the service's values) ------------------------------------------------


def status_checks(status: ServiceStatus) -> list[Check]:
    """Every status check of an in-process service (the Health pane's list)."""
    checks = [
        schema_check(status.database),
        vector_check(status.vector),
        completeness_check(status.embedding),
        embedding_check(status.embedding),
    ]
    checks.extend(startup_checks(status.process))
    checks.extend(worker_checks(status.process))
    return checks


def schema_check(database: DatabaseInfo) -> Check:
    """The open database: SQLite (or PostgreSQL) version and applied migrations."""
    if database.backend == "postgresql":
        engine = f"{database.url} open (PostgreSQL {database.server_version}"
    else:
        engine = f"{database.path} open (SQLite {database.sqlite_version}"
    text = f"database {engine}, {database.migrations} migrations applied)"
    return Check(Level.OK if database.migrations else Level.WARN, text)


def vector_check(vector: VecStatus | None) -> Check:
    """sqlite-vec loaded in the daemon (None: the daemon did not say)."""
    if vector is None:
        return Check(Level.WARN, "sqlite-vec: the daemon does not report vector status")
    if vector.available:
        return Check(Level.OK, f"sqlite-vec loaded ({vector.version or 'unknown version'})")
    return Check(
        Level.WARN,
        f"sqlite-vec not loaded: {vector.error or 'not loaded'}",
        ("recall falls back to a bounded cosine scan of the newest vectors and says so",),
    )


COMPLETENESS_TEXT = {
    "complete": "every current vector is searched (sqlite-vec)",
    "recent-window": "only the newest vectors are scanned (no sqlite-vec)",
    "unavailable": "no vector search: recall is keyword-only",
}


def completeness_check(embedding: EmbeddingStatus) -> Check:
    """What recall's `vectorCompleteness` will say."""
    mode = embedding.vector_search
    level = Level.OK if mode == "complete" else Level.WARN
    return Check(level, f"vectorCompleteness {mode}: {COMPLETENESS_TEXT.get(mode, mode)}")


def embedding_check(embedding: EmbeddingStatus) -> Check:
    """The embedder and its coverage."""
    name = " ".join(part for part in (embedding.provider, embedding.model) if part)
    facts = []
    if embedding.dimensions:
        facts.append(f"{embedding.dimensions} dims")
    coverage = embedding.coverage
    if coverage is not None:
        facts.append(f"coverage {coverage.embedded}/{coverage.total}")
    return Check(Level.OK, f"embedding {name}" + (f" ({', '.join(facts)})" if facts else ""))


def startup_checks(process: Mapping[str, Any]) -> list[Check]:
    """Background start-up tasks (model loading, ...): failed ✗, still running !, done ✓.

    `process`: the status board's facts (`ServiceStatus.process`).
    """
    startup = process.get("startup")
    if not isinstance(startup, Mapping):
        return []
    checks = []
    for name, task in startup.items():
        state = str(task.get("state", "?")) if isinstance(task, Mapping) else str(task)
        error = task.get("error") if isinstance(task, Mapping) else None
        if state == "failed":
            checks.append(Check(Level.FAIL, f"startup task {name} failed: {error or 'no reason'}"))
        elif state == "done":
            checks.append(Check(Level.OK, f"startup task {name} done"))
        else:
            checks.append(Check(Level.WARN, f"startup task {name} {state}"))
    return checks


def memory_md_checks(process: Mapping[str, Any]) -> list[Check]:
    """MEMORY.md per agent (the board's `memoryMd`): written ✓, the last write failed ✗."""
    facts = process.get("memoryMd")
    agents = facts.get("agents") if isinstance(facts, Mapping) else None
    if not isinstance(agents, Mapping):
        return []
    checks = []
    for agent_id, fact in sorted(agents.items()):
        if not isinstance(fact, Mapping):
            continue
        path = fact.get("path", "?")
        if fact.get("state") == "error":
            text = f"MEMORY.md of {agent_id} not written at {path}: {fact.get('error')}"
            checks.append(Check(Level.FAIL, text + " (the previous file is unchanged)"))
        else:
            checks.append(Check(Level.OK, f"MEMORY.md of {agent_id} written at {path}"))
    return checks


WORKER_LEVELS = {"running": Level.OK, "crashed": Level.FAIL}


def worker_checks(process: Mapping[str, Any]) -> list[Check]:
    """Hosted workers (the board's `workers`): running ✓, crashed ✗, anything else !."""
    workers = process.get("workers")
    if not isinstance(workers, Mapping):
        return []
    checks = []
    for name, worker in sorted(workers.items()):
        state = str(worker.get("state", "?")) if isinstance(worker, Mapping) else str(worker)
        error = worker.get("error") if isinstance(worker, Mapping) else None
        text = f"worker {name} {state}" + (f": {error}" if error else "")
        detail = worker.get("detail") if isinstance(worker, Mapping) else None
        text += f" ({detail})" if detail else ""  # a worker's own account (hints: why idle)
        checks.append(Check(WORKER_LEVELS.get(state, Level.WARN), text))
    return checks


def safety_check(safety: Mapping[str, Any]) -> Check | None:
    """Content-safety decisions of one agent (the /api/diagnostics/memory-safety shape)."""
    counts = safety.get("counts")
    if not isinstance(counts, Mapping):
        return None
    text = (
        f"content safety {safety.get('policyVersion', '?')}: {counts.get('clean', 0)} clean, "
        f"{counts.get('tainted', 0)} tainted, {counts.get('blocked', 0)} blocked"
    )
    waiting = int(safety.get("pending") or 0)
    if waiting:
        text += f", {waiting} awaiting a scan (gated in memory meanwhile)"
    reasons = safety.get("reasons")
    details: tuple[str, ...] = ()
    if isinstance(reasons, Mapping) and reasons:
        listed = ", ".join(f"{name} {count}" for name, count in sorted(reasons.items()))
        details = (f"withheld from prompts: {listed}",)
    return Check(Level.OK, text, details)


def render(checks: list[Check]) -> list[str]:
    """`✓ text` lines with indented details."""
    lines = []
    for check in checks:
        lines.append(f"{check.level.value} {check.text}")
        lines.extend(f"    {detail}" for detail in check.details)
    return lines


def failed(checks: list[Check]) -> bool:
    """Whether any check failed."""
    return any(check.level is Level.FAIL for check in checks)
