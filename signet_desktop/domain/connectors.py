"""Connector values: a registered external source (a folder so far) and what a sync did."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROVIDER_FILESYSTEM = "filesystem"  # Signet's name for a folder connector


@dataclass(frozen=True, slots=True)
class Connector:
    """One `connectors` row: config (path, globs, excludes, watch) and sync state."""

    id: str
    agent_id: str
    provider: str
    display_name: str
    config: Mapping[str, Any]
    cursor: Mapping[str, Any] | None
    status: str  # idle | syncing | error | disabled
    last_sync_at: str | None
    last_error: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class SyncReport:
    """One sync of a connector: files seen and what happened to their documents."""

    connector_id: str
    full: bool
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    read_files: int = 0
    truncated: bool = False
    elapsed_s: float = 0.0
    errors: tuple[str, ...] = ()
    skipped_reasons: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConnectorHealth:
    """GET /api/connectors/{id}/health: the connector, its folder and its documents."""

    connector: Connector
    root_readable: bool
    files: int
    documents: Mapping[str, int]
    last_sync: SyncReport | None = None  # this process's latest sync of it


@dataclass(frozen=True, slots=True)
class DisconnectReport:
    """What removing a connector did: its documents deleted (their chunks forgotten)."""

    connector_id: str
    documents_deleted: int
    chunks_forgotten: int
