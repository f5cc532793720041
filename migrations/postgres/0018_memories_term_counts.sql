-- PostgreSQL rendering of migrations/0018_memories_term_counts.sql: each memory's term
-- frequencies and length stored beside its tsvector, so that the lexical channel's BM25
-- (recall/lexical.py: `ts_bm25_statement`) reads a matching row's numbers by key instead of
-- unnesting its tsvector (about half the statement's time when a query word is in thousands
-- of rows).
--
-- content_terms: every lexeme of the row's tsvector (the same parse as content_tsv,
-- migrations/postgres/0006) with its positions counted: what FTS5 calls the term's frequency
-- in the row (a tsvector keeps 256 positions of a lexeme at most, as content_tsv does).
-- content_tokens: the sum of those counts, the row's length in tokens as FTS5 counts it.
-- A generated column cannot read another, so each parses the content itself. Adding them
-- computes every row (the table is rewritten once).

CREATE FUNCTION tsvector_term_counts(tsvector) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (
        SELECT COALESCE(jsonb_object_agg(u.lexeme, cardinality(u.positions)), CAST('{}' AS jsonb))
        FROM unnest($1) AS u
    );

CREATE FUNCTION tsvector_token_count(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT COALESCE(SUM(cardinality(u.positions)), 0)::integer FROM unnest($1) AS u);

ALTER TABLE memories
    ADD COLUMN content_terms JSONB GENERATED ALWAYS AS (
        tsvector_term_counts(to_tsvector('signet_porter', fts_words(content)))) STORED,
    ADD COLUMN content_tokens INTEGER GENERATED ALWAYS AS (
        tsvector_token_count(to_tsvector('signet_porter', fts_words(content)))) STORED;
