"""Wire shapes of /api/connectors (Signet's connector field names).

/api/maintenance answers its runs as the status board does (`service.retention.run_fact`).
"""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.connectors import (
    Connector,
    ConnectorHealth,
    DisconnectReport,
    SyncReport,
)


def connector_json(connector: Connector) -> dict[str, Any]:
    """One connector: Signet's columns, the folder settings in camelCase, no cursor body."""
    config = connector.config
    files = (connector.cursor or {}).get("files") or {}
    return {
        "id": connector.id,
        "agentId": connector.agent_id,
        "provider": connector.provider,
        "displayName": connector.display_name,
        "settings": {
            "rootPath": config.get("path"),
            "patterns": list(config.get("globs") or ()),
            "ignorePatterns": list(config.get("excludes") or ()),
            "watch": bool(config.get("watch")),
        },
        "status": connector.status,
        "lastSyncAt": connector.last_sync_at,
        "lastError": connector.last_error,
        "files": len(files),
        "createdAt": connector.created_at,
        "updatedAt": connector.updated_at,
    }


def health_json(health: ConnectorHealth) -> dict[str, Any]:
    """GET /api/connectors/{id}/health."""
    connector = health.connector
    healthy = connector.status in ("idle", "syncing") and health.root_readable
    return {
        "id": connector.id,
        "status": connector.status,
        "healthy": healthy,
        "rootReadable": health.root_readable,
        "files": health.files,
        "documents": dict(health.documents),
        "lastSyncAt": connector.last_sync_at,
        "lastError": connector.last_error,
        "lastSync": None if health.last_sync is None else sync_json(health.last_sync),
    }


def sync_json(report: SyncReport) -> dict[str, Any]:
    """A finished sync's counters."""
    return {
        "connectorId": report.connector_id,
        "full": report.full,
        "added": report.added,
        "changed": report.changed,
        "removed": report.removed,
        "unchanged": report.unchanged,
        "skipped": report.skipped,
        "skippedReasons": dict(report.skipped_reasons),
        "failed": report.failed,
        "readFiles": report.read_files,
        "truncated": report.truncated,
        "elapsedMs": round(report.elapsed_s * 1000, 1),
        "errors": list(report.errors),
    }


def disconnect_json(report: DisconnectReport) -> dict[str, Any]:
    """DELETE /api/connectors/{id}."""
    return {
        "id": report.connector_id,
        "removed": True,
        "documentsDeleted": report.documents_deleted,
        "chunksForgotten": report.chunks_forgotten,
    }
