"""The service facade: the product's operations, composed of one service per capability.

Surfaces (HTTP, MCP, hooks, the CLI through HTTP, the inspector in-process) call
`service.<capability>.<operation>(...)`; every method takes and returns domain values and checks
scope itself (`domain/scope.py`). Methods block on SQLite or a provider: call them off the
event loop. Capabilities so far: `memories`, `recall`, `embeddings`, `pipeline`, `projection`
(the embedding map), `transcripts` (retained harness sessions), `hooks` (what harnesses ask
at session start, on each prompt, at the end and around compaction), `safety` (the
content-safety gate for prompt-facing text and its decision ledger), `artifacts` (Markdown
session history under memory/ and its index), `memory_md` (the MEMORY.md projection),
`documents` (document ingest: submit, read, list, chunks, delete), `retention` (the
retention/maintenance sweep and its recorded runs), `connectors` (folder sources kept in
step with document ingest), `dreaming` (Dreaming passes: trigger, status, passes, one
pass in full; docs/DREAMING.md), `inference` (the LLM provider per workload and its
secret-free status; docs/INFERENCE.md), `tokens` (scoped API tokens: issue, list, revoke,
authenticate), `expansion` (one entity's structure and evidence, `knowledge_expand`),
`feedback` (agents' ratings of recalled memories); plus `events` (the bus,
in-process), `stream` (scoped subscriptions for outside readers) and `status()` / `ping()` /
`close()` for the process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet_desktop.config.inference import InferenceConfig
from signet_desktop.config.models import DreamingConfig
from signet_desktop.config.pipeline import DocumentsConfig
from signet_desktop.config.sections import HooksConfig
from signet_desktop.config.storage import StorageBackend
from signet_desktop.domain.vector_search import VecStatus
from signet_desktop.inference.secret_store import SecretStore
from signet_desktop.inference.workloads import WorkloadProviders, secrets_dir_for
from signet_desktop.recall.ann import AnnStatus
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.documents.connectors import ConnectorService
from signet_desktop.service.documents.service import (
    DocumentLimits,
    DocumentService,
    default_file_roots,
)
from signet_desktop.service.dreaming.cited_sources import CitedSources
from signet_desktop.service.dreaming.service import DreamingService, build_dreaming
from signet_desktop.service.embeddings.service import EmbeddingOps, EmbeddingStatus
from signet_desktop.service.events import EventBus
from signet_desktop.service.hooks.service import HookService
from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.knowledge.expand import EntityExpansion
from signet_desktop.service.knowledge.ontology import OntologyService
from signet_desktop.service.knowledge.service import KnowledgeService
from signet_desktop.service.memories.feedback import FeedbackService
from signet_desktop.service.memories.service import MemoryService
from signet_desktop.service.memory_md.service import MemoryMdService
from signet_desktop.service.pipeline.service import PipelineService
from signet_desktop.service.projection import ProjectionService
from signet_desktop.service.recall.service import RecallService
from signet_desktop.service.retention import RetentionService
from signet_desktop.service.safety.service import ContentSafetyService
from signet_desktop.service.secrets import SecretService
from signet_desktop.service.status import StatusBoard
from signet_desktop.service.stream import EventStream
from signet_desktop.service.tokens import TokenService
from signet_desktop.service.transcripts.service import TranscriptService, default_transcript_roots
from signet_desktop.storage.connect import sqlite_version
from signet_desktop.storage.database import Database
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.migrate import applied_count


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """Where the database lives, which engine runs it, how many migrations it has.

    SQLite: `path` is the file and `sqlite_version` the library's. PostgreSQL: no file
    (`path` and `sqlite_version` are None), `url` is `storage.url` (never a password) and
    `server_version` what the server reports.
    """

    path: Path | None
    sqlite_version: str | None
    migrations: int
    backend: StorageBackend = "sqlite"
    url: str | None = None
    server_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire shape (/api/status `database`)."""
        return {
            "backend": self.backend,
            "path": None if self.path is None else str(self.path),
            "sqliteVersion": self.sqlite_version,
            "url": self.url,
            "serverVersion": self.server_version,
            "migrations": self.migrations,
        }


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """Everything /api/status and `signet doctor` report about the running service.

    `process` holds the facts the daemon posted on the status board (runtime, config,
    start-up tasks, workers), already in their wire shape.
    """

    database: DatabaseInfo
    vector: VecStatus
    embedding: EmbeddingStatus
    process: Mapping[str, Any]
    # The approximate (HNSW) index's partitions opened since start; None: not configured.
    approximate: tuple[AnnStatus, ...] | None = None


