"""Composition: build the database and the facade from a workspace and its config."""

from __future__ import annotations

from dataclasses import dataclass

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.pipeline import PipelineV2Config
from signet_desktop.config.workspace import WorkspacePaths
from signet_desktop.domain.events import EventSink
from signet_desktop.domain.memory import DEFAULT_AGENT_ID
from signet_desktop.embedding.index import VectorIndex
from signet_desktop.embedding.provider import EmbeddingProvider
from signet_desktop.embedding.registry import build_embedder
from signet_desktop.embedding.tracker import EmbeddingTracker
from signet_desktop.inference.secret_store import SecretStore
from signet_desktop.inference.workloads import WorkloadProviders, secrets_dir_for
from signet_desktop.recall.ann import AnnIndexes
from signet_desktop.recall.ann_file import index_directory
from signet_desktop.recall.context import ContextWeights
from signet_desktop.recall.engine import RecallEngine, default_channels
from signet_desktop.recall.evidence_stages import evidence_stages
from signet_desktop.recall.graph_recall import (
    dampening_stages,
    graph_boost_stages,
    graph_channels,
    traversal_bounds,
)
from signet_desktop.recall.hints import HintChannel
from signet_desktop.recall.query_vectors import RecentQueryVectors
from signet_desktop.recall.rerank import configured_rerank
from signet_desktop.recall.vector import SemanticChannel
from signet_desktop.recall.vector_gaps import VectorGaps
from signet_desktop.service import retention
from signet_desktop.service.artifacts import worker as artifact_worker
from signet_desktop.service.artifacts.service import ArtifactService
from signet_desktop.service.artifacts.worker import ArtifactWorker
from signet_desktop.service.documents import connectors
from signet_desktop.service.documents import worker as document_worker
from signet_desktop.service.documents.connectors import ConnectorService, ConnectorWatcher
from signet_desktop.service.documents.service import (
    DocumentLimits,
    DocumentService,
    default_file_roots,
)
from signet_desktop.service.dreaming import worker as dreaming_worker
from signet_desktop.service.dreaming.service import DreamingService, build_dreaming
from signet_desktop.service.dreaming.worker import DreamingWorker
from signet_desktop.service.embeddings import worker as embedding_worker
from signet_desktop.service.embeddings.service import EmbeddingOps, EmbeddingParts
from signet_desktop.service.embeddings.vectors import EmbeddingVectors
from signet_desktop.service.embeddings.worker import EmbeddingWorker
from signet_desktop.service.events import EventBus
from signet_desktop.service.facade import SignetService
from signet_desktop.service.hints import worker as hints_worker
from signet_desktop.service.hints.service import HintService
from signet_desktop.service.hooks.service import HookService
from signet_desktop.service.imports.harness import claude_code_importer, codex_importer
from signet_desktop.service.imports.service import ImportService
from signet_desktop.service.imports.workspace import SignetWorkspaceImporter
from signet_desktop.service.knowledge.expand import EntityExpansion
from signet_desktop.service.knowledge.ontology import OntologyService
from signet_desktop.service.knowledge.service import KnowledgeService
from signet_desktop.service.memories.service import MemoryService
from signet_desktop.service.memory_md import worker as memory_md_worker
from signet_desktop.service.memory_md.service import MemoryMdService
from signet_desktop.service.memory_md.worker import MemoryMdWorker
from signet_desktop.service.pipeline.service import PipelineService
from signet_desktop.service.projection import ProjectionService
from signet_desktop.service.recall.service import RecallService
from signet_desktop.service.recall.telemetry import SearchTelemetry
from signet_desktop.service.retention import MaintenanceWorker, RetentionService
from signet_desktop.service.safety import worker as safety_worker
from signet_desktop.service.safety.service import ContentSafetyService
from signet_desktop.service.secrets import SecretService
from signet_desktop.service.status import StatusBoard
from signet_desktop.service.tokens import TokenService
from signet_desktop.service.transcripts import worker as transcript_worker
from signet_desktop.service.transcripts.service import TranscriptService, default_transcript_roots
from signet_desktop.service.transcripts.worker import TranscriptTtlWorker
from signet_desktop.service.workers import WorkerDeclaration
from signet_desktop.storage.database import Database
from signet_desktop.storage.handle import DatabaseHandle
from signet_desktop.storage.store import open_store


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Knobs tests and benchmarks use; production leaves them at their defaults.

    `embedder` replaces the configured one (tests pass a HashEmbedder or a fake);
    `no_embedder` runs without any (as `embedding.provider: none`); `inline_vectors` embeds
    each remember before its write instead of acknowledging it and letting the vector follow
    from the batcher (the build before the Speed issue; tests that need the vector at once).
    """

    with_vec: bool = True
    embedder: EmbeddingProvider | None = None
    no_embedder: bool = False
    inline_vectors: bool = False


def configured_embedder(config: SignetConfig) -> EmbeddingProvider | None:
    """The embedder `agent.yaml` asks for (None for provider `none`)."""
    section = config.embedding
    return build_embedder(
        section.provider,
        model=section.model,
        dimensions=section.dimensions,
        base_url=section.effective_base_url(),
        api_key=section.api_key.get_secret_value() if section.api_key else None,
        timeout_s=section.timeout_ms / 1000,
        precision=section.precision,
    )


def build_embedding_parts(
    db: DatabaseHandle,
    config: SignetConfig,
    embedder: EmbeddingProvider | None,
    events: EventSink | None = None,
) -> EmbeddingParts:
    """Generation, tracker, worker and the remember-path vector port for `embedder`."""
    index = VectorIndex(db)
    window = config.search.vector_fallback_window
    if embedder is None:
        return EmbeddingParts(index=index, fallback_window=window)
    tracker_config = config.memory.pipeline_v2.embedding_tracker
    tracker = EmbeddingTracker(
        db, index, embedder, batch_size=tracker_config.batch_size, events=events
    )
    generation = tracker.start()
    worker = None
    if tracker_config.enabled:
        worker = EmbeddingWorker(
            tracker, index, poll_s=tracker_config.poll_ms / 1000, events=events
        )
    vectors = EmbeddingVectors(
        index,
        embedder,
        generation,
        prepare_timeout_s=config.embedding.timeout_ms / 1000,
        db=db,
        events=events,
    )
    return EmbeddingParts(index, embedder, tracker, vectors, worker, window)


@dataclass(frozen=True, slots=True)
class Wiring:
    """What every capability builder receives: the database, the workspace, the config, the bus.

    Builders append the workers they declare to `declared`; `build_service` hands the list to
    the pipeline, which is how the daemon learns what to host.
    """

    db: DatabaseHandle
    paths: WorkspacePaths
    config: SignetConfig
    bus: EventBus
    status: StatusBoard
    declared: list[WorkerDeclaration]

    @property
    def pipeline_v2(self) -> PipelineV2Config:
        return self.config.memory.pipeline_v2


@dataclass(frozen=True, slots=True)
class Evidence:
    """The evidence capabilities the others read: transcripts, safety, artifacts, MEMORY.md."""

    transcripts: TranscriptService
    safety: ContentSafetyService
    artifacts: ArtifactService
    memory_md: MemoryMdService


def build_service(
    paths: WorkspacePaths, config: SignetConfig, options: BuildOptions | None = None
) -> SignetService:
    """Open the database `storage.url` names (the workspace's SQLite file by default) and wire
    the facade over it, one capability at a time."""
    options = options or BuildOptions()
    bus = EventBus()
    status = StatusBoard(bus)
    status.follow(bus.connect)
    db = open_store(config.storage, paths.db_path, with_vec=options.with_vec)
    w = Wiring(db, paths, config, bus, status, declared=[])
    embedder = None if options.no_embedder else options.embedder or configured_embedder(config)
    parts = build_embedding_parts(db, config, embedder, bus)
    if parts.worker is not None:
        w.declared.append(embedding_worker.declaration(parts.worker))
    evidence = _evidence(w)
    follow = None if options.inline_vectors else parts.vectors
    memory_service = MemoryService(db, parts.vectors, bus, follow=follow)
    documents, connectors_ = _documents(w, memory_service)
    retention_ = RetentionService(db, w.pipeline_v2.retention, events=bus, status=status.set)
    w.declared.append(retention.declaration(MaintenanceWorker(retention_)))
    inference, secrets = _inference(w)
    dreaming_ = _dreaming(w, inference)
    _hints(w, inference)
    recall = _recall(w, embedder, parts, evidence.safety)
    pipeline_v2 = w.pipeline_v2
    return SignetService(
        db,
        imports=_imports(w, evidence.transcripts, follow),
        memories=memory_service,
        recall=recall,
        transcripts=evidence.transcripts,
        hooks=_hooks(w, memory_service, recall, evidence),
        embeddings=EmbeddingOps(db, parts),
        events=bus,
        status=status,
        pipeline=PipelineService(
            db,
            w.declared,
            paused=pipeline_v2.paused,
            repair=pipeline_v2.repair,
            events=bus,
        ),
        projection=ProjectionService(db, bus),
        safety=evidence.safety,
        artifacts=evidence.artifacts,
        memory_md=evidence.memory_md,
        documents=documents,
        retention=retention_,
        connectors=connectors_,
        ontology=OntologyService(db, workspace=paths.root, events=bus),
        dreaming=dreaming_,
        knowledge=KnowledgeService(db, bus),
        expansion=EntityExpansion(
            db, traversal_bounds(pipeline_v2.traversal), gate=evidence.safety.prompt_texts
        ),
        inference=inference,
        tokens=TokenService(
            db,
            default_ttl_seconds=config.auth.default_token_ttl_seconds,
            session_ttl_seconds=config.auth.session_token_ttl_seconds,
        ),
        secrets=secrets,
        workspace=paths.root,
    )


def _evidence(w: Wiring) -> Evidence:
    """Transcripts, the safety gate, artifacts and MEMORY.md, with their workers."""
    db, bus, root = w.db, w.bus, w.paths.root
    transcripts = TranscriptService(
        db,
        root,
        allowed_roots=default_transcript_roots(),
        configured_roots=w.config.files.roots,
        events=bus,
    )
    w.declared.append(transcript_worker.declaration(TranscriptTtlWorker(transcripts)))
    safety = ContentSafetyService(db)
    bus.connect(safety.on_event)
    w.declared.append(safety_worker.declaration(safety_worker.ContentSafetyWorker(safety)))
    artifacts = ArtifactService(db, root, transcripts, events=bus)
    memory_md = MemoryMdService(db, root, safety=safety, events=bus, status=w.status.set)
    artifact_writer, md_rebuilds = ArtifactWorker(artifacts), MemoryMdWorker(memory_md)
    bus.connect(artifact_writer.notice)  # completed sessions queue their artifact
    bus.connect(md_rebuilds.notice)  # memory and artifact changes mark MEMORY.md stale
    bus.connect(memory_md.notice)  # memory changes drop the cached session-start head
    w.declared.append(artifact_worker.declaration(artifact_writer))
    w.declared.append(memory_md_worker.declaration(md_rebuilds))
    return Evidence(transcripts, safety, artifacts, memory_md)


def _documents(w: Wiring, memories: MemoryService) -> tuple[DocumentService, ConnectorService]:
    """Document ingest and folder connectors, with their workers."""
    pipeline_v2 = w.pipeline_v2
    limits = DocumentLimits.from_config(
        pipeline_v2.documents,
        max_attempts=pipeline_v2.worker.max_retries,
        file_roots=default_file_roots(w.paths.root),
        configured_roots=w.config.files.roots,
    )
    documents = DocumentService(w.db, memories, limits, events=w.bus)
    w.declared.append(document_worker.declaration(w.db, documents, pipeline_v2, events=w.bus))
    connectors_ = ConnectorService(w.db, documents)
    w.declared.append(connectors.declaration(ConnectorWatcher(connectors_)))
    return documents, connectors_


def _inference(w: Wiring) -> tuple[WorkloadProviders, SecretService]:
    """The LLM provider per workload, and the secrets its `$secret:NAME` values read."""
    secrets_dir = secrets_dir_for(w.paths.root)
    inference = WorkloadProviders(w.config.inference, secrets_dir=secrets_dir)
    # agent.yaml's `$secret:NAME` reads the default agent's secrets: a change rebuilds providers.
    secrets = SecretService(
        SecretStore(secrets_dir),
        on_change=lambda agent_id: inference.refresh() if agent_id == DEFAULT_AGENT_ID else None,
    )
    return inference, secrets


def _dreaming(w: Wiring, inference: WorkloadProviders) -> DreamingService:
    """Dreaming passes and the scheduled sweep."""
    dreaming_ = build_dreaming(
        w.db,
        w.config.memory.dreaming,
        provider=inference.source("memory_extraction"),
        workspace=w.paths.root,
        events=w.bus,
    )
    w.declared.append(dreaming_worker.declaration(DreamingWorker(dreaming_)))
    return dreaming_


def _hints(w: Wiring, inference: WorkloadProviders) -> None:
    """Prospective hints: only a worker, fed by the bus."""
    pipeline_v2 = w.pipeline_v2
    hints = HintService(
        w.db,
        pipeline_v2.hints,
        inference.source("memory_extraction"),
        max_attempts=pipeline_v2.worker.max_retries,
    )
    declared, worker = hints_worker.declaration(
        w.db, hints, pipeline_v2, events=w.bus, status=w.status.note_worker
    )
    w.bus.connect(worker.notice)  # new memories are queued for prospective hints
    w.declared.append(declared)


def _recall(
    w: Wiring,
    embedder: EmbeddingProvider | None,
    parts: EmbeddingParts,
    safety: ContentSafetyService,
) -> RecallService:
    """The recall engine (channels and post-fusion stages from config) and its telemetry."""
    search, pipeline_v2 = w.config.search, w.pipeline_v2
    # One query embedding serves the semantic and the traversal channel.
    query_vectors = None if embedder is None else RecentQueryVectors(embedder)
    ann = None
    # The usearch graph files sit beside the SQLite file; PostgreSQL has its HNSW index.
    if search.vector_ann_index and w.db.vec.available and isinstance(w.db, Database):
        ann = AnnIndexes(index_directory(w.db.path), w.db.reader)
    semantic = SemanticChannel(
        query_vectors,
        vec_available=w.db.vec.available,
        fallback_window=parts.fallback_window,
        gaps=None if embedder is None else VectorGaps(embedder),
        exact_max_rows=search.vector_exact_max_rows,
        ann=ann,
    )
    engine = RecallEngine(
        w.db,
        min_score=search.min_score,
        channels=(
            *default_channels(semantic),
            *graph_channels(pipeline_v2.traversal, semantic, query_vectors),
            HintChannel(),  # always: 0.03 ms a query while no hint is stored
        ),
        alpha=search.alpha,
        context=ContextWeights(search.who_boost, search.session_weight),
        depth=search.top_k,
        stages=(
            *graph_boost_stages(pipeline_v2.graph, pipeline_v2.traversal),
            *configured_rerank(pipeline_v2.reranker, None if embedder is None else semantic),
            *dampening_stages(pipeline_v2.dampening),
            *evidence_stages(pipeline_v2.evidence),
        ),
        flat_share=pipeline_v2.traversal.flat_reserve_share,
    )
    telemetry = SearchTelemetry(
        w.db,
        enabled=search.telemetry.enabled,
        retention_days=search.telemetry.retention_days,
        max_rows_per_agent=search.telemetry.max_rows_per_agent,
    )
    return RecallService(engine, w.db, gate=safety, telemetry=telemetry, ann=ann)


def _hooks(
    w: Wiring, memories: MemoryService, recall: RecallService, evidence: Evidence
) -> HookService:
    """What harnesses ask at session start, on each prompt and at the end."""
    return HookService(
        w.db,
        w.config.hooks,
        memories_=memories,
        recall=recall,
        transcripts=evidence.transcripts,
        workspace=w.paths.root,
        artifacts=evidence.artifacts,
        memory_md=evidence.memory_md,
        safety=evidence.safety,
    )


def _imports(
    w: Wiring, transcripts: TranscriptService, follow: EmbeddingVectors | None
) -> ImportService:
    """Sources of existing history: Claude Code, Codex and a Signet workspace."""
    return ImportService(
        w.db,
        w.paths.root,
        transcripts,
        importers=(
            claude_code_importer(),
            codex_importer(),
            SignetWorkspaceImporter(follow=follow, own_database=w.paths.db_path),
        ),
        allowed_roots=default_transcript_roots(),
        configured_roots=w.config.files.roots,
        events=w.bus,
    )
