-- PostgreSQL rendering of migrations/0002_evidence_and_sources.sql: the same tables, columns,
-- constraints and indexes. Differences by dialect: JSON columns are jsonb (json_valid is the
-- type itself; a length bound applies to the jsonb's text); each FTS5 table and its sync
-- triggers become a generated tsvector column with a GIN index. Their text search
-- configuration `signet_unicode61` stands for FTS5's 'unicode61 remove_diacritics 2':
-- lowercased words without stemming, accents folded (unaccent); `fts_words` first turns every
-- run of characters that are not letters or digits into a space, as unicode61 separates
-- tokens (PostgreSQL's own parser would keep paths, e-mail addresses, URLs and versions as
-- single tokens, so "gamma" would not find "notes/gamma.md"). A tsvector's words may take
-- 1 MB at most (a longer text is refused, the row with it), so a whole transcript or artifact
-- is not indexable: their columns index the first 200,000 characters (a transcript of some
-- 40,000 words), at most 800,000 bytes of UTF-8 whatever the text.
-- Row ids (`seq`) are identities. Timestamps stay ISO-8601 UTC text.

CREATE EXTENSION IF NOT EXISTS unaccent;

-- Letters and digits by Unicode class whatever the database's locale (pg_c_utf8: the builtin
-- provider, PostgreSQL 17+).
CREATE FUNCTION fts_words(text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN regexp_replace($1 COLLATE pg_c_utf8, '[^[:alnum:]]+', ' ', 'g');

CREATE TEXT SEARCH CONFIGURATION signet_unicode61 (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION signet_unicode61
    ALTER MAPPING FOR word, numword, hword, hword_part, hword_numpart WITH unaccent, simple;

CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    kind TEXT NOT NULL CHECK (length(kind) > 0),
    name TEXT NOT NULL,
    root_path TEXT NOT NULL,
    config_json JSONB NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'paused', 'error', 'removing', 'removed')),
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT,
    CHECK ((status = 'removed') = (removed_at IS NOT NULL))
);
CREATE UNIQUE INDEX idx_sources_live_root
    ON sources (agent_id, kind, root_path)
    WHERE removed_at IS NULL;
CREATE INDEX idx_sources_agent_status ON sources (agent_id, status);

CREATE TABLE source_import_runs (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
    triggered_by TEXT NOT NULL DEFAULT 'manual',
    files_seen INTEGER NOT NULL DEFAULT 0 CHECK (files_seen >= 0),
    files_changed INTEGER NOT NULL DEFAULT 0 CHECK (files_changed >= 0),
    records_seen INTEGER NOT NULL DEFAULT 0 CHECK (records_seen >= 0),
    records_imported INTEGER NOT NULL DEFAULT 0 CHECK (records_imported >= 0),
    records_skipped INTEGER NOT NULL DEFAULT 0 CHECK (records_skipped >= 0),
    records_duplicate INTEGER NOT NULL DEFAULT 0 CHECK (records_duplicate >= 0),
    records_failed INTEGER NOT NULL DEFAULT 0 CHECK (records_failed >= 0),
    turns_imported INTEGER NOT NULL DEFAULT 0 CHECK (turns_imported >= 0),
    error TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    CHECK ((status = 'running') = (finished_at IS NULL))
);
CREATE INDEX idx_source_import_runs_agent ON source_import_runs (agent_id, started_at);
CREATE INDEX idx_source_import_runs_source ON source_import_runs (source_id, started_at);
CREATE UNIQUE INDEX idx_source_import_runs_one_running
    ON source_import_runs (source_id)
    WHERE status = 'running';

CREATE TABLE source_import_files (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    relative_path TEXT NOT NULL,
    staged_path TEXT,
    byte_offset BIGINT NOT NULL DEFAULT 0 CHECK (byte_offset >= 0),
    content_hash TEXT,
    size_bytes BIGINT CHECK (size_bytes IS NULL OR size_bytes >= 0),
    mtime TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'staged', 'importing', 'imported', 'skipped', 'failed')),
    last_error TEXT,
    last_run_id TEXT REFERENCES source_import_runs (id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (source_id, relative_path)
);
CREATE INDEX idx_source_import_files_status ON source_import_files (agent_id, source_id, status);
CREATE INDEX idx_source_import_files_run ON source_import_files (last_run_id)
    WHERE last_run_id IS NOT NULL;

