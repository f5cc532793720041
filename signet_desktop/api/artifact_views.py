"""Wire shapes of the artifacts and MEMORY.md routes (`/api/artifacts*`, `/api/memory-md*`).

camelCase like the rest of our own routes; beside `views.py` as `hook_views.py` is.
"""

from __future__ import annotations

from typing import Any

from signet_desktop.domain.artifacts import Artifact, ReindexReport, RemovedSession
from signet_desktop.service.memory_md.service import RebuildOutcome


def artifact_json(artifact: Artifact) -> dict[str, Any]:
    """One indexed artifact without its body."""
    meta = artifact.meta
    return {
        "path": artifact.source_path,
        "kind": meta.kind,
        "agentId": meta.agent_id,
        "sessionKey": meta.session_key,
        "sessionToken": meta.session_token,
        "harness": meta.harness,
        "project": meta.project,
        "capturedAt": meta.captured_at,
        "startedAt": meta.started_at,
        "endedAt": meta.ended_at,
        "contentHash": artifact.content_hash,
    }


def reindex_json(report: ReindexReport) -> dict[str, Any]:
    return {
        "indexed": report.indexed,
        "removed": report.removed,
        "tombstoned": report.tombstoned,
        "unreadable": report.unreadable,
    }


def removed_session_json(removed: RemovedSession) -> dict[str, Any]:
    return {
        "sessionToken": removed.session_token,
        "rows": removed.rows,
        "files": list(removed.files),
    }


def rebuild_json(outcome: RebuildOutcome) -> dict[str, Any]:
    return {
        "agentId": outcome.agent_id,
        "path": outcome.path,
        "changed": outcome.changed,
        "bytes": outcome.size,
        "backup": outcome.backup,
        "asOf": outcome.as_of,
        "shown": outcome.shown,
        "withheld": outcome.withheld,
    }
