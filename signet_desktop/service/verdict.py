"""The app's one judgment of its own state: what the tray, the status bar, Health and Queue say.

`read_facts` gathers what the judgment needs in one blocking read (the database, the status
board, the agent's queue); `judge` is a pure function of those facts. Every surface shows the
`Verdict` it returns, so none can disagree with another. A failed item (a dead job, and the
document it was ingesting) is a `FailedItem` notice with its own Retry (`retry`: the queue's
requeue of that one job), never a degraded app: the state speaks for the service (database,
workers, vectors), the notices for the work it could not finish.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain.errors import SignetError
from signet_desktop.queue.jobs import Job
from signet_desktop.queue.repair import RepairRequest
from signet_desktop.service.facade import ServiceStatus, SignetService
from signet_desktop.service.health import health_of
from signet_desktop.service.pipeline.queue_ops import RepairResult

# Worst first: the first that applies is the state.
STATES = ("error", "paused", "degraded", "working", "healthy")
WORDS = {
    "error": "Needs attention",
    "paused": "Paused",
    "degraded": "Degraded",
    "working": "Working",
    "healthy": "Ready",
}
DOCUMENT_JOB = "document_ingest"


@dataclass(frozen=True, slots=True)
class WorkerFact:
    """One hosted worker as the judgment sees it."""

    name: str
    state: str  # pending | running | paused | stopped | crashed
    error: str | None = None


@dataclass(frozen=True, slots=True)
class FailedItem:
    """A job that spent its attempts (and the document it was for): a notice with Retry."""

    job_id: str
    job_type: str
    error: str | None
    failed_at: str
    document_id: str | None = None
    document: str | None = None  # the document's title or address, when it is one

    @property
    def label(self) -> str:
        """`the document “design-doc.pdf”`, or `an embedding backfill job`."""
        if self.document_id is not None:
            return f"the document “{self.document or self.document_id[:8]}”"
        kind = self.job_type.replace("_", " ")
        return ("an " if kind[:1] in "aeiou" else "a ") + kind + " job"


@dataclass(frozen=True, slots=True)
class StateFacts:
    """What the judgment reads."""

    database_ok: bool
    warming_up: tuple[str, ...] = ()
    startup_failed: tuple[str, ...] = ()  # start-up tasks that failed (the embedder's load)
    embedder: str = "none"  # provider name; "none" runs lexical-only
    embedded: int = 0
    embeddable: int = 0  # live memories the embedder's generation should cover
    vector_search: str = "unavailable"  # complete | recent-window | unavailable
    workers: tuple[WorkerFact, ...] = ()
    paused: bool = False
    jobs_active: int = 0  # pending + leased
    stuck: int = 0  # leases expired or held too long (the Queue's "Release expired leases")
    failed: int = 0  # dead jobs
    failed_items: tuple[FailedItem, ...] = ()  # the oldest few of them
    health: str = "healthy"  # healthy | degraded | unhealthy (service/health.py)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The state (one of STATES), why, and the failed items to offer a Retry on."""

    state: str
    reason: str
    failed: int = 0
    notices: tuple[FailedItem, ...] = ()

    @property
    def words(self) -> str:
        """`Ready`, `Working`, `Paused`, `Degraded`, `Needs attention`."""
        return WORDS[self.state]

    @property
    def headline(self) -> str:
        """What the status bar leads with: `Ready`, `Embedding 40 of 120…`, `Paused`,
        `Degraded: vector search unavailable`, `Needs attention: the database does not answer`."""
        if self.state in ("healthy", "paused"):
            return self.words
        if self.state == "working":
            return self.reason[:1].upper() + self.reason[1:] + "…"
        return f"{self.words}: {self.reason}"

    @property
    def failed_text(self) -> str:
        """`1 failed item` ("" without one)."""
        if not self.failed:
            return ""
        return f"{self.failed:,} failed item" + ("" if self.failed == 1 else "s")


def judge(facts: StateFacts) -> Verdict:
    """The one state every surface shows: the worst fact about the service wins."""
    state, reason = _state(facts)
    return Verdict(state, reason, facts.failed, facts.failed_items)


