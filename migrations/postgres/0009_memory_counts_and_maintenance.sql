-- PostgreSQL rendering of migrations/0009_memory_counts_and_maintenance.sql: the maintained
-- counters (memory_counts, memory_vector_counts) with the same meaning, kept by the same
-- triggers in the writing transaction, and the maintenance run record. Differences by
-- dialect: each trigger body is a plpgsql function of the trigger's name (row triggers, the
-- same events, columns and WHEN conditions); SQLite's boolean-as-integer arithmetic is an
-- explicit ::int; the existing rows are counted with FILTER; JSON is jsonb.
--
-- memory_counts: per agent, live / pinned-live / tombstoned memories.
-- memory_vector_counts: per (agent, generation), live memories whose current vector (same
-- content hash) is in that generation.

CREATE TABLE memory_counts (
    agent_id TEXT NOT NULL DEFAULT 'default' PRIMARY KEY,
    live BIGINT NOT NULL DEFAULT 0,
    pinned BIGINT NOT NULL DEFAULT 0,
    deleted BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE memory_vector_counts (
    agent_id TEXT NOT NULL DEFAULT 'default',
    generation_id BIGINT NOT NULL,
    embedded BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, generation_id)
);

INSERT INTO memory_counts (agent_id, live, pinned, deleted)
SELECT agent_id,
       COUNT(*) FILTER (WHERE is_deleted = 0),
       COUNT(*) FILTER (WHERE is_deleted = 0 AND pinned = 1),
       COUNT(*) FILTER (WHERE is_deleted = 1)
FROM memories GROUP BY agent_id;

INSERT INTO memory_vector_counts (agent_id, generation_id, embedded)
SELECT m.agent_id, e.generation_id, COUNT(*)
FROM embeddings e JOIN memories m ON m.id = e.source_id AND m.content_hash = e.content_hash
WHERE e.source_type = 'memory' AND m.is_deleted = 0
GROUP BY m.agent_id, e.generation_id;

-- memories: a row's contribution is (live, pinned, deleted) and one vector count per
-- generation holding its current vector; an update takes the old one away, adds the new.
CREATE FUNCTION memory_counts_ai() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_counts AS c (agent_id, live, pinned, deleted)
    VALUES (NEW.agent_id, (NEW.is_deleted = 0)::int,
            (NEW.is_deleted = 0 AND NEW.pinned = 1)::int, (NEW.is_deleted = 1)::int)
    ON CONFLICT (agent_id) DO UPDATE SET live = c.live + excluded.live,
        pinned = c.pinned + excluded.pinned, deleted = c.deleted + excluded.deleted;
    INSERT INTO memory_vector_counts AS v (agent_id, generation_id, embedded)
    SELECT NEW.agent_id, e.generation_id, 1 FROM embeddings e
    WHERE NEW.is_deleted = 0 AND e.source_type = 'memory' AND e.source_id = NEW.id
      AND e.content_hash = NEW.content_hash
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = v.embedded + 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_counts_ai AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_counts_ai();

CREATE FUNCTION memory_counts_ad() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_counts SET live = live - (OLD.is_deleted = 0)::int,
        pinned = pinned - (OLD.is_deleted = 0 AND OLD.pinned = 1)::int,
        deleted = deleted - (OLD.is_deleted = 1)::int
    WHERE agent_id = OLD.agent_id;
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE OLD.is_deleted = 0 AND agent_id = OLD.agent_id AND generation_id IN (
        SELECT e.generation_id FROM embeddings e
        WHERE e.source_type = 'memory' AND e.source_id = OLD.id
          AND e.content_hash = OLD.content_hash);
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_counts_ad AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_counts_ad();

