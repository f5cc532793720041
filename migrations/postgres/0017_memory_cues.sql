-- PostgreSQL rendering of migrations/0017_memory_cues.sql: what a memory's text says about
-- time and preference, read once at write time; the same columns, rules, cascade and index
-- (`times` is jsonb).
--
-- memory_cues: one row per memory whose text was read (storage/memory_cues.py), written in
-- the same transaction as the memory (remember, import, a content edit). `times` is a JSON
-- list of [expression, first day, last day]: each time expression of the text resolved
-- against the memory's own created_at ("yesterday" said on 2023-05-08 -> 2023-05-07);
-- `first_day`/`last_day` bound them all (NULL: no time expression). `preference` is the
-- phrase stating a preference, habit or decision ("I prefer", "my favourite", "we decided"),
-- or NULL. `first_person`: whether the text speaks mostly in the first person (its speaker
-- about themselves). `content_hash` is the text it was read from: a row whose hash no longer
-- matches its memory is stale and ignored (recall reads that memory's text instead).

CREATE TABLE memory_cues (
    memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    agent_id TEXT NOT NULL DEFAULT 'default',
    content_hash TEXT NOT NULL,
    times JSONB NOT NULL DEFAULT '[]',
    first_day TEXT,
    last_day TEXT,
    preference TEXT,
    first_person INTEGER NOT NULL DEFAULT 0 CHECK (first_person IN (0, 1))
);
-- agent_id leads, as in every scoped table; then the days, for reads by time range.
CREATE INDEX idx_memory_cues_agent ON memory_cues (agent_id, first_day);
