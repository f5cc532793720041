"""Document-ingest test helpers: a real service over a temp workspace and its worker."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.embedding.hashing import HashEmbedder
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.queue import jobs
from signet_desktop.queue.worker import QueueWorker, WorkerSettings
from signet_desktop.service.container import BuildOptions, build_service
from signet_desktop.service.documents.worker import DocumentIngest, IngestSettings, build_worker
from signet_desktop.service.facade import SignetService
from signet_desktop.service.imports.faults import FaultPoints
from tests.support.db import database_of

FAST = WorkerSettings(poll_s=0.01, max_backoff_s=0.05, retry_in_s=lambda attempts: 0.0)


def config(**documents: object) -> SignetConfig:
    """The default config with `memory.pipelineV2.documents` overrides (camelCase keys)."""
    return SignetConfig.model_validate(
        {"memory": {"pipelineV2": {"documents": {"allowPrivateNetworks": True, **documents}}}}
    )


def make_service(
    root: Path, cfg: SignetConfig | None = None, embedder: EmbeddingProvider | None = None
) -> SignetService:
    options = BuildOptions(embedder=embedder or HashEmbedder(64))
    return build_service(WorkspacePaths.for_root(root), cfg or config(), options)


def make_worker(
    service: SignetService,
    cfg: SignetConfig | None = None,
    faults: FaultPoints | None = None,
    *,
    lease_ms: int = 300_000,
    queue_lease_ms: int = 300_000,
) -> QueueWorker:
    """The document worker over `service` (no retry backoff; leases as given)."""
    settings = IngestSettings.from_config((cfg or config()).memory.pipeline_v2.documents)
    db = database_of(service)
    handler = DocumentIngest(db, service.documents, settings, faults=faults, lease_ms=lease_ms)
    queue = dataclasses.replace(FAST, lease_ms=queue_lease_ms)
    return build_worker(db, handler, settings=queue, events=service.events)


def drain(worker: QueueWorker, limit: int = 20) -> int:
    """Run steps until no job is left; how many ran."""
    ran = 0
    while ran < limit and worker.run_job() is not None:
        ran += 1
    return ran


def job_of(service: SignetService, document_id: str) -> jobs.Job:
    db = database_of(service)
    row = (
        db.reader()
        .execute("SELECT id FROM memory_jobs WHERE document_id = :id", {"id": document_id})
        .fetchone()
    )
    assert row is not None
    job = jobs.get_job(db.reader(), str(row["id"]))
    assert job is not None
    return job


def count(service: SignetService, sql: str, **params: object) -> int:
    return int(database_of(service).reader().execute(sql, params).fetchone()[0])