CREATE TABLE source_import_records (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_record_id TEXT NOT NULL,
    file_id TEXT REFERENCES source_import_files (id) ON DELETE SET NULL,
    staged_offset BIGINT CHECK (staged_offset IS NULL OR staged_offset >= 0),
    session_key TEXT,
    content_hash TEXT,
    outcome TEXT NOT NULL DEFAULT 'pending'
        CHECK (outcome IN ('pending', 'imported', 'skipped', 'failed', 'duplicate')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    turn_count INTEGER NOT NULL DEFAULT 0 CHECK (turn_count >= 0),
    canonical_path TEXT,
    canonical_offset BIGINT CHECK (canonical_offset IS NULL OR canonical_offset >= 0),
    appended_at TEXT,
    last_run_id TEXT REFERENCES source_import_runs (id) ON DELETE SET NULL,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    imported_at TEXT,
    UNIQUE (agent_id, source_id, source_record_id),
    CHECK (outcome <> 'imported' OR imported_at IS NOT NULL)
);
CREATE INDEX idx_source_import_records_outcome
    ON source_import_records (agent_id, source_id, outcome);
CREATE INDEX idx_source_import_records_source ON source_import_records (source_id, outcome);
CREATE INDEX idx_source_import_records_file ON source_import_records (file_id)
    WHERE file_id IS NOT NULL;
CREATE INDEX idx_source_import_records_run ON source_import_records (last_run_id)
    WHERE last_run_id IS NOT NULL;
CREATE INDEX idx_source_import_records_session
    ON source_import_records (agent_id, session_key)
    WHERE session_key IS NOT NULL;

CREATE TABLE source_tombstones (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    root_path TEXT NOT NULL,
    reason TEXT,
    removed_by TEXT NOT NULL DEFAULT 'user',
    purged_json JSONB NOT NULL DEFAULT '{}' CHECK (length(purged_json::text) <= 4096),
    removed_at TEXT NOT NULL
);
CREATE INDEX idx_source_tombstones_agent ON source_tombstones (agent_id, removed_at);
CREATE INDEX idx_source_tombstones_source ON source_tombstones (source_id);

CREATE TABLE session_transcripts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key TEXT NOT NULL CHECK (length(session_key) > 0),
    agent_id TEXT NOT NULL DEFAULT 'default',
    content TEXT NOT NULL DEFAULT '',
    harness TEXT,
    project TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    content_hash TEXT,
    source_id TEXT,
    source_record_id TEXT,
    source_meta_json JSONB CHECK (
        source_meta_json IS NULL OR length(source_meta_json::text) <= 16384),
    content_tsv TSVECTOR GENERATED ALWAYS AS (
        to_tsvector('signet_unicode61', fts_words(left(content, 200000)))) STORED,
    UNIQUE (agent_id, session_key),
    CHECK ((source_id IS NULL) = (source_record_id IS NULL))
);
CREATE UNIQUE INDEX idx_session_transcripts_source_record
    ON session_transcripts (agent_id, source_id, source_record_id)
    WHERE source_id IS NOT NULL;
CREATE INDEX idx_session_transcripts_updated ON session_transcripts (agent_id, updated_at);
CREATE INDEX idx_session_transcripts_completed
    ON session_transcripts (agent_id, completed_at)
    WHERE completed_at IS NOT NULL;
CREATE INDEX idx_session_transcripts_project ON session_transcripts (agent_id, project, updated_at);
CREATE INDEX idx_session_transcripts_content_tsv ON session_transcripts USING GIN (content_tsv);

-- The FTS5 table's two columns are two weights: content 'A', source_path 'B' (a query may
-- restrict itself to one, as an FTS5 column filter does).
CREATE TABLE memory_artifacts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('transcript', 'summary', 'compaction', 'manifest')),
    session_id TEXT,
    session_key TEXT,
    session_token TEXT NOT NULL,
    project TEXT,
    harness TEXT,
    captured_at TEXT NOT NULL,
    started_at TEXT,
    ended_at TEXT,
    manifest_path TEXT,
    memory_sentence TEXT,
    memory_sentence_quality TEXT,
    content TEXT NOT NULL DEFAULT '',
    source_mtime TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    removed_at TEXT,
    content_tsv TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('signet_unicode61', fts_words(left(content, 200000))), 'A')
        || setweight(to_tsvector('signet_unicode61', fts_words(source_path)), 'B')) STORED,
    UNIQUE (agent_id, source_path)
);
CREATE INDEX idx_memory_artifacts_session ON memory_artifacts (agent_id, session_token);
CREATE INDEX idx_memory_artifacts_captured ON memory_artifacts (agent_id, captured_at);
CREATE INDEX idx_memory_artifacts_session_key
    ON memory_artifacts (agent_id, session_key)
    WHERE session_key IS NOT NULL;
