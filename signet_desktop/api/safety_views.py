"""Wire shape of the content-safety diagnostics route, beside `views.py` for the rest."""

from __future__ import annotations

from typing import Any

from signet_desktop.safety.policy import WITHHELD_MARKER
from signet_desktop.service.safety.service import SafetyStatus


def safety_status_json(status: SafetyStatus) -> dict[str, Any]:
    """GET /api/diagnostics/memory-safety (and Signet's /api/analytics/memory-safety path)."""
    return {
        "agentId": status.agent_id,
        "policyVersion": status.policy_version,
        "counts": dict(status.counts),
        "total": sum(status.counts.values()),
        "reasons": dict(status.reasons),
        "stale": status.stale,
        "pending": status.pending,
        "withheldMarker": WITHHELD_MARKER,
    }
