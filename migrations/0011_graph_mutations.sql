-- Append-only log of knowledge-graph writes (storage/graph.py appends one row per primitive).
--
-- Every write to entities, entity_aliases, entity_aspects, entity_attributes,
-- entity_dependencies, relations (and the mention rows a merge repoints) records who did it
-- (actor, agent), why (evidence: quotes and source refs, the source memory), within which
-- Dreaming pass / ontology proposal, and the row before and after. `seq` is a global,
-- strictly increasing order, so reverting a pass can undo exactly its rows newest first and
-- see whether a later mutation touched the same row.

CREATE TABLE graph_mutations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    seq INTEGER NOT NULL CHECK (seq >= 1),
    actor TEXT NOT NULL CHECK (length(actor) > 0),
    pass_id TEXT,
    proposal_id TEXT,
    operation TEXT NOT NULL CHECK (length(operation) > 0),
    target_table TEXT NOT NULL CHECK (target_table IN (
        'entities', 'entity_aliases', 'entity_aspects', 'entity_attributes',
        'entity_dependencies', 'relations', 'memory_entity_mentions')),
    target_id TEXT NOT NULL,
    before_json TEXT CHECK (before_json IS NULL OR json_valid(before_json)),
    after_json TEXT CHECK (after_json IS NULL OR json_valid(after_json)),
    evidence_json TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(evidence_json)),
    source_memory_id TEXT,
    reverts_mutation_id TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_graph_mutations_seq ON graph_mutations (seq);
CREATE INDEX idx_graph_mutations_pass ON graph_mutations (agent_id, pass_id);
CREATE INDEX idx_graph_mutations_target ON graph_mutations (target_table, target_id, seq);
CREATE INDEX idx_graph_mutations_source_memory ON graph_mutations (source_memory_id)
    WHERE source_memory_id IS NOT NULL;
