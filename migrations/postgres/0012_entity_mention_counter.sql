-- PostgreSQL rendering of migrations/0012_entity_mention_counter.sql: entities.mentions
-- follows memory_entity_mentions, kept by the same three row triggers in the writing
-- transaction (plpgsql functions of the triggers' names; GREATEST for SQLite's two-argument
-- MAX), and the existing counters are recounted once here.

CREATE FUNCTION memory_entity_mentions_count_ai() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_entity_mentions_count_ai AFTER INSERT ON memory_entity_mentions
    FOR EACH ROW EXECUTE FUNCTION memory_entity_mentions_count_ai();

CREATE FUNCTION memory_entity_mentions_count_ad() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE entities SET mentions = GREATEST(mentions - 1, 0) WHERE id = OLD.entity_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_entity_mentions_count_ad AFTER DELETE ON memory_entity_mentions
    FOR EACH ROW EXECUTE FUNCTION memory_entity_mentions_count_ad();

CREATE FUNCTION memory_entity_mentions_count_au() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE entities SET mentions = GREATEST(mentions - 1, 0) WHERE id = OLD.entity_id;
    UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_entity_mentions_count_au
    AFTER UPDATE OF entity_id ON memory_entity_mentions
    FOR EACH ROW WHEN (OLD.entity_id <> NEW.entity_id)
    EXECUTE FUNCTION memory_entity_mentions_count_au();

UPDATE entities SET mentions = (
    SELECT COUNT(*) FROM memory_entity_mentions m WHERE m.entity_id = entities.id
);
