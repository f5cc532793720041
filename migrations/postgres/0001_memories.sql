-- PostgreSQL rendering of migrations/0001_memories.sql: the same tables, columns and
-- meanings. Differences by dialect: JSON columns are jsonb; the FTS5 table and its triggers
-- become a generated tsvector column with a GIN index ('simple': lowercased words, no
-- stemming, as unicode61 without porter); canonical vectors are pgvector values (their HNSW
-- index is made per generation, as the vec0 tables are in SQLite); the append-only trigger
-- is a plpgsql function. Timestamps stay ISO-8601 UTC text, as the domain writes them.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE memories (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    type TEXT NOT NULL DEFAULT 'fact',
    category TEXT,
    content TEXT NOT NULL,
    normalized_content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
    pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    tags JSONB NOT NULL DEFAULT '[]',
    who TEXT,
    why TEXT,
    project TEXT,
    scope TEXT,
    visibility TEXT NOT NULL DEFAULT 'global' CHECK (visibility IN ('global', 'private', 'archived')),
    memory_kind TEXT NOT NULL DEFAULT 'episodic',
    source_type TEXT,
    source_id TEXT,
    source_path TEXT,
    source_section TEXT,
    runtime_path TEXT,
    idempotency_key TEXT,
    session_id TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    evidence_meta TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL DEFAULT 'system',
    occurred_at TEXT,
    last_accessed TEXT,
    access_count INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    update_count INTEGER NOT NULL DEFAULT 0,
    manual_override INTEGER NOT NULL DEFAULT 0,
    vector_clock TEXT,
    is_deleted INTEGER NOT NULL DEFAULT 0 CHECK (is_deleted IN (0, 1)),
    deleted_at TEXT,
    delete_reason TEXT,
    extraction_status TEXT NOT NULL DEFAULT 'none',
    embedding_model TEXT,
    extraction_model TEXT,
    superseded_by TEXT,
    superseded_at TEXT,
    superseded_reason TEXT,
    stale_at TEXT,
    review_after TEXT,
    content_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
);

CREATE UNIQUE INDEX idx_memories_live_content_hash
    ON memories (agent_id, visibility, COALESCE(scope, ''), content_hash)
    WHERE is_deleted = 0;
CREATE UNIQUE INDEX idx_memories_live_idempotency_key
    ON memories (agent_id, idempotency_key)
    WHERE is_deleted = 0 AND idempotency_key IS NOT NULL;
CREATE INDEX idx_memories_agent_source ON memories (agent_id, source_type, source_id)
    WHERE source_id IS NOT NULL;
CREATE INDEX idx_memories_agent_created ON memories (agent_id, is_deleted, created_at);
CREATE INDEX idx_memories_agent_project ON memories (agent_id, project);
CREATE INDEX idx_memories_deleted_at ON memories (deleted_at) WHERE is_deleted = 1;
CREATE INDEX idx_memories_content_tsv ON memories USING GIN (content_tsv);

CREATE TABLE memory_history (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT 'default',
    event TEXT NOT NULL CHECK (event IN (
        'created', 'modified', 'deleted', 'recovered', 'purged', 'deduped',
        'proposal', 'observation', 'none')),
    old_content TEXT,
    new_content TEXT,
    changed_by TEXT NOT NULL,
    actor_type TEXT NOT NULL DEFAULT 'user',
    reason TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    session_id TEXT,
    request_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_memory_history_memory ON memory_history (agent_id, memory_id, created_at);

CREATE FUNCTION memory_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'memory_history is append-only';
END;
$$;

CREATE TRIGGER memory_history_immutable_update BEFORE UPDATE ON memory_history
    FOR EACH ROW EXECUTE FUNCTION memory_history_append_only();

CREATE TABLE embedding_generations (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL CHECK (dimensions > 0),
    vec_table TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'building' CHECK (status IN ('building', 'active', 'retired')),
    created_at TEXT NOT NULL,
    activated_at TEXT,
    retired_at TEXT,
    UNIQUE (model, dimensions)
);

-- Canonical vectors; `vector` has no declared width, each row is checked against its own.
CREATE TABLE embeddings (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    generation_id BIGINT NOT NULL REFERENCES embedding_generations (id),
    source_type TEXT NOT NULL DEFAULT 'memory',
    source_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL CHECK (dimensions > 0),
    vector VECTOR NOT NULL CHECK (vector_dims(vector) = dimensions),
    chunk_text TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (generation_id, source_type, source_id)
);
CREATE INDEX idx_embeddings_agent_generation ON embeddings (agent_id, generation_id, id);
CREATE INDEX idx_embeddings_source ON embeddings (source_type, source_id);

CREATE TABLE memory_jobs (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    job_type TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead', 'cancelled')),
    memory_id TEXT,
    document_id TEXT,
    payload JSONB NOT NULL DEFAULT '{}',
    result TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    lease_token TEXT,
    leased_at TEXT,
    lease_expires_at TEXT,
    run_after TEXT,
    completed_at TEXT,
    failed_at TEXT,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_memory_jobs_lease ON memory_jobs (job_type, status, created_at);
CREATE INDEX idx_memory_jobs_agent ON memory_jobs (agent_id, status);
CREATE INDEX idx_memory_jobs_memory ON memory_jobs (memory_id) WHERE memory_id IS NOT NULL;
