-- PostgreSQL rendering of migrations/0013_traversal_covering_indexes.sql: the same covering
-- indexes for the traversal walk's reads (storage/graph_reads.py), replacing the narrower
-- indexes whose columns they start with.

DROP INDEX IF EXISTS idx_entity_aspects_entity;
CREATE INDEX idx_entity_aspects_entity_rank
    ON entity_aspects (entity_id, agent_id, status, weight DESC, id);

DROP INDEX IF EXISTS idx_entity_attributes_aspect;
CREATE INDEX idx_entity_attributes_aspect_rank
    ON entity_attributes (aspect_id, agent_id, status, confidence DESC, importance DESC, id);

DROP INDEX IF EXISTS idx_memory_entity_mentions_entity;
CREATE INDEX idx_memory_entity_mentions_entity_agent
    ON memory_entity_mentions (entity_id, agent_id, memory_id);
