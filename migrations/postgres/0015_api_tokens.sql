-- PostgreSQL rendering of migrations/0015_api_tokens.sql: scoped API tokens, the same
-- columns and rules. Differences by dialect: the two JSON arrays are jsonb, checked to be
-- non-empty arrays (jsonb_array_length raises on a non-array, so the CASE asks the type
-- first); the expiry is compared byte-wise (COLLATE "C"), as SQLite compares the ISO-8601
-- text whatever the database's collation.

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    secret_hash TEXT NOT NULL UNIQUE CHECK (length(secret_hash) = 64),
    kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'session')),
    permissions_json JSONB NOT NULL
        CHECK (CASE WHEN jsonb_typeof(permissions_json) = 'array'
                    THEN jsonb_array_length(permissions_json) >= 1 ELSE false END),
    agents_json JSONB NOT NULL
        CHECK (CASE WHEN jsonb_typeof(agents_json) = 'array'
                    THEN jsonb_array_length(agents_json) >= 1 ELSE false END),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL CHECK (expires_at COLLATE "C" > created_at COLLATE "C"),
    revoked_at TEXT
);
