-- 0007: memories in session order, for recall's session-neighbour signal.
--
-- Recall looks up, for each fused candidate, the previous and next live memory of the same
-- session (by seq) in the agent's scope. Without this index that is a scan per candidate.

CREATE INDEX idx_memories_session_order ON memories (agent_id, session_id, seq)
    WHERE session_id IS NOT NULL;
