-- 0015: scoped API tokens (`signet token create|list|revoke`, POST/GET/DELETE /api/tokens).
--
-- api_tokens: one row per issued token. The secret is shown once at creation and never
-- stored: `secret_hash` is the SHA-256 (hex) of the whole bearer string, which is 256 bits of
-- randomness, so a fast hash is enough and the gate finds a token by its hash alone.
-- `permissions_json` is a non-empty array of read|write|admin; `agents_json` a non-empty array
-- of the agent ids the token may act for. `kind` 'session' marks a token issued for one harness session
-- (its default lifetime is auth.sessionTokenTtlSeconds instead of auth.defaultTokenTtlSeconds).
-- A token is never deleted: revocation sets `revoked_at`, so the row is the audit of what it
-- could do. The table has no agent_id: a token names one or more agents and belongs to none.

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    secret_hash TEXT NOT NULL UNIQUE CHECK (length(secret_hash) = 64),
    kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'session')),
    permissions_json TEXT NOT NULL
        CHECK (json_valid(permissions_json) AND json_type(permissions_json) = 'array'
               AND json_array_length(permissions_json) >= 1),
    agents_json TEXT NOT NULL
        CHECK (json_valid(agents_json) AND json_type(agents_json) = 'array'
               AND json_array_length(agents_json) >= 1),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL CHECK (expires_at > created_at),
    revoked_at TEXT
);
