-- PostgreSQL rendering of migrations/0004_dreaming.sql: the Dreaming control plane with the
-- same tables, columns, constraints (one running pass per agent, the status/timestamp
-- pairings, foreign keys with their ON DELETE) and indexes. Differences by dialect: JSON
-- columns are jsonb (json_valid is the type itself); REAL is double precision. Timestamps
-- stay ISO-8601 UTC text.

-- Per-agent scheduler state: token accumulator, cursor, failure backoff, last pass.
CREATE TABLE dreaming_state (
    agent_id TEXT PRIMARY KEY NOT NULL DEFAULT 'default',
    tokens_since_last_pass INTEGER NOT NULL DEFAULT 0 CHECK (tokens_since_last_pass >= 0),
    consecutive_failures INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    evidence_cursor TEXT,
    last_pass_at TEXT,
    last_pass_id TEXT,
    last_pass_mode TEXT CHECK (last_pass_mode IS NULL OR last_pass_mode IN (
        'incremental', 'compact', 'incremental-hygiene', 'incremental-content')),
    last_failure_at TEXT,
    last_error TEXT,
    next_attempt_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE dreaming_passes (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    mode TEXT NOT NULL DEFAULT 'incremental' CHECK (mode IN (
        'incremental', 'compact', 'incremental-hygiene', 'incremental-content')),
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
    trigger_reason TEXT CHECK (trigger_reason IS NULL OR trigger_reason IN (
        'first-run', 'attention', 'token-threshold', 'continuation', 'max-interval', 'manual')),
    provider TEXT,
    model TEXT,
    started_at TEXT NOT NULL,
    completed_at TEXT,
    tokens_consumed INTEGER NOT NULL DEFAULT 0 CHECK (tokens_consumed >= 0),
    tokens_input INTEGER NOT NULL DEFAULT 0 CHECK (tokens_input >= 0),
    tokens_output INTEGER NOT NULL DEFAULT 0 CHECK (tokens_output >= 0),
    tokens_cache_read INTEGER NOT NULL DEFAULT 0 CHECK (tokens_cache_read >= 0),
    tokens_cache_write INTEGER NOT NULL DEFAULT 0 CHECK (tokens_cache_write >= 0),
    cost_usd DOUBLE PRECISION CHECK (cost_usd IS NULL OR cost_usd >= 0),
    mutations_applied INTEGER NOT NULL DEFAULT 0 CHECK (mutations_applied >= 0),
    mutations_skipped INTEGER NOT NULL DEFAULT 0 CHECK (mutations_skipped >= 0),
    mutations_failed INTEGER NOT NULL DEFAULT 0 CHECK (mutations_failed >= 0),
    summary TEXT,
    error TEXT,
    evidence_window_json JSONB,
    runbook_json JSONB,
    head_revision INTEGER,
    head_hash TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK ((status = 'running') = (completed_at IS NULL))
);
CREATE INDEX idx_dreaming_passes_agent ON dreaming_passes (agent_id, started_at);
CREATE INDEX idx_dreaming_passes_status ON dreaming_passes (agent_id, status);
-- At most one running pass per agent scope (a second trigger answers 409).
CREATE UNIQUE INDEX idx_dreaming_passes_one_running
    ON dreaming_passes (agent_id)
    WHERE status = 'running';

-- Bounded hygiene, review, evidence-retry and surprisal work for the next passes.
CREATE TABLE dreaming_attention (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    kind TEXT NOT NULL CHECK (kind IN (
        'review_due', 'hygiene', 'contested_claim', 'evidence_requeue', 'surprisal')),
    subject_ref TEXT NOT NULL CHECK (length(subject_ref) > 0),
    details_json JSONB NOT NULL DEFAULT '{}',
    priority INTEGER NOT NULL DEFAULT 50 CHECK (priority >= 0 AND priority <= 100),
    generation INTEGER NOT NULL DEFAULT 0 CHECK (generation >= 0),
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'resolved', 'declined')),
    created_by_pass_id TEXT REFERENCES dreaming_passes (id) ON DELETE SET NULL,
    resolved_at TEXT,
    resolved_by_pass_id TEXT REFERENCES dreaming_passes (id) ON DELETE SET NULL,
    resolution TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (agent_id, kind, subject_ref),
    CHECK ((status = 'pending') = (resolved_at IS NULL))
);
CREATE INDEX idx_dreaming_attention_pending
    ON dreaming_attention (agent_id, status, priority, created_at);
