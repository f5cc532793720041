-- PostgreSQL rendering of migrations/0003_graph_and_ontology.sql: the same tables, columns,
-- constraints (CHECKs, partial unique indexes, foreign keys with their ON DELETE) and indexes.
-- Differences by dialect: JSON columns are jsonb (json_valid is the type itself); REAL is
-- double precision; entities.embedding (a float32 blob in SQLite) is a pgvector value of no
-- declared width. Timestamps stay ISO-8601 UTC text.

CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    name TEXT NOT NULL CHECK (length(name) > 0),
    canonical_name TEXT NOT NULL CHECK (length(canonical_name) > 0),
    entity_type TEXT NOT NULL DEFAULT 'unknown',
    description TEXT,
    mentions INTEGER NOT NULL DEFAULT 0 CHECK (mentions >= 0),
    embedding VECTOR,
    pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    pinned_at TEXT,
    last_synthesized_at TEXT,
    community_id TEXT,
    source_kind TEXT,
    source_id TEXT,
    source_path TEXT,
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'archived', 'merged', 'unsupported')),
    merged_into TEXT REFERENCES entities (id) ON DELETE SET NULL,
    archived_at TEXT,
    archived_reason TEXT,
    proposal_id TEXT,
    created_by TEXT NOT NULL DEFAULT 'system',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (merged_into IS NULL OR merged_into <> id),
    CHECK (status <> 'merged' OR merged_into IS NOT NULL)
);
CREATE INDEX idx_entities_agent_name ON entities (agent_id, canonical_name);
CREATE UNIQUE INDEX idx_entities_live_name
    ON entities (agent_id, canonical_name, entity_type)
    WHERE status = 'active';
CREATE INDEX idx_entities_agent_status ON entities (agent_id, status, mentions);
CREATE INDEX idx_entities_merged_into ON entities (merged_into) WHERE merged_into IS NOT NULL;

CREATE TABLE entity_aliases (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    alias TEXT NOT NULL CHECK (length(alias) > 0),
    canonical_alias TEXT NOT NULL CHECK (length(canonical_alias) > 0),
    source TEXT NOT NULL DEFAULT 'system',
    created_at TEXT NOT NULL,
    UNIQUE (entity_id, canonical_alias)
);
CREATE INDEX idx_entity_aliases_lookup ON entity_aliases (agent_id, canonical_alias);

CREATE TABLE entity_aspects (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    name TEXT NOT NULL CHECK (length(name) > 0),
    canonical_name TEXT NOT NULL CHECK (length(canonical_name) > 0),
    weight DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (weight >= 0 AND weight <= 1),
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'archived', 'merged', 'unsupported')),
    archived_at TEXT,
    proposal_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (entity_id, canonical_name)
);
CREATE INDEX idx_entity_aspects_entity ON entity_aspects (entity_id, status);
CREATE INDEX idx_entity_aspects_agent ON entity_aspects (agent_id, canonical_name);

-- Claim values. Versions chain through previous_attribute_id / version_root_id;
-- superseded rows stay for history. memory_id is the episodic evidence row, if any.
CREATE TABLE entity_attributes (
    id TEXT PRIMARY KEY,
    aspect_id TEXT NOT NULL REFERENCES entity_aspects (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    memory_id TEXT REFERENCES memories (id) ON DELETE SET NULL,
    kind TEXT NOT NULL DEFAULT 'attribute'
        CHECK (kind IN ('attribute', 'constraint', 'policy', 'action_type', 'interface')),
    content TEXT NOT NULL CHECK (length(content) > 0),
    normalized_content TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'superseded', 'archived', 'unsupported')),
    superseded_by TEXT REFERENCES entity_attributes (id) ON DELETE SET NULL,
    claim_key TEXT,
    group_key TEXT,
    source_path TEXT,
    proposal_id TEXT,
    proposal_evidence JSONB NOT NULL DEFAULT '[]',
    version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    version_root_id TEXT,
    previous_attribute_id TEXT REFERENCES entity_attributes (id) ON DELETE SET NULL,
    valid_from TEXT,
    valid_until TEXT,
    occurred_at TEXT,
    occurred_until TEXT,
    time_precision TEXT
        CHECK (time_precision IS NULL
            OR time_precision IN ('day', 'week', 'month', 'year', 'approximate')),
    review_after TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (superseded_by IS NULL OR superseded_by <> id)
);
CREATE INDEX idx_entity_attributes_aspect ON entity_attributes (aspect_id, status);
CREATE INDEX idx_entity_attributes_claim ON entity_attributes (agent_id, claim_key, status)
    WHERE claim_key IS NOT NULL;
CREATE INDEX idx_entity_attributes_memory ON entity_attributes (memory_id)
    WHERE memory_id IS NOT NULL;
CREATE INDEX idx_entity_attributes_agent_status ON entity_attributes (agent_id, status);
CREATE INDEX idx_entity_attributes_version_root ON entity_attributes (version_root_id)
    WHERE version_root_id IS NOT NULL;
