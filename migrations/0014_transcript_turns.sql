-- 0014: transcript turns as recallable evidence.
--
-- transcript_turns: one row per retained conversation turn (hook-captured or imported), written
-- in the same transaction as its session_transcripts row (storage/transcript_turns.py), so the
-- two cannot drift; deleting the session row (a removed import) deletes its turns by cascade.
-- `text` is the turn as indexed (bounded; the canonical JSONL keeps it whole).
-- transcript_turns_fts: BM25 over each turn with the Porter stemmer, like memories_fts.
-- transcript_turn_backfill: sessions retained before this migration whose turns are not
-- indexed yet. SQL cannot read the canonical JSONL (where the turns and their timestamps
-- live), so the transcripts service indexes these at start-up (`TranscriptService.recover`),
-- each session in one transaction with the removal of its backfill row.

CREATE TABLE transcript_turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_seq INTEGER NOT NULL REFERENCES session_transcripts (seq) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp TEXT,
    UNIQUE (session_seq, ordinal)
);

CREATE VIRTUAL TABLE transcript_turns_fts USING fts5(
    text,
    content = 'transcript_turns',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER transcript_turns_ai AFTER INSERT ON transcript_turns BEGIN
    INSERT INTO transcript_turns_fts (rowid, text) VALUES (new.seq, new.text);
END;

CREATE TRIGGER transcript_turns_ad AFTER DELETE ON transcript_turns BEGIN
    INSERT INTO transcript_turns_fts (transcript_turns_fts, rowid, text)
        VALUES ('delete', old.seq, old.text);
END;

CREATE TRIGGER transcript_turns_au AFTER UPDATE OF text ON transcript_turns BEGIN
    INSERT INTO transcript_turns_fts (transcript_turns_fts, rowid, text)
        VALUES ('delete', old.seq, old.text);
    INSERT INTO transcript_turns_fts (rowid, text) VALUES (new.seq, new.text);
END;

CREATE TABLE transcript_turn_backfill (
    session_seq INTEGER NOT NULL UNIQUE REFERENCES session_transcripts (seq) ON DELETE CASCADE
);

INSERT INTO transcript_turn_backfill (session_seq)
    SELECT seq FROM session_transcripts WHERE content <> '' OR turn_count > 0;