class SignetService:
    """Every operation the product offers, by capability, scoped by agent."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        memories: MemoryService,
        recall: RecallService,
        embeddings: EmbeddingOps,
        events: EventBus,
        status: StatusBoard,
        pipeline: PipelineService | None = None,
        projection: ProjectionService | None = None,
        transcripts: TranscriptService | None = None,
        hooks: HookService | None = None,
        safety: ContentSafetyService | None = None,
        imports: ImportService | None = None,
        artifacts: ArtifactService | None = None,
        memory_md: MemoryMdService | None = None,
        documents: DocumentService | None = None,
        retention: RetentionService | None = None,
        connectors: ConnectorService | None = None,
        ontology: OntologyService | None = None,
        knowledge: KnowledgeService | None = None,
        dreaming: DreamingService | None = None,
        inference: WorkloadProviders | None = None,
        tokens: TokenService | None = None,
        expansion: EntityExpansion | None = None,
        secrets: SecretService | None = None,
        workspace: Path | None = None,
    ) -> None:
        self._db = db
        self.memories = memories
        self.recall = recall
        self.embeddings = embeddings
        self.events = events
        self.stream = EventStream(events)
        self.status_board = status
        self.pipeline = pipeline or PipelineService(db, ())
        self.projection = projection or ProjectionService(db, events)
        self.safety = safety or ContentSafetyService(db)
        # The workspace folder: given (build_service), else the one holding the SQLite file.
        root = workspace if workspace is not None else _workspace_of(db)
        self.transcripts = transcripts or TranscriptService(db, root, events=events)
        self.hooks = hooks or HookService(
            db,
            HooksConfig(),
            memories_=memories,
            recall=recall,
            transcripts=self.transcripts,
            workspace=root,
            safety=self.safety,
        )
        self.imports = imports or ImportService(
            db,
            root,
            self.transcripts,
            importers=(claude_code_importer(), codex_importer()),
            allowed_roots=default_transcript_roots(),
            events=events,
        )
        self.artifacts = artifacts or ArtifactService(db, root, self.transcripts, events=events)
        self.memory_md = memory_md or MemoryMdService(
            db, root, safety=self.safety, events=events, status=status.set
        )
        self.documents = documents or DocumentService(
            db,
            memories,
            DocumentLimits.from_config(
                DocumentsConfig(), max_attempts=3, file_roots=default_file_roots(root)
            ),
            events=events,
        )
        self.retention = retention or RetentionService(db, events=events, status=status.set)
        self.connectors = connectors or ConnectorService(db, self.documents)
        self.ontology = ontology or OntologyService(db, workspace=root, events=events)
        self.knowledge = knowledge or KnowledgeService(db, events)
        self.cited_sources = CitedSources(db, root)  # a quote's source text (inspector)
        self.dreaming = dreaming or build_dreaming(
            db, DreamingConfig(), workspace=root, events=events
        )
        # The LLM provider per workload (inference/workloads.py); none configured by default.
        self.inference = inference or WorkloadProviders(InferenceConfig())
        self.tokens = tokens or TokenService(db)  # scoped API tokens (docs/HTTP.md)
        # One entity expanded (knowledge_expand) and agents' ratings of recalled memories.
        self.expansion = expansion or EntityExpansion(db, gate=self.safety.prompt_texts)
        self.feedback = FeedbackService(db)
        # Named values for the providers, never shown (`<workspace>/.secrets/`, docs/HTTP.md).
        self.secrets = secrets or SecretService(SecretStore(secrets_dir_for(root)))
        self._closed = False

    def ping(self) -> bool:
        """Is the database usable at all? (`/health`, `/health/ready`; never raises)"""
        return self._db.ping()

    def status(self) -> ServiceStatus:
        """DatabaseHandle, vector and embedding facts plus what the daemon posted."""
        return ServiceStatus(
            database=database_info(self._db),
            vector=self._db.vec,
            embedding=self.embeddings.status(),
            process=self.status_board.snapshot(),
            approximate=self.recall.approximate_indexes(),
        )

    def close(self) -> None:
        """Stop the recall and remember thread pools and close the database (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.dreaming.close()
        self.inference.close()
        self.imports.close()
        self.projection.close()
        self.recall.close()
        self.embeddings.close()
        self.transcripts.close()
        self._db.close()


def _workspace_of(db: DatabaseHandle) -> Path:
    """The workspace root holding `memory/memories.db` (config/workspace.py)."""
    if not isinstance(db, Database):
        raise ValueError("a PostgreSQL-backed service needs its workspace folder given")
    return Path(db.path).parent.parent


def database_info(db: DatabaseHandle) -> DatabaseInfo:
    """What /api/status and `signet doctor` say of the database, per backend."""
    conn = db.reader()
    migrations = applied_count(conn)
    if not is_postgres(conn):
        path = db.path if isinstance(db, Database) else None
        return DatabaseInfo(path, sqlite_version(), migrations)
    version = str(conn.execute("SHOW server_version").fetchone()[0])
    url = getattr(db, "url", None)
    return DatabaseInfo(
        None, None, migrations, backend="postgresql", url=url, server_version=version
    )
