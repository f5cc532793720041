"""api_tokens: issued scoped tokens by id, name and secret hash (migrations/0015).

The owner of that table. Rows are never deleted: revoking sets `revoked_at`, so the table is
the audit of every token ever issued and what it could do.
"""

from __future__ import annotations

import json
from typing import Any

from signet_desktop.domain.tokens import ApiToken
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dialect import is_postgres
from signet_desktop.storage.rows import from_row

COLUMNS = "id, name, kind, permissions_json, agents_json, created_at, expires_at, revoked_at"
INSERT = """
INSERT INTO api_tokens (id, name, secret_hash, kind, permissions_json, agents_json,
                        created_at, expires_at)
VALUES (:id, :name, :hash, :kind, :permissions, :agents, :created_at, :expires_at)
"""
BY_HASH = f"SELECT {COLUMNS} FROM api_tokens WHERE secret_hash = :hash"
BY_REF = f"SELECT {COLUMNS} FROM api_tokens WHERE id = :ref OR name = :ref ORDER BY id = :ref DESC"
NAME_TAKEN = "SELECT 1 FROM api_tokens WHERE name = :name"
LIST = f"SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, rowid"  # issue order
# PostgreSQL has no rowid: tokens issued in the same microsecond order by id.
LIST_PG = f"SELECT {COLUMNS} FROM api_tokens ORDER BY created_at, id"
REVOKE = "UPDATE api_tokens SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL"


def _token(row: Any) -> ApiToken:
    return from_row(
        ApiToken,
        row,
        permissions=frozenset(json.loads(row["permissions_json"])),
        agents=frozenset(json.loads(row["agents_json"])),
    )


def insert_token(conn: Connection, token: ApiToken, hash_: str) -> None:
    """Store a new token (its secret's hash, never the secret)."""
    conn.execute(
        INSERT,
        {
            "id": token.id,
            "name": token.name,
            "hash": hash_,
            "kind": token.kind,
            "permissions": json.dumps(sorted(token.permissions)),
            "agents": json.dumps(sorted(token.agents)),
            "created_at": token.created_at,
            "expires_at": token.expires_at,
        },
    )


def name_taken(conn: Connection, name: str) -> bool:
    """A token (live or not) already has this name."""
    return conn.execute(NAME_TAKEN, {"name": name}).fetchone() is not None


def token_by_hash(conn: Connection, hash_: str) -> ApiToken | None:
    """The token whose secret hashes to `hash_`."""
    row = conn.execute(BY_HASH, {"hash": hash_}).fetchone()
    return None if row is None else _token(row)


def token_by_ref(conn: Connection, ref: str) -> ApiToken | None:
    """The token with this id, else the one with this name."""
    row = conn.execute(BY_REF, {"ref": ref}).fetchone()
    return None if row is None else _token(row)


def list_tokens(conn: Connection) -> list[ApiToken]:
    """Every token ever issued, oldest first."""
    return [_token(row) for row in conn.execute(LIST_PG if is_postgres(conn) else LIST).fetchall()]


def revoke_token(conn: Connection, token_id: str, now: str) -> bool:
    """Mark the token revoked; False when it already was."""
    return conn.execute(REVOKE, {"id": token_id, "now": now}).rowcount == 1
