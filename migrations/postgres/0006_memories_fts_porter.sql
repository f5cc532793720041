-- PostgreSQL rendering of migrations/0006_memories_fts_porter.sql: memories' full text is
-- rebuilt with the Porter stemmer, so that "researched" finds "research". `signet_porter` is
-- `signet_unicode61` (0002: lowercased, accents folded, over `fts_words`' letter-and-digit
-- runs) with every word stemmed by Snowball's original Porter stemmer and no stop words, as
-- FTS5's 'porter unicode61 remove_diacritics 2'.
-- The generated column is rebuilt in place of SQLite's triggers and rebuild: dropping it
-- drops its GIN index, adding it computes every row.

CREATE TEXT SEARCH DICTIONARY signet_porter_stem (TEMPLATE = snowball, Language = porter);

CREATE TEXT SEARCH CONFIGURATION signet_porter (COPY = signet_unicode61);
ALTER TEXT SEARCH CONFIGURATION signet_porter
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH signet_porter_stem;
ALTER TEXT SEARCH CONFIGURATION signet_porter
    ALTER MAPPING FOR word, hword, hword_part WITH unaccent, signet_porter_stem;

ALTER TABLE memories DROP COLUMN content_tsv;
ALTER TABLE memories ADD COLUMN content_tsv TSVECTOR
    GENERATED ALWAYS AS (to_tsvector('signet_porter', fts_words(content))) STORED;
CREATE INDEX idx_memories_content_tsv ON memories USING GIN (content_tsv);
