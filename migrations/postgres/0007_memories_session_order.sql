-- PostgreSQL rendering of migrations/0007_memories_session_order.sql (the same index):
-- memories in session order, for recall's session-neighbour signal.

CREATE INDEX idx_memories_session_order ON memories (agent_id, session_id, seq)
    WHERE session_id IS NOT NULL;
