-- PostgreSQL rendering of migrations/0016_memory_feedback.sql: agent feedback on recalled
-- memories, the same columns, rules, cascade and index (REAL is double precision).
--
-- memory_feedback: one row per (agent, session key, memory) an agent rated, as Signet keeps
-- `agent_relevance_score` / `agent_feedback_count` per session memory: `score` is the running
-- mean of the ratings given in that session (-1 harmful .. 0 unused .. 1 directly helpful),
-- `ratings` how many. `injected` says whether the hooks had put the memory into that
-- session's context (session_context_ledger) when it was last rated. Only live memories of
-- the same agent are rated (the service checks); the rows go with the memory when retention
-- purges it.

CREATE TABLE memory_feedback (
    agent_id TEXT NOT NULL DEFAULT 'default',
    session_key TEXT NOT NULL CHECK (length(session_key) BETWEEN 1 AND 512),
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    score DOUBLE PRECISION NOT NULL CHECK (score BETWEEN -1.0 AND 1.0),
    ratings INTEGER NOT NULL CHECK (ratings >= 1),
    injected INTEGER NOT NULL DEFAULT 0 CHECK (injected IN (0, 1)),
    first_rated_at TEXT NOT NULL,
    last_rated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, session_key, memory_id)
);
-- memory_id leads: a purge of the memory finds its rows to cascade without a scan.
CREATE INDEX idx_memory_feedback_memory ON memory_feedback (memory_id);