CREATE INDEX idx_memory_artifacts_content_tsv ON memory_artifacts USING GIN (content_tsv);

CREATE TABLE memory_artifact_tombstones (
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_token TEXT NOT NULL,
    reason TEXT NOT NULL,
    removed_paths_json JSONB NOT NULL DEFAULT '[]',
    removed_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_token)
);

CREATE TABLE session_summaries (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_key TEXT,
    project TEXT,
    harness TEXT,
    kind TEXT NOT NULL DEFAULT 'session' CHECK (kind IN ('session', 'arc', 'epoch')),
    depth INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    content TEXT NOT NULL,
    content_hash TEXT,
    token_count INTEGER CHECK (token_count IS NULL OR token_count >= 0),
    earliest_at TEXT NOT NULL,
    latest_at TEXT NOT NULL,
    source_type TEXT,
    source_ref TEXT,
    meta_json JSONB NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_session_summaries_session ON session_summaries (agent_id, session_key);
CREATE INDEX idx_session_summaries_latest ON session_summaries (agent_id, kind, latest_at);

CREATE TABLE summary_jobs (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_key TEXT,
    session_id TEXT,
    harness TEXT NOT NULL,
    project TEXT,
    transcript TEXT NOT NULL,
    content_hash TEXT,
    trigger TEXT NOT NULL DEFAULT 'session_end',
    boundary_reason TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead', 'cancelled')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 0),
    error TEXT,
    captured_at TEXT,
    started_at TEXT,
    ended_at TEXT,
    leased_at TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX idx_summary_jobs_status ON summary_jobs (agent_id, status, created_at);

CREATE TABLE memory_content_safety (
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('memory', 'artifact', 'transcript', 'summary', 'source_chunk')),
    source_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('clean', 'tainted', 'blocked')),
    context_eligible INTEGER NOT NULL CHECK (context_eligible IN (0, 1)),
    reasons_json JSONB NOT NULL DEFAULT '[]',
    policy_version TEXT NOT NULL,
    content_hash TEXT,
    scanned_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_kind, source_id),
    CHECK (context_eligible = 0 OR status = 'clean')
);
CREATE INDEX idx_memory_content_safety_policy
    ON memory_content_safety (agent_id, policy_version);
CREATE INDEX idx_memory_content_safety_status ON memory_content_safety (agent_id, status);

CREATE TABLE connectors (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    provider TEXT NOT NULL CHECK (length(provider) > 0),
    display_name TEXT NOT NULL,
    config_json JSONB NOT NULL DEFAULT '{}',
    cursor_json JSONB,
    status TEXT NOT NULL DEFAULT 'idle'
        CHECK (status IN ('idle', 'syncing', 'error', 'disabled')),
    last_sync_at TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_connectors_agent ON connectors (agent_id, status);

CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    project TEXT,
    source_type TEXT NOT NULL CHECK (source_type IN ('text', 'url', 'file', 'connector')),
    source_url TEXT,
    content_type TEXT,
    content_hash TEXT,
    title TEXT,
    raw_content TEXT,
    status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN (
        'queued', 'extracting', 'chunking', 'embedding', 'indexing', 'done', 'failed',
        'deleted')),
    error TEXT,
    connector_id TEXT REFERENCES connectors (id),
    chunk_count INTEGER NOT NULL DEFAULT 0 CHECK (chunk_count >= 0),
    memory_count INTEGER NOT NULL DEFAULT 0 CHECK (memory_count >= 0),
    metadata_json JSONB NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    deleted_at TEXT,
    CHECK (source_type <> 'url' OR source_url IS NOT NULL)
);
CREATE INDEX idx_documents_agent_status ON documents (agent_id, status, created_at);
CREATE INDEX idx_documents_agent_hash ON documents (agent_id, content_hash)
    WHERE content_hash IS NOT NULL;
CREATE INDEX idx_documents_agent_url ON documents (agent_id, source_url)
    WHERE source_url IS NOT NULL;
CREATE INDEX idx_documents_connector ON documents (connector_id)
    WHERE connector_id IS NOT NULL;

CREATE TABLE document_memories (
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
    PRIMARY KEY (document_id, memory_id),
    UNIQUE (document_id, chunk_index)
);
CREATE INDEX idx_document_memories_memory ON document_memories (memory_id);
