-- Evidence beyond memory rows (transcripts, Markdown artifacts, summaries, documents),
-- the content-safety ledger over it, connectors, and source-import state for restart.
-- Timestamps are ISO-8601 UTC text written by the application.

-- Registered import sources (transcript archives, Obsidian vaults, ...). Removal is soft:
-- removed_at is set, source-owned evidence is purged and a source_tombstones row remains.
CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    kind TEXT NOT NULL CHECK (length(kind) > 0),
    name TEXT NOT NULL,
    root_path TEXT NOT NULL,
    config_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config_json)),
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

-- One import attempt over a source, with the counters the UI and diagnostics show.
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

-- Per staged file: where the importer stopped (byte_offset) and what it last saw, so a
-- restart resumes instead of re-reading. The staged JSONL itself is immutable evidence.
CREATE TABLE source_import_files (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    relative_path TEXT NOT NULL,
    staged_path TEXT,
    byte_offset INTEGER NOT NULL DEFAULT 0 CHECK (byte_offset >= 0),
    content_hash TEXT,
    size_bytes INTEGER CHECK (size_bytes IS NULL OR size_bytes >= 0),
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

-- Per source record (one imported session): its outcome and where it was appended to the
-- canonical transcript, so a replay after a crash cannot create a second session or turn.
CREATE TABLE source_import_records (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_record_id TEXT NOT NULL,
    file_id TEXT REFERENCES source_import_files (id) ON DELETE SET NULL,
    staged_offset INTEGER CHECK (staged_offset IS NULL OR staged_offset >= 0),
    session_key TEXT,
    content_hash TEXT,
    outcome TEXT NOT NULL DEFAULT 'pending'
        CHECK (outcome IN ('pending', 'imported', 'skipped', 'failed', 'duplicate')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    turn_count INTEGER NOT NULL DEFAULT 0 CHECK (turn_count >= 0),
    canonical_path TEXT,
    canonical_offset INTEGER CHECK (canonical_offset IS NULL OR canonical_offset >= 0),
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

-- Bounded audit kept after a source is removed and its evidence purged (retention prunes it).
CREATE TABLE source_tombstones (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    root_path TEXT NOT NULL,
    reason TEXT,
    removed_by TEXT NOT NULL DEFAULT 'user',
    purged_json TEXT NOT NULL DEFAULT '{}'
        CHECK (json_valid(purged_json) AND length(purged_json) <= 4096),
    removed_at TEXT NOT NULL
);
CREATE INDEX idx_source_tombstones_agent ON source_tombstones (agent_id, removed_at);
CREATE INDEX idx_source_tombstones_source ON source_tombstones (source_id);

-- Canonical retained conversation index. seq is the stable FTS rowid; the public key is
-- (agent_id, session_key). Imported rows carry source_id, source_record_id, source_meta_json.
CREATE TABLE session_transcripts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
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
    source_meta_json TEXT CHECK (
        source_meta_json IS NULL
        OR (json_valid(source_meta_json) AND length(source_meta_json) <= 16384)),
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

CREATE VIRTUAL TABLE session_transcripts_fts USING fts5(
    content,
    content = 'session_transcripts',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER session_transcripts_ai AFTER INSERT ON session_transcripts BEGIN
    INSERT INTO session_transcripts_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TRIGGER session_transcripts_ad AFTER DELETE ON session_transcripts BEGIN
    INSERT INTO session_transcripts_fts (session_transcripts_fts, rowid, content)
    VALUES ('delete', old.seq, old.content);
END;

CREATE TRIGGER session_transcripts_au AFTER UPDATE OF content ON session_transcripts BEGIN
    INSERT INTO session_transcripts_fts (session_transcripts_fts, rowid, content)
    VALUES ('delete', old.seq, old.content);
    INSERT INTO session_transcripts_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- Index over canonical Markdown artifacts under $SIGNET_WORKSPACE/memory/ (rebuildable from
-- the files). removed_at marks a soft-deleted artifact.
CREATE TABLE memory_artifacts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
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
    UNIQUE (agent_id, source_path)
);
CREATE INDEX idx_memory_artifacts_session ON memory_artifacts (agent_id, session_token);
CREATE INDEX idx_memory_artifacts_captured ON memory_artifacts (agent_id, captured_at);
CREATE INDEX idx_memory_artifacts_session_key
    ON memory_artifacts (agent_id, session_key)
    WHERE session_key IS NOT NULL;

CREATE VIRTUAL TABLE memory_artifacts_fts USING fts5(
    content,
    source_path,
    content = 'memory_artifacts',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER memory_artifacts_ai AFTER INSERT ON memory_artifacts BEGIN
    INSERT INTO memory_artifacts_fts (rowid, content, source_path)
    VALUES (new.seq, new.content, new.source_path);
END;

CREATE TRIGGER memory_artifacts_ad AFTER DELETE ON memory_artifacts BEGIN
    INSERT INTO memory_artifacts_fts (memory_artifacts_fts, rowid, content, source_path)
    VALUES ('delete', old.seq, old.content, old.source_path);
END;

CREATE TRIGGER memory_artifacts_au AFTER UPDATE OF content, source_path ON memory_artifacts
BEGIN
    INSERT INTO memory_artifacts_fts (memory_artifacts_fts, rowid, content, source_path)
    VALUES ('delete', old.seq, old.content, old.source_path);
    INSERT INTO memory_artifacts_fts (rowid, content, source_path)
    VALUES (new.seq, new.content, new.source_path);
END;

-- Removed artifact sessions: re-indexing must not bring them back.
CREATE TABLE memory_artifact_tombstones (
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_token TEXT NOT NULL,
    reason TEXT NOT NULL,
    removed_paths_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(removed_paths_json)),
    removed_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_token)
);

-- Historical/provenance summaries (DAG of session, arc and epoch nodes).
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
    meta_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta_json)),
    created_at TEXT NOT NULL
);
CREATE INDEX idx_session_summaries_session ON session_summaries (agent_id, session_key);
CREATE INDEX idx_session_summaries_latest ON session_summaries (agent_id, kind, latest_at);

