"""Issue, list, revoke and authenticate scoped API tokens (docs/HTTP.md, "Scoped tokens").

The secret is returned once by `create` and never again; the database keeps its hash. Expiry
defaults come from agent.yaml `auth.defaultTokenTtlSeconds` (API tokens) and
`auth.sessionTokenTtlSeconds` (session tokens: one harness session's credential).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from signet_desktop.domain.errors import Conflict, NotFound
from signet_desktop.domain.memory import utc_now
from signet_desktop.domain.tokens import (
    ApiToken,
    TokenKind,
    TokenSpec,
    check_agents,
    check_name,
    check_permissions,
    check_ttl,
    expiry,
    new_secret,
    secret_hash,
)
from signet_desktop.storage import tokens as rows
from signet_desktop.storage.handle import DatabaseHandle

DEFAULT_TTL_SECONDS = 604_800  # Signet's auth.defaultTokenTtlSeconds
SESSION_TTL_SECONDS = 86_400  # Signet's auth.sessionTokenTtlSeconds


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token and its secret: the only time the secret exists outside the caller."""

    token: ApiToken
    secret: str


class TokenService:
    """The token table behind the request gate and the /api/tokens routes."""

    def __init__(
        self,
        db: DatabaseHandle,
        *,
        default_ttl_seconds: int = DEFAULT_TTL_SECONDS,
        session_ttl_seconds: int = SESSION_TTL_SECONDS,
    ) -> None:
        self._db = db
        self._ttl: dict[TokenKind, int] = {
            "api": check_ttl(default_ttl_seconds),
            "session": check_ttl(session_ttl_seconds),
        }

    def spec(
        self,
        name: object,
        permissions: Iterable[object],
        agents: Iterable[object],
        *,
        ttl_seconds: object | None = None,
        session: bool = False,
    ) -> TokenSpec:
        """A checked request; the kind's configured lifetime when `ttl_seconds` is None."""
        kind: TokenKind = "session" if session else "api"
        return TokenSpec(
            name=check_name(name),
            kind=kind,
            permissions=check_permissions(permissions),
            agents=check_agents(agents),
            ttl_seconds=self._ttl[kind] if ttl_seconds is None else check_ttl(ttl_seconds),
        )

    def create(self, spec: TokenSpec) -> IssuedToken:
        """Store a new token; 409 `token_name_taken` when the name was ever used."""
        secret = new_secret()
        now = utc_now()
        token = ApiToken(
            id=str(uuid.uuid4()),
            name=spec.name,
            kind=spec.kind,
            permissions=spec.permissions,
            agents=spec.agents,
            created_at=now,
            expires_at=expiry(now, spec.ttl_seconds),
        )
        with self._db.write() as conn:
            if rows.name_taken(conn, spec.name):
                raise Conflict(
                    f"a token named {spec.name!r} already exists (names are never reused)",
                    code="token_name_taken",
                )
            rows.insert_token(conn, token, secret_hash(secret))
        return IssuedToken(token, secret)

    def list(self) -> list[ApiToken]:
        """Every token ever issued (never a secret), oldest first."""
        return rows.list_tokens(self._db.reader())

    def get(self, ref: str) -> ApiToken:
        """The token with this id, else this name; 404 `token_not_found` for neither."""
        token = rows.token_by_ref(self._db.reader(), ref)
        if token is None:
            raise NotFound(f"no token with id or name {ref!r}", code="token_not_found")
        return token

    def revoke(self, ref: str) -> ApiToken:
        """Revoke by id or name (idempotent); 404 `token_not_found` for neither."""
        with self._db.write() as conn:
            token = rows.token_by_ref(conn, ref)
            if token is None:
                raise NotFound(f"no token with id or name {ref!r}", code="token_not_found")
            rows.revoke_token(conn, token.id, utc_now())
            revoked = rows.token_by_ref(conn, token.id)
        assert revoked is not None  # the row was just read in this transaction
        return revoked

    def find(self, secret: str) -> ApiToken | None:
        """The token this bearer string belongs to (whatever its state), or None."""
        if not secret:
            return None
        return rows.token_by_hash(self._db.reader(), secret_hash(secret))

    @staticmethod
    def now() -> str:
        """The clock the gate compares `expires_at` against."""
        return utc_now()