CREATE FUNCTION memory_counts_au() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_counts SET live = live - (OLD.is_deleted = 0)::int,
        pinned = pinned - (OLD.is_deleted = 0 AND OLD.pinned = 1)::int,
        deleted = deleted - (OLD.is_deleted = 1)::int
    WHERE agent_id = OLD.agent_id;
    INSERT INTO memory_counts AS c (agent_id, live, pinned, deleted)
    VALUES (NEW.agent_id, (NEW.is_deleted = 0)::int,
            (NEW.is_deleted = 0 AND NEW.pinned = 1)::int, (NEW.is_deleted = 1)::int)
    ON CONFLICT (agent_id) DO UPDATE SET live = c.live + excluded.live,
        pinned = c.pinned + excluded.pinned, deleted = c.deleted + excluded.deleted;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_counts_au AFTER UPDATE OF is_deleted, pinned, agent_id ON memories
    FOR EACH ROW
    WHEN (OLD.is_deleted IS DISTINCT FROM NEW.is_deleted OR OLD.pinned IS DISTINCT FROM NEW.pinned
          OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
    EXECUTE FUNCTION memory_counts_au();

CREATE FUNCTION memory_vector_counts_au() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE OLD.is_deleted = 0 AND agent_id = OLD.agent_id AND generation_id IN (
        SELECT e.generation_id FROM embeddings e
        WHERE e.source_type = 'memory' AND e.source_id = OLD.id
          AND e.content_hash = OLD.content_hash);
    INSERT INTO memory_vector_counts AS v (agent_id, generation_id, embedded)
    SELECT NEW.agent_id, e.generation_id, 1 FROM embeddings e
    WHERE NEW.is_deleted = 0 AND e.source_type = 'memory' AND e.source_id = NEW.id
      AND e.content_hash = NEW.content_hash
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = v.embedded + 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_vector_counts_au
    AFTER UPDATE OF is_deleted, content_hash, agent_id ON memories
    FOR EACH ROW
    WHEN (OLD.is_deleted IS DISTINCT FROM NEW.is_deleted
          OR OLD.content_hash IS DISTINCT FROM NEW.content_hash
          OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
    EXECUTE FUNCTION memory_vector_counts_au();

-- embeddings: a vector counts when it is the current one of a live memory.
CREATE FUNCTION memory_vector_counts_ai() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_vector_counts AS v (agent_id, generation_id, embedded)
    SELECT m.agent_id, NEW.generation_id, 1 FROM memories m
    WHERE m.id = NEW.source_id AND m.content_hash = NEW.content_hash AND m.is_deleted = 0
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = v.embedded + 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_vector_counts_ai AFTER INSERT ON embeddings
    FOR EACH ROW WHEN (NEW.source_type = 'memory')
    EXECUTE FUNCTION memory_vector_counts_ai();

CREATE FUNCTION memory_vector_counts_ad() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE generation_id = OLD.generation_id AND agent_id IN (
        SELECT m.agent_id FROM memories m
        WHERE m.id = OLD.source_id AND m.content_hash = OLD.content_hash AND m.is_deleted = 0);
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_vector_counts_ad AFTER DELETE ON embeddings
    FOR EACH ROW WHEN (OLD.source_type = 'memory')
    EXECUTE FUNCTION memory_vector_counts_ad();

CREATE FUNCTION memory_vector_counts_eu() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_vector_counts SET embedded = embedded - 1
    WHERE OLD.source_type = 'memory' AND generation_id = OLD.generation_id AND agent_id IN (
        SELECT m.agent_id FROM memories m
        WHERE m.id = OLD.source_id AND m.content_hash = OLD.content_hash AND m.is_deleted = 0);
    INSERT INTO memory_vector_counts AS v (agent_id, generation_id, embedded)
    SELECT m.agent_id, NEW.generation_id, 1 FROM memories m
    WHERE NEW.source_type = 'memory' AND m.id = NEW.source_id
      AND m.content_hash = NEW.content_hash AND m.is_deleted = 0
    ON CONFLICT (agent_id, generation_id) DO UPDATE SET embedded = v.embedded + 1;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_vector_counts_eu
    AFTER UPDATE OF source_type, source_id, content_hash, generation_id ON embeddings
    FOR EACH ROW EXECUTE FUNCTION memory_vector_counts_eu();

-- One row per retention/maintenance run: when, why, what each step did (bounded JSON).
-- Process-wide, like the runner's bookkeeping: a run sweeps every agent.
CREATE TABLE maintenance_runs (
    id TEXT PRIMARY KEY,
    trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual')),
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    started_at TEXT NOT NULL,
    finished_at TEXT,
    steps_json JSONB NOT NULL DEFAULT '{}',
    error TEXT
);
CREATE INDEX idx_maintenance_runs_started ON maintenance_runs (started_at);
