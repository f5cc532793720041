-- PostgreSQL rendering of migrations/0005_retrieval_support.sql: the same tables, columns,
-- constraints and indexes, and the same 'default' agent row. Differences by dialect: JSON
-- columns are jsonb; REAL is double precision; the FTS5 table over hints and its sync
-- triggers are the generated tsvector column `hint_tsv` with a GIN index
-- (`signet_unicode61`, made by 0002); the default agent's timestamps come from to_char
-- instead of strftime, in the same format.

-- Opt-in, local-only recall ledger. Holds query text and result snapshots, so every read
-- of it is agent- and project-scoped and gated by the analytics permission.
CREATE TABLE memory_search_telemetry (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    project TEXT,
    session_key TEXT,
    query TEXT NOT NULL,
    keyword_query TEXT,
    method TEXT,
    request_json JSONB NOT NULL DEFAULT '{}',
    results_json JSONB NOT NULL DEFAULT '[]',
    result_count INTEGER NOT NULL DEFAULT 0 CHECK (result_count >= 0),
    total_ms DOUBLE PRECISION CHECK (total_ms IS NULL OR total_ms >= 0),
    timings_json JSONB NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_memory_search_telemetry_agent
    ON memory_search_telemetry (agent_id, created_at);
CREATE INDEX idx_memory_search_telemetry_project
    ON memory_search_telemetry (agent_id, project, created_at);

-- Replaceable 2-D/3-D projections of the embedding space, keyed by what they were built from.
CREATE TABLE umap_cache (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL CHECK (dimensions IN (2, 3)),
    embedding_count INTEGER NOT NULL CHECK (embedding_count >= 0),
    payload JSONB NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (agent_id, model, dimensions, embedding_count)
);

-- Prospective hints: hypothetical future queries per memory (retrieval aids, not claims).
CREATE TABLE memory_hints (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    hint TEXT NOT NULL CHECK (length(hint) > 0),
    created_at TEXT NOT NULL,
    hint_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('signet_unicode61', fts_words(hint))) STORED,
    UNIQUE (memory_id, hint)
);
CREATE INDEX idx_memory_hints_agent ON memory_hints (agent_id, memory_id);
CREATE INDEX idx_memory_hints_hint_tsv ON memory_hints USING GIN (hint_tsv);

-- Agent registry. The id is the agent_id every scoped table carries; read_policy says whose
-- memories an agent may read: only its own (isolated), everyone's global rows (shared), or
-- those of agents in the same policy_group (group).
CREATE TABLE agents (
    id TEXT PRIMARY KEY CHECK (length(id) > 0),
    name TEXT NOT NULL,
    read_policy TEXT NOT NULL DEFAULT 'isolated'
        CHECK (read_policy IN ('isolated', 'shared', 'group')),
    policy_group TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (read_policy <> 'group' OR policy_group IS NOT NULL)
);
CREATE INDEX idx_agents_policy_group ON agents (policy_group) WHERE policy_group IS NOT NULL;

INSERT INTO agents (id, name, read_policy, policy_group, created_at, updated_at)
VALUES (
    'default', 'default', 'shared', NULL,
    to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
