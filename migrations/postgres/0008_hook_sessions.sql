-- PostgreSQL rendering of migrations/0008_hook_sessions.sql: hook sessions, the session
-- context ledger, session_transcripts.turn_count and canonical transcript bookkeeping, with
-- the same columns and constraints. Byte counts are bigint (a canonical file may pass 2 GiB).
--
-- hook_sessions: one row per (agent, session key) a harness announced through the hooks:
-- which runtime path claimed it (a session driven by the plugin path refuses the legacy path
-- and back: 409), its context epoch (compaction-complete advances it), and bypass.
-- session_context_ledger: which memories were injected into a session's context in an epoch,
-- so prompt-submit never repeats one before the context is compacted.
-- session_transcripts.turn_count: how many canonical turns of the session are committed.
-- canonical_transcript_files: how many bytes of each canonical transcript.jsonl are covered
-- by committed rows; a restart adopts complete lines past it and cuts a torn last line.

CREATE TABLE hook_sessions (
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_key TEXT NOT NULL CHECK (length(session_key) > 0),
    harness TEXT NOT NULL,
    project TEXT,
    runtime_path TEXT CHECK (runtime_path IS NULL OR runtime_path IN ('plugin', 'legacy')),
    context_epoch INTEGER NOT NULL DEFAULT 0 CHECK (context_epoch >= 0),
    bypassed INTEGER NOT NULL DEFAULT 0 CHECK (bypassed IN (0, 1)),
    started_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    ended_at TEXT,
    PRIMARY KEY (agent_id, session_key)
);
CREATE INDEX idx_hook_sessions_open ON hook_sessions (agent_id, last_seen_at)
    WHERE ended_at IS NULL;

CREATE TABLE session_context_ledger (
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_key TEXT NOT NULL,
    context_epoch INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    injected_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_key, context_epoch, memory_id)
);

ALTER TABLE session_transcripts ADD COLUMN turn_count INTEGER NOT NULL DEFAULT 0;

CREATE TABLE canonical_transcript_files (
    path TEXT PRIMARY KEY,
    committed_bytes BIGINT NOT NULL CHECK (committed_bytes >= 0),
    updated_at TEXT NOT NULL
);