-- Retired summary queue, kept for compatibility; session end never enqueues here.
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

-- Derived content-safety decisions; never rewrites the evidence. Only clean is eligible.
CREATE TABLE memory_content_safety (
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('memory', 'artifact', 'transcript', 'summary', 'source_chunk')),
    source_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('clean', 'tainted', 'blocked')),
    context_eligible INTEGER NOT NULL CHECK (context_eligible IN (0, 1)),
    reasons_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(reasons_json)),
    policy_version TEXT NOT NULL,
    content_hash TEXT,
    scanned_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_kind, source_id),
    CHECK (context_eligible = 0 OR status = 'clean')
);
CREATE INDEX idx_memory_content_safety_policy
    ON memory_content_safety (agent_id, policy_version);
CREATE INDEX idx_memory_content_safety_status ON memory_content_safety (agent_id, status);

-- External source registrations with incremental cursor state.
CREATE TABLE connectors (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    provider TEXT NOT NULL CHECK (length(provider) > 0),
    display_name TEXT NOT NULL,
    config_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config_json)),
    cursor_json TEXT CHECK (cursor_json IS NULL OR json_valid(cursor_json)),
    status TEXT NOT NULL DEFAULT 'idle'
        CHECK (status IN ('idle', 'syncing', 'error', 'disabled')),
    last_sync_at TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_connectors_agent ON connectors (agent_id, status);

-- Imported documents and their visible processing state. A connector cannot be deleted while
-- it still owns documents: its rows (and their chunk memories) are purged first, explicitly.
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
    metadata_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata_json)),
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

-- Document -> chunk memory links, in chunk order. Scope comes from the document.
CREATE TABLE document_memories (
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
    PRIMARY KEY (document_id, memory_id),
    UNIQUE (document_id, chunk_index)
);
CREATE INDEX idx_document_memories_memory ON document_memories (memory_id);
