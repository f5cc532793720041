-- PostgreSQL rendering of migrations/0011_graph_mutations.sql: the append-only log of
-- knowledge-graph writes, with the same columns, constraints and indexes (`seq` unique and
-- global). JSON columns are jsonb; `seq` is bigint.

CREATE TABLE graph_mutations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    seq BIGINT NOT NULL CHECK (seq >= 1),
    actor TEXT NOT NULL CHECK (length(actor) > 0),
    pass_id TEXT,
    proposal_id TEXT,
    operation TEXT NOT NULL CHECK (length(operation) > 0),
    target_table TEXT NOT NULL CHECK (target_table IN (
        'entities', 'entity_aliases', 'entity_aspects', 'entity_attributes',
        'entity_dependencies', 'relations', 'memory_entity_mentions')),
    target_id TEXT NOT NULL,
    before_json JSONB,
    after_json JSONB,
    evidence_json JSONB NOT NULL DEFAULT '[]',
    source_memory_id TEXT,
    reverts_mutation_id TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_graph_mutations_seq ON graph_mutations (seq);
CREATE INDEX idx_graph_mutations_pass ON graph_mutations (agent_id, pass_id);
CREATE INDEX idx_graph_mutations_target ON graph_mutations (target_table, target_id, seq);
CREATE INDEX idx_graph_mutations_source_memory ON graph_mutations (source_memory_id)
    WHERE source_memory_id IS NOT NULL;
