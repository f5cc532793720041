"""Scoped API tokens: what one may do (permissions, agents) and until when.

A token is a bearer string shown once at creation; only its SHA-256 is kept. Each token holds
one or more of the permissions `read` (every read route and read-only MCP tool), `write`
(mutations) and `admin` (pipeline, repair, maintenance, token routes), is bound to one or more
agents, and expires (`auth.defaultTokenTtlSeconds`, or
`auth.sessionTokenTtlSeconds` for a session token) unless revoked first.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from signet_desktop.domain.errors import InvalidInput, check_match
from signet_desktop.domain.scope import check_agent_id

TokenPermission = Literal["read", "write", "admin"]
TokenKind = Literal["api", "session"]
PERMISSIONS: tuple[TokenPermission, ...] = ("read", "write", "admin")
TOKEN_PREFIX = "sgt_"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MAX_BINDINGS = 64
MIN_TTL_SECONDS = 60
MAX_TTL_SECONDS = 31_536_000  # one year, as the auth.*TokenTtlSeconds bounds


@dataclass(frozen=True, slots=True)
class ApiToken:
    """One issued token as stored (never its secret)."""

    id: str
    name: str
    kind: TokenKind
    permissions: frozenset[TokenPermission]
    agents: frozenset[str]
    created_at: str
    expires_at: str
    revoked_at: str | None = None

    def state(self, now: str) -> Literal["active", "expired", "revoked"]:
        """`revoked` beats `expired`; both are refused by the request gate."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at <= now else "active"


@dataclass(frozen=True, slots=True)
class TokenSpec:
    """A checked request for a new token."""

    name: str
    kind: TokenKind
    permissions: frozenset[TokenPermission]
    agents: frozenset[str]
    ttl_seconds: int


def new_secret() -> str:
    """A fresh bearer string: `sgt_` and 256 random bits, URL-safe."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    """The stored form of a bearer string (hex SHA-256)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def expiry(created_at: str, ttl_seconds: int) -> str:
    """`created_at` (our ISO-8601 Z form) plus `ttl_seconds`, in the same form."""
    start = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    end = (start + timedelta(seconds=ttl_seconds)).astimezone(UTC)
    return end.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_name(name: object) -> str:
    """A token name: 1-64 of letters, digits and `. _ -`, starting alphanumeric."""
    return check_match(
        name,
        NAME_PATTERN,
        "name must be 1-64 characters of letters, digits and . _ -, starting with a "
        "letter or digit",
        "token_name_invalid",
    )


def check_permissions(values: Iterable[object]) -> frozenset[TokenPermission]:
    """At least one of read, write, admin."""
    found: set[TokenPermission] = set()
    for value in values:
        if value not in PERMISSIONS:
            raise InvalidInput(
                f"permission {value!r} is not one of read, write, admin",
                code="token_permission_invalid",
            )
        found.add(value)  # checked against PERMISSIONS above
    if not found:
        raise InvalidInput(
            "permissions: name at least one of read, write, admin", code="token_permission_invalid"
        )
    return frozenset(found)


def check_agents(values: Iterable[object]) -> frozenset[str]:
    """One or more valid agent ids (at most 64)."""
    agents = frozenset(check_agent_id(value) for value in values)
    if not agents or len(agents) > MAX_BINDINGS:
        raise InvalidInput(
            f"agents: bind the token to 1-{MAX_BINDINGS} agents", code="token_agents_invalid"
        )
    return agents


def check_ttl(ttl_seconds: object) -> int:
    """A lifetime between one minute and one year, in seconds."""
    if (
        isinstance(ttl_seconds, bool)
        or not isinstance(ttl_seconds, int)
        or not (MIN_TTL_SECONDS <= ttl_seconds <= MAX_TTL_SECONDS)
    ):
        raise InvalidInput(
            f"ttlSeconds must be a whole number from {MIN_TTL_SECONDS} to {MAX_TTL_SECONDS}",
            code="token_ttl_invalid",
        )
    return ttl_seconds
