-- PostgreSQL rendering of migrations/0014_transcript_turns.sql: transcript turns as
-- recallable evidence, with the same tables, constraints and cascade, and the same backfill
-- rows. Differences by dialect: the FTS5 table over turns and its sync triggers are the
-- generated tsvector column `text_tsv` with a GIN index, stemmed as memories' full text is
-- (`signet_porter`, 0006); `seq` is an identity.
--
-- transcript_turns: one row per retained conversation turn, written in the same transaction
-- as its session_transcripts row (storage/transcript_turns.py); deleting the session row
-- deletes its turns by cascade. transcript_turn_backfill: sessions retained before this
-- migration whose turns are not indexed yet (the transcripts service indexes them at start).

CREATE TABLE transcript_turns (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_seq BIGINT NOT NULL REFERENCES session_transcripts (seq) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp TEXT,
    text_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('signet_porter', fts_words(text))) STORED,
    UNIQUE (session_seq, ordinal)
);
CREATE INDEX idx_transcript_turns_text_tsv ON transcript_turns USING GIN (text_tsv);

CREATE TABLE transcript_turn_backfill (
    session_seq BIGINT NOT NULL UNIQUE REFERENCES session_transcripts (seq) ON DELETE CASCADE
);

INSERT INTO transcript_turn_backfill (session_seq)
    SELECT seq FROM session_transcripts WHERE content <> '' OR turn_count > 0;
