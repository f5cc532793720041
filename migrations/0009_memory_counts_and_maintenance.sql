-- Maintained counters for /api/status and the memory listing (no O(N) count per request),
-- and the record of each retention/maintenance run.
--
-- memory_counts: per agent, live / pinned-live / tombstoned memories.
-- memory_vector_counts: per (agent, generation), live memories whose current vector (same
-- content hash) is in that generation: embeddings/vectors.py's HAS_CURRENT_VECTOR, counted.
-- Triggers keep both in the writing transaction; storage/counters.py reads them and can
-- recount from the tables (the maintenance run checks for drift).

CREATE TABLE memory_counts (
    agent_id TEXT NOT NULL DEFAULT 'default' PRIMARY KEY,
    live INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE memory_vector_counts (
    agent_id TEXT NOT NULL DEFAULT 'default',
    generation_id INTEGER NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, generation_id)
) WITHOUT ROWID;

INSERT INTO memory_counts (agent_id, live, pinned, deleted)
SELECT agent_id, SUM(is_deleted = 0), SUM(is_deleted = 0 AND pinned = 1), SUM(is_deleted = 1)
FROM memories GROUP BY agent_id;

INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
SELECT m.agent_id, e.generation_id, COUNT(*)
FROM embeddings e JOIN memories m ON m.id = e.source_id AND m.content_hash = e.content_hash
WHERE e.source_type = 'memory' AND m.is_deleted = 0
GROUP BY m.agent_id, e.generation_id;

-- memories: a row's contribution is (live, pinned, deleted) and one vector count per
-- generation holding its current vector; an update takes the old one away, adds the new.
CREATE TRIGGER memory_counts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_counts (agent_id, live, pinned, deleted)
    VALUES (new.agent_id, new.is_deleted = 0, new.is_deleted = 0 AND new.pinned = 1,
            new.is_deleted = 1)
    ON CONFLICT (agent_id) DO UPDATE SET live = live + excluded.live,
        pinned = pinned + excluded.pinned, deleted = deleted + excluded.deleted;
    INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
    SELECT new.agent_id, e.generation_id, 1 FROM embeddings e
    WHERE new.is_deleted = 0 AND e.source_type = 'memory' AND e.source_id = new.id
      AND e.content_hash = new.content_hash
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = embedded + 1;
END;

CREATE TRIGGER memory_counts_ad AFTER DELETE ON memories BEGIN
    UPDATE memory_counts SET live = live - (old.is_deleted = 0),
        pinned = pinned - (old.is_deleted = 0 AND old.pinned = 1),
        deleted = deleted - (old.is_deleted = 1)
    WHERE agent_id = old.agent_id;
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE old.is_deleted = 0 AND agent_id = old.agent_id AND generation_id IN (
        SELECT e.generation_id FROM embeddings e
        WHERE e.source_type = 'memory' AND e.source_id = old.id
          AND e.content_hash = old.content_hash);
END;

CREATE TRIGGER memory_counts_au AFTER UPDATE OF is_deleted, pinned, agent_id ON memories
WHEN old.is_deleted IS NOT new.is_deleted OR old.pinned IS NOT new.pinned
  OR old.agent_id IS NOT new.agent_id
BEGIN
    UPDATE memory_counts SET live = live - (old.is_deleted = 0),
        pinned = pinned - (old.is_deleted = 0 AND old.pinned = 1),
        deleted = deleted - (old.is_deleted = 1)
    WHERE agent_id = old.agent_id;
    INSERT INTO memory_counts (agent_id, live, pinned, deleted)
    VALUES (new.agent_id, new.is_deleted = 0, new.is_deleted = 0 AND new.pinned = 1,
            new.is_deleted = 1)
    ON CONFLICT (agent_id) DO UPDATE SET live = live + excluded.live,
        pinned = pinned + excluded.pinned, deleted = deleted + excluded.deleted;
END;

CREATE TRIGGER memory_vector_counts_au
AFTER UPDATE OF is_deleted, content_hash, agent_id ON memories
WHEN old.is_deleted IS NOT new.is_deleted OR old.content_hash IS NOT new.content_hash
  OR old.agent_id IS NOT new.agent_id
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE old.is_deleted = 0 AND agent_id = old.agent_id AND generation_id IN (
        SELECT e.generation_id FROM embeddings e
        WHERE e.source_type = 'memory' AND e.source_id = old.id
          AND e.content_hash = old.content_hash);
    INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
    SELECT new.agent_id, e.generation_id, 1 FROM embeddings e
    WHERE new.is_deleted = 0 AND e.source_type = 'memory' AND e.source_id = new.id
      AND e.content_hash = new.content_hash
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = embedded + 1;
END;

-- embeddings: a vector counts when it is the current one of a live memory.
CREATE TRIGGER memory_vector_counts_ai AFTER INSERT ON embeddings
WHEN new.source_type = 'memory'
BEGIN
    INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
    SELECT m.agent_id, new.generation_id, 1 FROM memories m
    WHERE m.id = new.source_id AND m.content_hash = new.content_hash AND m.is_deleted = 0
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = embedded + 1;
END;

CREATE TRIGGER memory_vector_counts_ad AFTER DELETE ON embeddings
WHEN old.source_type = 'memory'
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE generation_id = old.generation_id AND agent_id IN (
        SELECT m.agent_id FROM memories m
        WHERE m.id = old.source_id AND m.content_hash = old.content_hash AND m.is_deleted = 0);
END;

CREATE TRIGGER memory_vector_counts_eu
AFTER UPDATE OF source_type, source_id, content_hash, generation_id ON embeddings
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE old.source_type = 'memory' AND generation_id = old.generation_id AND agent_id IN (
        SELECT m.agent_id FROM memories m
        WHERE m.id = old.source_id AND m.content_hash = old.content_hash AND m.is_deleted = 0);
    INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
    SELECT m.agent_id, new.generation_id, 1 FROM memories m
    WHERE new.source_type = 'memory' AND m.id = new.source_id
      AND m.content_hash = new.content_hash AND m.is_deleted = 0
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = embedded + 1;
END;

-- One row per retention/maintenance run: when, why, what each step did (bounded JSON).
-- Process-wide, like the runner's bookkeeping: a run sweeps every agent.
CREATE TABLE maintenance_runs (
    id TEXT PRIMARY KEY,
    trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    started_at TEXT NOT NULL,
    finished_at TEXT,
    steps_json TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(steps_json)),
    error TEXT
);
CREATE INDEX idx_maintenance_runs_started ON maintenance_runs (started_at);