CREATE INDEX idx_entity_attributes_superseded_by ON entity_attributes (superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX idx_entity_attributes_previous ON entity_attributes (previous_attribute_id)
    WHERE previous_attribute_id IS NOT NULL;

-- Structural links used by ontology traversal.
CREATE TABLE entity_dependencies (
    id TEXT PRIMARY KEY,
    source_entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    aspect_id TEXT REFERENCES entity_aspects (id) ON DELETE SET NULL,
    dependency_type TEXT NOT NULL CHECK (length(dependency_type) > 0),
    strength DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (strength >= 0 AND strength <= 1),
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    reason TEXT,
    source_path TEXT,
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'archived', 'unsupported')),
    proposal_id TEXT,
    proposal_evidence JSONB NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK (source_entity_id <> target_entity_id)
);
CREATE UNIQUE INDEX idx_entity_dependencies_live_edge
    ON entity_dependencies (agent_id, source_entity_id, target_entity_id, dependency_type)
    WHERE status = 'active';
CREATE INDEX idx_entity_dependencies_source ON entity_dependencies (source_entity_id, status);
CREATE INDEX idx_entity_dependencies_target ON entity_dependencies (target_entity_id, status);
CREATE INDEX idx_entity_dependencies_aspect ON entity_dependencies (aspect_id)
    WHERE aspect_id IS NOT NULL;

-- Legacy semantic relations (superseded by entity_dependencies; kept for projections).
CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    source_entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    strength DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (strength >= 0 AND strength <= 1),
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    mentions INTEGER NOT NULL DEFAULT 1 CHECK (mentions >= 0),
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_relations_agent ON relations (agent_id, relation_type);
CREATE INDEX idx_relations_source ON relations (source_entity_id);
CREATE INDEX idx_relations_target ON relations (target_entity_id);

-- Memory -> existing entity links written at remember time (never creates entities).
CREATE TABLE memory_entity_mentions (
    memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    mention_text TEXT,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX idx_memory_entity_mentions_entity ON memory_entity_mentions (entity_id, memory_id);
CREATE INDEX idx_memory_entity_mentions_agent ON memory_entity_mentions (agent_id, entity_id);

-- Review-only or pending ontology operations and their application state.
-- dedupe_key (hash of payload + evidence) keeps one pending copy of an identical proposal.
CREATE TABLE ontology_proposals (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    operation TEXT NOT NULL CHECK (length(operation) > 0),
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'applied', 'rejected', 'failed')),
    payload JSONB NOT NULL,
    confidence DOUBLE PRECISION CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    rationale TEXT,
    evidence JSONB NOT NULL DEFAULT '[]',
    provenance TEXT,
    risk TEXT,
    dedupe_key TEXT,
    source_kind TEXT,
    source_id TEXT,
    source_path TEXT,
    source_root TEXT,
    pass_id TEXT,
    created_by TEXT NOT NULL DEFAULT 'system',
    applied_by TEXT,
    rejected_by TEXT,
    result JSONB,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    applied_at TEXT,
    rejected_at TEXT,
    CHECK (status <> 'applied' OR applied_at IS NOT NULL),
    CHECK (status <> 'rejected' OR rejected_at IS NOT NULL)
);
CREATE INDEX idx_ontology_proposals_status ON ontology_proposals (agent_id, status, created_at);
CREATE UNIQUE INDEX idx_ontology_proposals_pending_dedupe
    ON ontology_proposals (agent_id, dedupe_key)
    WHERE status = 'pending' AND dedupe_key IS NOT NULL;
CREATE INDEX idx_ontology_proposals_pass ON ontology_proposals (pass_id)
    WHERE pass_id IS NOT NULL;

-- Advisory contradiction observations between two claim values; never replaces either claim.
CREATE TABLE ontology_contradictions (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL DEFAULT 'default',
    entity_id TEXT REFERENCES entities (id) ON DELETE CASCADE,
    entity_name TEXT,
    aspect_id TEXT REFERENCES entity_aspects (id) ON DELETE SET NULL,
    aspect_name TEXT,
    group_key TEXT NOT NULL DEFAULT 'general',
    claim_key TEXT,
    left_attribute_id TEXT NOT NULL REFERENCES entity_attributes (id) ON DELETE CASCADE,
    right_attribute_id TEXT NOT NULL REFERENCES entity_attributes (id) ON DELETE CASCADE,
    left_content TEXT,
    right_content TEXT,
    scope TEXT,
    visibility TEXT,
    source_kind TEXT,
    source_id TEXT,
    source_path TEXT,
    source_root TEXT,
    evidence JSONB NOT NULL DEFAULT '[]',
    detector TEXT NOT NULL CHECK (detector IN ('lexical', 'semantic', 'manual')),
    reason TEXT,
    confidence DOUBLE PRECISION NOT NULL DEFAULT 0.5 CHECK (confidence >= 0 AND confidence <= 1),
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'resolved')),
    detected_at TEXT NOT NULL,
    resolved_at TEXT,
    resolution_reason TEXT,
    UNIQUE (agent_id, left_attribute_id, right_attribute_id),
    CHECK (left_attribute_id <> right_attribute_id),
    CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);
CREATE INDEX idx_ontology_contradictions_status
    ON ontology_contradictions (agent_id, status, detected_at);
CREATE INDEX idx_ontology_contradictions_entity ON ontology_contradictions (entity_id)
    WHERE entity_id IS NOT NULL;
CREATE INDEX idx_ontology_contradictions_left ON ontology_contradictions (left_attribute_id);
CREATE INDEX idx_ontology_contradictions_right ON ontology_contradictions (right_attribute_id);
CREATE INDEX idx_ontology_contradictions_aspect ON ontology_contradictions (aspect_id)
    WHERE aspect_id IS NOT NULL;
