-- PostgreSQL rendering of migrations/0010_dreaming_operations.sql (the same table, columns,
-- constraints and indexes; JSON columns are jsonb). Every operation the Dreaming apply seam
-- saw, in order. Owner: storage/dreaming_operations.py.

CREATE TABLE dreaming_operations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    pass_id TEXT,
    request_id TEXT NOT NULL,
    seq INTEGER NOT NULL CHECK (seq >= 0),
    operation TEXT NOT NULL,
    payload_json JSONB NOT NULL DEFAULT '{}',
    evidence_json JSONB NOT NULL DEFAULT '[]',
    provenance TEXT,
    actor TEXT NOT NULL DEFAULT 'system',
    status TEXT NOT NULL CHECK (status IN ('applied', 'proposed', 'skipped', 'failed')),
    code TEXT,
    reason TEXT,
    result_json JSONB,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_dreaming_operations_pass ON dreaming_operations (pass_id, seq)
    WHERE pass_id IS NOT NULL;
CREATE INDEX idx_dreaming_operations_agent ON dreaming_operations (agent_id, created_at);
CREATE INDEX idx_dreaming_operations_request ON dreaming_operations (request_id, seq);
