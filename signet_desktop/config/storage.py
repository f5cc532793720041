"""`storage.*` of agent.yaml: which database holds the memories (`storage.url`)."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import field_validator

from signet_desktop.config.base import ConfigModel

SQLITE_URL = "sqlite:"
POSTGRES_SCHEMES = ("postgresql", "postgres")
# Said once at start on PostgreSQL: what is proven there, and what is not yet (ARCHITECTURE §19).
POSTGRES_PREVIEW = (
    "PostgreSQL store (preview): memories, recall, hooks, transcripts, tokens, documents, "
    "sources, imports, the ontology and Dreaming are tested on it, one daemon or several; "
    "docs/TEAM.md lists what is not done yet"
)


StorageBackend = Literal["sqlite", "postgresql"]


class StorageConfig(ConfigModel):
    """`storage`: `url` is `sqlite:` (the workspace's own database file, the default) or a
    `postgresql://host[:port]/database` URL. A password never goes in the URL (agent.yaml is
    shown back by the status routes): libpq reads it from PGPASSWORD or ~/.pgpass."""

    url: str = SQLITE_URL

    @field_validator("url")
    @classmethod
    def _known_url(cls, url: str) -> str:
        url = url.strip()
        if url == SQLITE_URL:
            return url
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme not in POSTGRES_SCHEMES:
            raise ValueError(
                f"must be {SQLITE_URL!r} or a postgresql://host/database URL, not {url!r}"
            )
        check_postgres_url(url)
        return url

    @property
    def backend(self) -> StorageBackend:
        """Which implementation the URL chooses."""
        return "sqlite" if self.url == SQLITE_URL else "postgresql"


def check_postgres_url(url: str) -> None:
    """Refuse a PostgreSQL URL without a database, with a bad port, or with a password."""
    parts = urlsplit(url)
    try:
        port = parts.port  # raises on a port that is not a number in range
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"{url!r} has a port that is not a number from 1 to 65535")
    if parts.password is not None:
        raise ValueError(
            "a PostgreSQL URL must not carry a password (agent.yaml is shown back by the "
            "status routes); set PGPASSWORD or use ~/.pgpass"
        )
    database = parts.path.lstrip("/")
    if not database or "/" in database or any(c.isspace() for c in database):
        raise ValueError(f"{url!r} must name one database: postgresql://host[:port]/database")
