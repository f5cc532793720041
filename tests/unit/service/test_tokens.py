"""TokenService: the secret is shown once and stored as a hash; names, bindings, lifetimes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from signet_desktop.domain.errors import Conflict, InvalidInput, NotFound
from signet_desktop.domain.tokens import secret_hash
from signet_desktop.service.tokens import TokenService
from signet_desktop.storage.database import Database, open_database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "memories.db", with_vec=False)
    yield database
    database.close()


def _rows(db: Database) -> list[tuple[object, ...]]:
    return [tuple(row) for row in db.reader().execute("SELECT * FROM api_tokens").fetchall()]


def _lifetime(created: str, expires: str) -> float:
    start = datetime.fromisoformat(created.replace("Z", "+00:00"))
    return (datetime.fromisoformat(expires.replace("Z", "+00:00")) - start).total_seconds()


def test_the_secret_is_returned_once_and_only_its_hash_is_stored(db: Database) -> None:
    tokens = TokenService(db)
    issued = tokens.create(tokens.spec("ci", ["read"], ["work"]))
    assert issued.secret.startswith("sgt_") and len(issued.secret) > 40
    stored = repr(_rows(db))
    assert issued.secret not in stored and secret_hash(issued.secret) in stored
    found = tokens.find(issued.secret)
    assert found is not None and found.id == issued.token.id
    assert found.permissions == {"read"} and found.agents == {"work"}
    assert tokens.find(issued.secret + "x") is None and tokens.find("") is None


def test_lifetimes_come_from_the_configured_ttls(db: Database) -> None:
    tokens = TokenService(db, default_ttl_seconds=3600, session_ttl_seconds=120)
    api = tokens.create(tokens.spec("api", ["write"], ["a"])).token
    session = tokens.create(tokens.spec("sess", ["read"], ["a"], session=True)).token
    chosen = tokens.create(tokens.spec("own", ["read"], ["a"], ttl_seconds=86_400)).token
    assert _lifetime(api.created_at, api.expires_at) == 3600 and api.kind == "api"
    assert _lifetime(session.created_at, session.expires_at) == 120
    assert session.kind == "session"
    assert _lifetime(chosen.created_at, chosen.expires_at) == 86_400
    assert api.state(api.created_at) == "active"
    assert api.state(api.expires_at) == "expired"


def test_revoke_by_name_or_id_is_idempotent_and_kept(db: Database) -> None:
    tokens = TokenService(db)
    first = tokens.create(tokens.spec("one", ["read"], ["a"])).token
    second = tokens.create(tokens.spec("two", ["read"], ["a"])).token
    revoked = tokens.revoke("one")
    assert revoked.id == first.id and revoked.revoked_at is not None
    assert tokens.revoke(first.id).revoked_at == revoked.revoked_at  # idempotent
    assert tokens.revoke(second.id).state(second.created_at) == "revoked"
    assert [t.name for t in tokens.list()] == ["one", "two"]  # never deleted
    with pytest.raises(NotFound):
        tokens.revoke("three")


def test_a_name_is_never_reused(db: Database) -> None:
    tokens = TokenService(db)
    tokens.create(tokens.spec("once", ["read"], ["a"]))
    tokens.revoke("once")
    with pytest.raises(Conflict) as refused:
        tokens.create(tokens.spec("once", ["read"], ["a"]))
    assert refused.value.code == "token_name_taken"
    assert len(_rows(db)) == 1


@pytest.mark.parametrize(
    ("name", "permissions", "agents", "ttl", "code"),
    [
        ("bad name", ["read"], ["a"], None, "token_name_invalid"),
        ("", ["read"], ["a"], None, "token_name_invalid"),
        ("x", [], ["a"], None, "token_permission_invalid"),
        ("x", ["root"], ["a"], None, "token_permission_invalid"),
        ("x", ["read"], [], None, "token_agents_invalid"),
        ("x", ["read"], ["a b"], None, "agent_id_invalid"),
        ("x", ["read"], ["a"], 59, "token_ttl_invalid"),
        ("x", ["read"], ["a"], 31_536_001, "token_ttl_invalid"),
        ("x", ["read"], ["a"], True, "token_ttl_invalid"),
    ],
)
def test_bad_requests_are_refused_with_a_code(
    db: Database, name: str, permissions: list[str], agents: list[str], ttl: object, code: str
) -> None:
    tokens = TokenService(db)
    with pytest.raises(InvalidInput) as refused:
        tokens.spec(name, permissions, agents, ttl_seconds=ttl)
    assert refused.value.code == code
    assert _rows(db) == []
