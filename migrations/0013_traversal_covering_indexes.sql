-- Covering indexes for the traversal walk's reads (storage/graph_reads.py): each answers its
-- bounded per-entity / per-aspect lookup from the index alone, in the order the walk takes
-- (heaviest aspect, most confident claim first), so the LIMIT stops the range early and no
-- table row is read for a candidate the bound then drops. They replace the narrower indexes
-- whose columns they start with.

DROP INDEX IF EXISTS idx_entity_aspects_entity;
CREATE INDEX idx_entity_aspects_entity_rank
    ON entity_aspects (entity_id, agent_id, status, weight DESC, id);

DROP INDEX IF EXISTS idx_entity_attributes_aspect;
CREATE INDEX idx_entity_attributes_aspect_rank
    ON entity_attributes (aspect_id, agent_id, status, confidence DESC, importance DESC, id);

DROP INDEX IF EXISTS idx_memory_entity_mentions_entity;
CREATE INDEX idx_memory_entity_mentions_entity_agent
    ON memory_entity_mentions (entity_id, agent_id, memory_id);