def _state(facts: StateFacts) -> tuple[str, str]:
    if not facts.database_ok:
        return "error", "the database does not answer"
    crashed = [w for w in facts.workers if w.state == "crashed"]
    if crashed:
        detail = f": {crashed[0].error}" if crashed[0].error else ""
        return "error", f"worker {crashed[0].name} crashed{detail}"
    if facts.paused:
        return "paused", "workers paused"
    if facts.startup_failed:
        return "degraded", "start-up task " + ", ".join(facts.startup_failed) + " failed"
    if facts.health != "healthy":
        return "degraded", vectors_text(facts)
    if facts.stuck:
        noun = "job is" if facts.stuck == 1 else "jobs are"
        return "degraded", f"{facts.stuck:,} {noun} stuck in an expired lease"
    if facts.warming_up:
        return "working", "warming up (" + ", ".join(facts.warming_up) + ")"
    if facts.embedder != "none" and facts.embedded < facts.embeddable:
        return "working", f"embedding {facts.embedded:,} of {facts.embeddable:,}"
    if facts.jobs_active:
        noun = "job" if facts.jobs_active == 1 else "jobs"
        return "working", f"{facts.jobs_active:,} {noun} queued"
    return "healthy", "ready"


def vectors_text(facts: StateFacts) -> str:
    """`vectors complete`, `vectors 72% (1,204 to go)`, `keyword only (no embedder)`."""
    if facts.embedder == "none":
        return "keyword only (no embedder)"
    if facts.vector_search == "unavailable":
        return "vector search unavailable"
    missing = max(facts.embeddable - facts.embedded, 0)
    if missing == 0:
        suffix = "" if facts.vector_search == "complete" else f" ({facts.vector_search})"
        return "vectors complete" + suffix
    percent = int(100 * facts.embedded / facts.embeddable) if facts.embeddable else 0
    return f"vectors {percent}% ({missing:,} to go)"


MAX_NOTICES = 10


def read_facts(service: SignetService, agent_id: str) -> StateFacts:
    """Collect the facts for `agent_id` (blocks: run it in a worker thread)."""
    status = service.status()
    database_ok = service.ping()
    pipeline = service.pipeline.status()
    queue = service.pipeline.queue.diagnostics(agent_id)
    coverage = status.embedding.coverage
    return StateFacts(
        database_ok=database_ok,
        warming_up=startup_in(status.process.get("startup"), ("pending", "running")),
        startup_failed=startup_in(status.process.get("startup"), ("failed",)),
        embedder=status.embedding.provider,
        embedded=coverage.embedded if coverage is not None else 0,
        embeddable=coverage.total if coverage is not None else 0,
        vector_search=status.embedding.vector_search,
        workers=workers_of(status, pipeline.workers),
        paused=pipeline.mode == "paused",
        jobs_active=queue.counts.get("pending", 0) + queue.counts.get("leased", 0),
        stuck=queue.lease_anomalies,
        failed=queue.counts.get("dead", 0),
        failed_items=tuple(
            failed_item(service, agent_id, job) for job in queue.oldest_dead[:MAX_NOTICES]
        ),
        health=health_of(status, database_ok).status,
    )


def failed_item(service: SignetService, agent_id: str, job: Job) -> FailedItem:
    """A dead job as a notice, named by its document when it ingested one."""
    document = None
    if job.document_id is not None:
        try:
            found = service.documents.get(agent_id, job.document_id)
            document = found.title or found.source_url
        except SignetError:  # deleted since: the job still names it by id
            document = None
    return FailedItem(
        job_id=job.id,
        job_type=job.job_type,
        error=job.error,
        failed_at=job.failed_at or job.updated_at,
        document_id=job.document_id,
        document=document,
    )


def retry(service: SignetService, agent_id: str, item: FailedItem) -> RepairResult:
    """Run the failed item again: the queue's requeue of exactly its job (blocks)."""
    request = RepairRequest("requeue", dry_run=False, ids=(item.job_id,), max_batch=1)
    return service.pipeline.queue.repair(agent_id, request)


def workers_of(status: ServiceStatus, declared: Any) -> tuple[WorkerFact, ...]:
    """The status board's worker facts (from `worker.state` events), else the pipeline's."""
    facts = status.process.get("workers")
    if isinstance(facts, Mapping) and facts:
        return tuple(
            WorkerFact(str(name), str(fact.get("state", "pending")), fact.get("error"))
            for name, fact in sorted(facts.items())
            if isinstance(fact, Mapping)
        )
    return tuple(WorkerFact(w.name, w.state, w.error) for w in declared)


def startup_in(startup: Any, states: tuple[str, ...]) -> tuple[str, ...]:
    """The start-up tasks (the board's `startup`) in one of `states`."""
    if not isinstance(startup, Mapping):
        return ()
    return tuple(
        sorted(
            name
            for name, task in startup.items()
            if isinstance(task, Mapping) and task.get("state") in states
        )
    )