CREATE INDEX idx_dreaming_attention_created_by ON dreaming_attention (created_by_pass_id)
    WHERE created_by_pass_id IS NOT NULL;
CREATE INDEX idx_dreaming_attention_resolved_by ON dreaming_attention (resolved_by_pass_id)
    WHERE resolved_by_pass_id IS NOT NULL;

-- Ordered tool-call trace of one pass.
CREATE TABLE dreaming_tool_calls (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    pass_id TEXT NOT NULL REFERENCES dreaming_passes (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq >= 0),
    tool_call_id TEXT,
    tool_name TEXT NOT NULL CHECK (length(tool_name) > 0),
    input_json JSONB NOT NULL,
    output_json JSONB,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error', 'refused')),
    error TEXT,
    duration_ms INTEGER NOT NULL DEFAULT 0 CHECK (duration_ms >= 0),
    created_at TEXT NOT NULL,
    UNIQUE (pass_id, seq)
);
CREATE INDEX idx_dreaming_tool_calls_agent ON dreaming_tool_calls (agent_id, created_at);

-- Evidence a pass rejected or deferred, with bounded retry state.
CREATE TABLE dreaming_evidence_exclusions (
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('memory', 'artifact', 'transcript', 'summary')),
    source_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'excluded'
        CHECK (status IN ('excluded', 'retry_pending', 'resolved', 'exhausted')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 0),
    next_retry_at TEXT,
    last_error TEXT,
    pass_id TEXT REFERENCES dreaming_passes (id) ON DELETE SET NULL,
    excluded_at TEXT NOT NULL,
    requeue_requested_at TEXT,
    resolved_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_kind, source_id),
    CHECK (status <> 'retry_pending' OR next_retry_at IS NOT NULL),
    CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);
CREATE INDEX idx_dreaming_evidence_exclusions_retry
    ON dreaming_evidence_exclusions (agent_id, status, next_retry_at);
CREATE INDEX idx_dreaming_evidence_exclusions_pass ON dreaming_evidence_exclusions (pass_id)
    WHERE pass_id IS NOT NULL;

-- Which revision of which evidence a pass read (so the window advances, and removal of a
-- source can purge exactly its rows).
CREATE TABLE dreaming_evidence_consumption (
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('memory', 'artifact', 'transcript', 'summary')),
    source_id TEXT NOT NULL,
    source_revision TEXT NOT NULL,
    pass_id TEXT REFERENCES dreaming_passes (id) ON DELETE SET NULL,
    tokens INTEGER NOT NULL DEFAULT 0 CHECK (tokens >= 0),
    consumed_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_kind, source_id, source_revision)
);
CREATE INDEX idx_dreaming_evidence_consumption_time
    ON dreaming_evidence_consumption (agent_id, consumed_at);
CREATE INDEX idx_dreaming_evidence_consumption_pass ON dreaming_evidence_consumption (pass_id)
    WHERE pass_id IS NOT NULL;

-- Terminal reviewed dispositions for immutable source revisions. A new revision of the same
-- source is new evidence; the underlying evidence is never changed by a review.
CREATE TABLE dreaming_evidence_reviews (
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_kind TEXT NOT NULL
        CHECK (source_kind IN ('memory', 'artifact', 'transcript', 'summary')),
    source_id TEXT NOT NULL,
    source_entry_id TEXT NOT NULL DEFAULT '',
    source_revision TEXT NOT NULL,
    source_captured_at TEXT,
    disposition TEXT NOT NULL CHECK (disposition IN (
        'consolidated', 'no_action', 'rejected', 'unsafe', 'duplicate')),
    reason TEXT,
    reviewed_by_pass_id TEXT REFERENCES dreaming_passes (id) ON DELETE SET NULL,
    reviewed_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_kind, source_id, source_entry_id, source_revision)
);
CREATE INDEX idx_dreaming_evidence_reviews_time
    ON dreaming_evidence_reviews (agent_id, reviewed_at);
CREATE INDEX idx_dreaming_evidence_reviews_pass ON dreaming_evidence_reviews (reviewed_by_pass_id)
    WHERE reviewed_by_pass_id IS NOT NULL;
