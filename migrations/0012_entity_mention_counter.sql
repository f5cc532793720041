-- entities.mentions follows memory_entity_mentions: triggers keep the counter in the writing
-- transaction (a link written at remember time, a merge repointing mentions, a purge or a
-- cascade removing them), and the existing counters are recounted once here.

CREATE TRIGGER memory_entity_mentions_count_ai AFTER INSERT ON memory_entity_mentions
BEGIN
    UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
END;

CREATE TRIGGER memory_entity_mentions_count_ad AFTER DELETE ON memory_entity_mentions
BEGIN
    UPDATE entities SET mentions = MAX(mentions - 1, 0) WHERE id = OLD.entity_id;
END;

CREATE TRIGGER memory_entity_mentions_count_au AFTER UPDATE OF entity_id ON memory_entity_mentions
WHEN OLD.entity_id <> NEW.entity_id
BEGIN
    UPDATE entities SET mentions = MAX(mentions - 1, 0) WHERE id = OLD.entity_id;
    UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
END;

UPDATE entities SET mentions = (
    SELECT COUNT(*) FROM memory_entity_mentions m WHERE m.entity_id = entities.id
);
