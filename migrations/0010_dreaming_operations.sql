-- Every operation the Dreaming apply seam saw, in order: what was asked (operation, payload,
-- evidence, provenance), what happened (applied / proposed / skipped / failed, with a code
-- and a reason) and what it changed (result_json: created/changed row ids, proposal id).
-- pass_id is NULL for manual applies (HTTP / CLI). request_id groups one apply call; seq
-- orders operations within a pass (or within a manual request). Owner:
-- storage/dreaming_operations.py. The Dreaming pane reads it.

CREATE TABLE dreaming_operations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    pass_id TEXT,
    request_id TEXT NOT NULL,
    seq INTEGER NOT NULL CHECK (seq >= 0),
    operation TEXT NOT NULL,
    payload_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload_json)),
    evidence_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(evidence_json)),
    provenance TEXT,
    actor TEXT NOT NULL DEFAULT 'system',
    status TEXT NOT NULL CHECK (status IN ('applied', 'proposed', 'skipped', 'failed')),
    code TEXT,
    reason TEXT,
    result_json TEXT CHECK (result_json IS NULL OR json_valid(result_json)),
    created_at TEXT NOT NULL
);
CREATE INDEX idx_dreaming_operations_pass ON dreaming_operations (pass_id, seq)
    WHERE pass_id IS NOT NULL;
CREATE INDEX idx_dreaming_operations_agent ON dreaming_operations (agent_id, created_at);
CREATE INDEX idx_dreaming_operations_request ON dreaming_operations (request_id, seq);
