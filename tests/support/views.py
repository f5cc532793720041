"""Facade results rendered as a client sees them, for tests that assert on wire fields."""

from __future__ import annotations

from typing import Any

from signet_desktop.api.views import embedding_audit_json, service_status_json
from signet_desktop.service.facade import SignetService


def audit_json(service: SignetService) -> dict[str, Any]:
    """What GET /api/embeddings/status would answer."""
    return embedding_audit_json(service.embeddings.audit())


def status_json(service: SignetService) -> dict[str, Any]:
    """The service's part of GET /api/status."""
    return service_status_json(service.status())
